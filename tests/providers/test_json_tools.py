"""JSON-schema tool mode: for models that cannot call tools, the reply is constrained to tool JSON."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tiny_agent.context.legality import check_openai_body
from tiny_agent.providers.openai.json_tools import SCHEMA_NAME, parse_reply, response_format
from tiny_agent.tools.toolbox import Toolbox
from tiny_agent.tools.workspace import Workspace
from tiny_agent.types import Message, Prompt, TextBlock, ToolResultBlock, ToolSpec, ToolUseBlock

from .test_openai_provider import Server, completion, provider

READ = ToolSpec(
    "read_file",
    "Read a text file.",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"], "additionalProperties": False},
)
LIST = ToolSpec("list_dir", "List a folder.", {"type": "object", "properties": {"path": {"type": "string"}}})


def history() -> tuple[Message, ...]:
    return (
        Message.user("what is in notes.txt?"),
        Message("assistant", (ToolUseBlock("c1", "read_file", {"path": "notes.txt"}),)),
        Message("user", (ToolResultBlock("c1", "buy milk"),)),
    )


def test_the_schema_admits_each_tool_call_and_an_answer_and_nothing_else() -> None:
    schema = response_format([READ, LIST])["json_schema"]["schema"]
    jsonschema.validate({"tool": "read_file", "arguments": {"path": "a"}}, schema)
    jsonschema.validate({"tool": "list_dir", "arguments": {}}, schema)
    jsonschema.validate({"answer": "done"}, schema)
    for bad in ({"tool": "rm", "arguments": {}}, {"tool": "read_file", "arguments": {}}, {"say": "hi"}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema)


def test_render_puts_tools_in_the_system_text_and_history_in_plain_turns() -> None:
    body = provider(Server(), tool_mode="json_schema").render(Prompt(("You are terse.",), (READ, LIST), history()))
    assert "tools" not in body
    assert body["response_format"]["json_schema"]["name"] == SCHEMA_NAME
    system, *rest = body["messages"]
    assert system["content"].startswith("You are terse.") and "read_file(path)" in system["content"]
    assert [m["role"] for m in rest] == ["user", "assistant", "user"]
    assert json.loads(rest[1]["content"]) == {"tool": "read_file", "arguments": {"path": "notes.txt"}}
    assert "buy milk" in rest[2]["content"]
    assert check_openai_body(body) == []


def test_a_summary_call_gets_no_grammar() -> None:
    prompt = Prompt(("s",), (READ,), (Message.user("summarise"),), tool_choice="none")
    assert "response_format" not in provider(Server(), tool_mode="json_schema").render(prompt)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('{"tool": "read_file", "arguments": {"path": "notes.txt"}}', ("tool_use", "read_file")),
        ('{"answer": "It says buy milk."}', ("end_turn", "It says buy milk.")),
    ],
)
def test_send_maps_the_json_back_to_blocks(content: str, expected: tuple[str, str]) -> None:
    server = Server(completion({"content": content}, {"prompt_tokens": 50, "completion_tokens": 9}))
    p = provider(server, tool_mode="json_schema")
    response = p.send(p.render(Prompt(("s",), (READ,), history())))
    assert response.stop_reason == expected[0]
    block = response.message.content[0]
    assert (block.name if isinstance(block, ToolUseBlock) else response.message.text) == expected[1]
    sent: dict[str, Any] = server.body()
    assert sent["response_format"]["type"] == "json_schema"


def test_unexpected_replies_are_kept_as_text() -> None:
    assert parse_reply("not json") == (TextBlock("not json"),)
    assert parse_reply('{"other": 1}') == (TextBlock('{"other": 1}'),)
    (call,) = parse_reply('{"tool": "read_file", "arguments": "notes.txt"}')
    assert isinstance(call, ToolUseBlock) and "__invalid_json__" in call.input
    a, b = parse_reply('{"tool": "x", "arguments": {}}'), parse_reply('{"tool": "x", "arguments": {}}')
    assert isinstance(a[0], ToolUseBlock) and isinstance(b[0], ToolUseBlock) and a[0].id != b[0].id


def _without_grammar(body: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in body.items() if k != "response_format"}


def test_the_tool_grammar_changes_only_the_decoding_not_the_prompt() -> None:
    """The prompt text (and so the server's cached prefix) is byte-identical with and without the
    narrowed schemas; only ``response_format`` differs."""
    root = Path(__file__).resolve().parents[2] / "examples" / "workspace"
    toolbox = Toolbox(Workspace(root).tools())
    grammar = toolbox.grammar()
    assert grammar, "the sample workspace offers a grammar"
    p = provider(Server(), tool_mode="json_schema")
    prompt = Prompt(("You are terse.",), toolbox.specs, history())
    plain = p.render(prompt)
    narrowed = p.render(replace(prompt, tool_grammar=grammar))
    assert json.dumps(_without_grammar(narrowed)) == json.dumps(_without_grammar(plain))
    assert narrowed["response_format"] != plain["response_format"]
    schema = narrowed["response_format"]["json_schema"]["schema"]
    jsonschema.validate({"tool": "read_file", "arguments": {"path": "docs/architecture.md"}}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"tool": "read_file", "arguments": {"path": "nowhere.txt"}}, schema)
