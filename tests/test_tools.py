"""Toolbox: registration order, and every bad call turned into an error result instead of a crash."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from tiny_agent.tools.toolbox import INVALID_JSON_KEY, Tool, Toolbox, ToolFailure
from tiny_agent.types import ToolSpec, ToolUseBlock

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
    "required": ["path", "content"],
    "additionalProperties": False,
}


def _save(args: dict[str, Any]) -> str:
    return f"saved {args['path']}"


def _refuse(args: dict[str, Any]) -> str:
    raise ToolFailure("refused: that file is protected")


def _crash(args: dict[str, Any]) -> str:
    return str(1 // 0)


def make_toolbox() -> Toolbox:
    return Toolbox(
        [
            Tool("save", "Save a file.", SCHEMA, _save),
            Tool("refuse", "Always refuses.", SCHEMA, _refuse),
            Tool("crash", "Always crashes.", SCHEMA, _crash),
        ]
    )


def call(name: str, **args: Any) -> ToolUseBlock:
    return ToolUseBlock("call_1", name, args)


def test_tool_spec() -> None:
    assert Tool("save", "Save a file.", SCHEMA, _save).spec == ToolSpec("save", "Save a file.", SCHEMA)


def test_specs_keep_registration_order() -> None:
    assert [s.name for s in make_toolbox().specs] == ["save", "refuse", "crash"]
    assert make_toolbox().specs == make_toolbox().specs


def test_duplicate_name_is_rejected() -> None:
    toolbox = make_toolbox()
    with pytest.raises(ValueError, match="duplicate tool name: 'save'"):
        toolbox.add(Tool("save", "Again.", SCHEMA, _save))
    assert len(toolbox) == 3


def test_success() -> None:
    result = make_toolbox().run(call("save", path="a.txt", content="x"))
    assert result.tool_use_id == "call_1"
    assert not result.is_error
    assert result.content == "saved a.txt"


def test_unknown_tool_names_the_available_ones() -> None:
    result = make_toolbox().run(call("delete", path="a.txt"))
    assert result.is_error
    assert result.tool_use_id == "call_1"
    assert result.content == "unknown tool 'delete'; available tools: save, refuse, crash"


def test_wrong_argument_type() -> None:
    result = make_toolbox().run(call("save", path=5, content="x"))
    assert result.is_error
    assert result.content.startswith("invalid arguments for save:")
    assert "path: 5 is not of type 'string'" in result.content


def test_missing_arguments_are_all_reported() -> None:
    result = make_toolbox().run(call("save"))
    assert result.is_error
    assert result.content.startswith("invalid arguments for save:")
    assert "path: 'path' is a required property" in result.content
    assert "content: 'content' is a required property" in result.content


def test_all_errors_are_collected() -> None:
    result = make_toolbox().run(call("save", path=5, content=6))
    assert "path: 5 is not of type 'string'" in result.content
    assert "content: 6 is not of type 'string'" in result.content


def test_extra_unknown_argument() -> None:
    result = make_toolbox().run(call("save", path="a.txt", content="x", mode="append"))
    assert result.is_error
    assert result.content.startswith("invalid arguments for save:")
    assert "mode: unexpected argument (allowed: path, content)" in result.content


def test_invalid_json_marker() -> None:
    raw = '{"path": "a.txt", "content": "unterminated' + "x" * 1000
    result = make_toolbox().run(ToolUseBlock("call_1", "save", {INVALID_JSON_KEY: raw}))
    assert result.is_error
    assert result.content.startswith('arguments were not valid JSON: {"path": "a.txt"')
    assert "more characters" in result.content
    assert len(result.content) < 400


def test_tool_failure_message_goes_to_the_model() -> None:
    result = make_toolbox().run(call("refuse", path="a.txt", content="x"))
    assert result.is_error
    assert result.content == "refused: that file is protected"


def test_unexpected_exception_is_an_error_result(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR, logger="tiny_agent.tools.toolbox"):
        result = make_toolbox().run(call("crash", path="a.txt", content="x"))
    assert result.is_error
    assert result.content == "crash failed: ZeroDivisionError: integer division or modulo by zero"
    assert any(r.exc_info for r in caplog.records)


def test_non_text_result_is_an_error_result() -> None:
    def number(args: dict[str, Any]) -> Any:
        return 42

    toolbox = Toolbox([Tool("bad", "Returns a number.", SCHEMA, number)])
    result = toolbox.run(call("bad", path="a.txt", content="x"))
    assert result.is_error
    assert result.content == "bad failed: it returned int, not text"


def test_grammar_collects_the_narrowed_schemas() -> None:
    narrow = {**SCHEMA, "properties": {**SCHEMA["properties"], "path": {"enum": ["a.txt"]}}}
    toolbox = Toolbox([Tool("save", "Save.", SCHEMA, _save, lambda: narrow), Tool("refuse", "No.", SCHEMA, _refuse)])
    assert toolbox.grammar() == {"save": narrow}
    assert Toolbox([Tool("save", "Save.", SCHEMA, _save, lambda: None)]).grammar() == {}


def test_a_grammar_that_raises_is_left_out_not_a_crash(caplog: pytest.LogCaptureFixture) -> None:
    """A grammar only narrows decoding; the turn goes on with the tool's full schema."""

    def broken() -> dict[str, Any]:
        raise PermissionError(13, "Permission denied")

    toolbox = Toolbox(
        [Tool("save", "Save.", SCHEMA, _save, broken), Tool("crash", "x", SCHEMA, _crash, lambda: SCHEMA)]
    )
    with caplog.at_level(logging.WARNING, logger="tiny_agent.tools.toolbox"):
        assert toolbox.grammar() == {"crash": SCHEMA}
    assert "grammar of save failed" in caplog.text
