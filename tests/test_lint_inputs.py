"""lint on what a new user gives it: no false alarm on what a provider signed or encrypted (sent back as
received, never moved), a thinking rule pointing at the field to change, every settings message a
sentence, and input that holds no request body refused in one line naming the file's own line."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from tiny_agent.cli.app import main
from tiny_agent.observe.lint import lint_bodies, lint_body
from tiny_agent.providers.cache_breaks import prefix_breaks, wire_breaks
from tiny_agent.providers.wire import WIRES

SIGNATURE = "EqQBCkgIARABGAIiQL3m9Xz7K2pQ4vR8sT1uY6wA0bC5dE3fG7hJ9kL2mN4oP8qR1sT5uV7wX9yZ3aB6cD0eF2gH4iJ8kL"
"""What a thinking block's signature looks like: to the volatile patterns, a random id."""
TOOL = {"name": "read", "description": "Read a file", "input_schema": {"type": "object", "properties": {}}}


def _thinking_body(thought: dict[str, Any]) -> dict[str, Any]:
    """A tool loop with thinking on: the assistant's reasoning ``thought`` before the newest breakpoint."""
    return {
        "model": "claude-sonnet-4-6",
        "max_tokens": 2000,
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "tools": [TOOL],
        "system": [{"type": "text", "text": "You read files and answer briefly. " * 150}],
        "messages": [
            {"role": "user", "content": "read a.txt"},
            {
                "role": "assistant",
                "content": [thought, {"type": "tool_use", "id": "toolu_01", "name": "read", "input": {}}],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_01",
                        "content": "hello",
                        "cache_control": {"type": "ephemeral"},
                    }
                ],
            },
        ],
    }


@pytest.mark.parametrize(
    "thought",
    [
        {"type": "thinking", "thinking": "I should read it.", "signature": SIGNATURE},
        {"type": "redacted_thinking", "data": SIGNATURE},
    ],
)
def test_a_signature_or_redacted_thinking_is_no_volatile_value(thought: dict[str, Any]) -> None:
    assert [f for f in lint_body(_thinking_body(thought)) if f.rule == "volatile-in-prefix"] == []


def test_the_same_value_in_a_text_is_flagged() -> None:
    text = {"type": "thinking", "thinking": f"the key is {SIGNATURE}", "signature": "sig"}
    assert [f.path for f in lint_body(_thinking_body(text)) if f.rule == "volatile-in-prefix"] == [
        "messages[1].content[0].thinking"
    ], "the check itself still sees the value"


def test_a_forced_tool_choice_with_thinking_points_at_tool_choice() -> None:
    body = _thinking_body({"type": "thinking", "thinking": "I should read it.", "signature": "sig"})
    body["tool_choice"] = {"type": "tool", "name": "read"}
    (found,) = [f for f in lint_body(body) if f.rule == "thinking-forced-tool-choice"]
    assert found.path == "tool_choice"
    assert "tool_choice" in found.fix and not found.fix.startswith("send the reasoning back"), found.fix


def _settings_cases() -> list[tuple[str, str, str]]:
    return [(wire, setting.path, setting.what) for wire in WIRES for setting in wire_breaks(wire).settings]


@pytest.mark.parametrize(("wire", "path", "what"), _settings_cases())
def test_every_settings_message_is_a_sentence(wire: str, path: str, what: str) -> None:
    before: dict[str, Any] = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    after = copy.deepcopy(before)
    holder = after
    *parents, last = path.split(".")
    for key in parents:
        holder = holder.setdefault(key, {})
    holder[last] = "something else"
    (found,) = [b for b in prefix_breaks(before, after, wire) if b.path == path]
    head, _, then = found.message.partition(": ")
    assert head.startswith(f"{what} changed") and ":" not in head, found.message
    assert then.startswith(("the whole prefix", "the cache misses from the")), found.message


def test_a_model_change_reads_as_a_sentence() -> None:
    body = _thinking_body({"type": "thinking", "thinking": "I should read it.", "signature": "sig"})
    (found,) = [f for f in lint_bodies([body, {**body, "model": "claude-opus-4-6"}]) if f.rule == "model-changed"]
    assert found.path == "model"
    assert found.message == "the model changed (each model has its own cache): the whole prefix is written again"


@pytest.mark.parametrize(
    ("name", "text", "said"),
    [
        ("blank.jsonl", "\n\n", "no request bodies in {path}"),
        ("empty.json", "", "no request bodies in {path}"),
        ("num.json", "42", "{path}: not a request body (42)"),
        ("obj.json", "{}", "{path}: not a request body ({{}})"),
        ("list.json", '[{"messages": []}, "hi"]', '{path}[1]: not a request body ("hi")'),
        ("badline.jsonl", '{"messages": [{"role": "user", "content": "hi"}]}\n\n{bad\n', "{path}:3: not JSON"),
    ],
)
def test_input_without_a_request_body_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, text: str, said: str
) -> None:
    path = tmp_path / name
    path.write_text(text)
    assert main(["lint", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and said.format(path=path) in err, err
    assert "Error" not in err and "line 1 column" not in err


def test_empty_stdin_has_no_request_bodies(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert main(["lint", "-"]) == 2
    assert "no request bodies in <stdin>" in capsys.readouterr().err


def test_a_body_of_the_other_wire_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "b1.json"
    path.write_text(json.dumps(_thinking_body({"type": "thinking", "thinking": "hm", "signature": "sig"})))
    assert main(["lint", str(path)]) == 0
    capsys.readouterr()
    assert main(["lint", "--wire", "openai", str(path)]) == 1
    out = capsys.readouterr().out
    assert "wire-mismatch" in out and "anthropic wire's shape" in out and "--wire anthropic" in out, out


def test_an_unknown_model_is_said_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body = _thinking_body({"type": "thinking", "thinking": "hm", "signature": "sig"})
    path = tmp_path / "two.jsonl"
    path.write_text(json.dumps(body) + "\n" + json.dumps(body) + "\n")
    assert main(["lint", "--model", "nonexistent-model", str(path)]) == 0
    err = capsys.readouterr().err
    assert err.count("nonexistent-model") == 1 and "the wire's defaults" in err, err
    assert main(["lint", "--model", "claude-sonnet-4-6", str(path)]) == 0
    assert "defaults" not in capsys.readouterr().err
