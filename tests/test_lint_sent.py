"""``lint`` over what was really sent: a body the API refused is linted on its own, but the next body is
compared with the newest accepted one, as the per-call miss line compares it; a thinking block that
differs from the one sent at its place before is an error of its own (``thinking-modified``); and the
findings come in the order of the calls."""

from __future__ import annotations

import copy
import json
import time
from pathlib import Path
from typing import Any

import pytest

from tiny_agent.cli import main
from tiny_agent.observe.lint import lint_bodies, lint_session
from tiny_agent.observe.record import Recorder
from tiny_agent.providers.reasoning_check import RULES
from tiny_agent.store.sqlite import SQLiteStore

TOOL = {"name": "read_file", "description": "Read a file.", "input_schema": {"type": "object", "properties": {}}}


def turn(n: int, thought: str | None = None) -> list[dict[str, Any]]:
    """One step of a tool loop: the assistant's thinking and call, then the result."""
    think = {"type": "thinking", "thinking": thought or f"Step {n}: read part {n} next.", "signature": f"sig{n}" * 8}
    call = {"type": "tool_use", "id": f"toolu_{n}", "name": "read_file", "input": {"path": f"part{n}.txt"}}
    result = {"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": f"part {n} " * 40}
    return [{"role": "assistant", "content": [think, call]}, {"role": "user", "content": [result]}]


def body(steps: int, model: str = "claude-sonnet-5", **fields: Any) -> dict[str, Any]:
    ask = {"role": "user", "content": [{"type": "text", "text": "Read the parts one by one."}]}
    messages = [ask, *(m for n in range(1, steps + 1) for m in turn(n))]
    thinking = {"type": "enabled", "budget_tokens": 2048}
    return {"model": model, "max_tokens": 4096, "thinking": thinking, "tools": [TOOL], "messages": messages, **fields}


def unsigned(data: dict[str, Any], message: int) -> dict[str, Any]:
    out = copy.deepcopy(data)
    out["messages"][message]["content"][0]["signature"] = ""
    return out


def answer(read: int, written: int) -> bytes:
    usage = {"input_tokens": 10, "cache_read_input_tokens": read, "cache_creation_input_tokens": written}
    return json.dumps({"type": "message", "content": [], "usage": {**usage, "output_tokens": 20}}).encode()


@pytest.fixture
def recorded(tmp_path: Path) -> tuple[Path, str]:
    """A recording: two accepted bodies, one refused (its first thinking block unsigned, a new turn
    after it), then the same turn sent right with the thinking settings changed (accepted, a miss)."""
    db = tmp_path / "rec.db"
    with Recorder(str(db), {"anthropic": "http://127.0.0.1:9"}) as recorder:
        recorder.record("anthropic", body(1), 200, answer(0, 3000), "application/json", time.time())
        recorder.record("anthropic", body(2), 200, answer(3000, 1000), "application/json", time.time())
        refused = b'{"type": "error", "error": {"message": "messages.1.content.0: Invalid `signature`"}}'
        recorder.record("anthropic", unsigned(body(3), 1), 400, refused, "application/json", time.time())
        recorder.record("anthropic", body(3, thinking={"type": "adaptive"}), 200, answer(0, 5000), "", time.time())
    return db, recorder.session_id


def test_a_refused_body_is_linted_but_the_next_is_compared_with_the_accepted_one(recorded: tuple[Path, str]) -> None:
    db, sid = recorded
    with SQLiteStore(db) as store:
        findings = lint_session(store, sid)
        (miss,) = [e.body["miss"] for e in store.entries(sid, kinds=("call_done",)) if e.body.get("miss")]
    refused = [(f.rule, f.severity) for f in findings if f.request == 2]
    assert ("thinking-unsigned", "error") in refused
    after = [(f.rule, f.path) for f in findings if f.request == 3 and f.severity != "info"]
    assert after == [("thinking-changed", "thinking")], "no edit, no rebound: the refused body sent nothing"
    assert "thinking settings changed" in miss and miss.endswith("[thinking-changed at thinking]")


def test_the_cli_says_the_same_in_call_order(recorded: tuple[Path, str], capsys: pytest.CaptureFixture[str]) -> None:
    db, sid = recorded
    capsys.readouterr()
    assert main(["lint", "--session", sid[:8], "--store", str(db), "--json"]) == 1
    findings = json.loads(capsys.readouterr().out)["findings"]
    assert [f["request"] for f in findings] == sorted(f["request"] for f in findings)
    assert {(f["request"], f["rule"]) for f in findings if f["severity"] == "error"} == {(2, "thinking-unsigned")}


def test_findings_come_in_call_order() -> None:
    forced = body(2, tool_choice={"type": "tool", "name": "read_file"})
    findings = lint_bodies([body(1), forced, unsigned(body(3), 1)])
    requests = [f.request for f in findings]
    assert requests == sorted(requests)
    assert [f.rule for f in findings if f.request == 1][:1] == ["thinking-forced-tool-choice"], "its own first"


@pytest.mark.parametrize("model", ["claude-sonnet-5", "claude-sonnet-4-6"])
def test_an_edited_thinking_text_is_an_error_at_the_block(model: str) -> None:
    before = body(2, model)
    after = body(3, model)
    after["messages"][3]["content"][0]["thinking"] = "Step 2: read part two next."
    findings = [f for f in lint_bodies([before, after]) if f.severity != "info"]
    assert sorted((f.rule, f.severity, f.path, f.request) for f in findings) == [
        ("message-edited", "warning", "messages[3].content[0]", 1),
        ("thinking-modified", "error", "messages[3].content[0]", 1),
    ], "the thinking rule's error beside the cache's break (as the view and the miss line name it), no rebound"
    (error,) = [f for f in findings if f.rule == "thinking-modified"]
    assert "its text at character 18, 'ad part 2 next.' -> 'ad part two next.'" in error.message
    assert "\n" not in str(error)


def test_a_changed_signature_or_redacted_data_is_modified_too() -> None:
    before = body(2)
    before["messages"][3]["content"][0] = {"type": "redacted_thinking", "data": "rd.AAAA"}
    resigned, redacted = copy.deepcopy(before), copy.deepcopy(before)
    resigned["messages"][1]["content"][0]["signature"] = "other" * 8
    redacted["messages"][3]["content"][0]["data"] = "rd.BBBB"
    (first,) = [f for f in lint_bodies([before, resigned]) if f.rule == "thinking-modified"]
    assert first.path == "messages[1].content[0]" and "its signature changed" in first.message
    (second,) = [f for f in lint_bodies([before, redacted]) if f.rule == "thinking-modified"]
    assert second.path == "messages[3].content[0]" and "its data changed" in second.message
    assert [f.path for f in lint_bodies([before, redacted]) if f.rule == "message-edited"] == [second.path]


def test_a_block_moved_by_a_compaction_or_a_text_edit_is_no_modified_thinking() -> None:
    before = body(3)
    summary = {"role": "user", "content": [{"type": "text", "text": "[Summary] parts 1 and 2 read."}]}
    compacted = {**before, "messages": [summary, *before["messages"][5:]]}
    assert not [f for f in lint_bodies([before, compacted]) if f.rule == "thinking-modified"]
    edited = copy.deepcopy(before)
    edited["messages"][2]["content"][0]["content"] = "part two, edited"
    rules = [f.rule for f in lint_bodies([before, edited]) if f.severity != "info"]
    assert "message-edited" in rules and "thinking-modified" not in rules


def test_the_rule_is_listed_with_the_reasoning_rules() -> None:
    assert "thinking-modified" in RULES


def test_the_view_compares_with_the_accepted_body_too(recorded: tuple[Path, str]) -> None:
    """The view's "previous request" of the call after a refused one is the accepted one before it."""
    from tiny_agent.observe.view.data import SessionView

    db, sid = recorded
    with SQLiteStore(db) as store:
        (info,) = [s for s in store.sessions() if s.id == sid]
        view = SessionView.of(info, store.entries(sid))
    drawn = view.call(3)
    assert drawn["previous"] == 1, drawn["previous"]
    assert [b["rule"] for b in drawn["breaks"]] == ["thinking-changed"], drawn["breaks"]
