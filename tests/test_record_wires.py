"""A recorded session that uses two wires is compared like with like everywhere: each call with the
previous call of its own provider (another is another cache), as ``lint`` compares each wire's bodies.
``sessions show``, ``stats``, the view and lint say nothing changed where a program moved from
Anthropic to OpenAI, and name a model changed on one wire. A recording ends with a run's end; a
program that makes no call leaves no session. The view's API takes a prefix of the session's id."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest

from tiny_agent.cli.app import main
from tiny_agent.observe.lint import lint_session
from tiny_agent.observe.record import Recorder
from tiny_agent.observe.view import serve
from tiny_agent.store.base import CallQuery
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.testing import BillingFake, Task

MANUAL = "You analyse legal agreements. " + "The Licensee shall not sublicense the rights. " * 200
ASK = "summarise the agreement"


def _program(claude: anthropic.Anthropic, chat: openai.OpenAI) -> None:
    """Three Anthropic calls of one conversation, two OpenAI calls of another, then one on another model."""
    history: list[dict[str, Any]] = [{"role": "user", "content": ASK}]
    for _ in range(3):
        answer = claude.messages.create(
            model="claude-sonnet-4-6",
            max_tokens=100,
            messages=history,
            system=[{"type": "text", "text": MANUAL, "cache_control": {"type": "ephemeral"}}],
        )
        text = answer.content[0].text if answer.content[0].type == "text" else ""
        history = [*history, {"role": "assistant", "content": text}, {"role": "user", "content": "and then?"}]
    messages: list[Any] = [{"role": "system", "content": MANUAL}, {"role": "user", "content": ASK}]
    for model in ("gpt-4o-mini", "gpt-4o-mini", "gpt-4o"):
        reply = chat.chat.completions.create(model=model, messages=messages)
        messages = [*messages, {"role": "assistant", "content": reply.choices[0].message.content or ""}]
        messages.append({"role": "user", "content": "and then?"})


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    db = tmp_path_factory.mktemp("wires") / "s.db"
    with BillingFake([Task(ASK, [], "It grants a licence.")]) as fake:
        upstreams = {"anthropic": fake.url("a", "anthropic"), "openai": fake.url("o", "openai")}
        with Recorder(str(db), upstreams) as recorder:
            claude = anthropic.Anthropic(api_key="sk-test-wires-1", base_url=recorder.base_url("anthropic"))
            _program(claude, openai.OpenAI(api_key="sk-test-wires-2", base_url=recorder.base_url("openai")))
            recorder.exit_status = 0
    return db, recorder.session_id


def test_each_call_is_compared_with_its_own_providers_previous(recorded: tuple[Path, str]) -> None:
    db, sid = recorded
    with SQLiteStore(db) as store:
        rows = store.calls(CallQuery(sessions=(sid,)))
        assert [r.provider for r in rows] == ["anthropic"] * 3 + ["openai"] * 3
        assert [r.changed for r in rows] == [()] * 6, "the first OpenAI call is the first of its cache"
        assert rows[3].shared_messages is None and rows[4].shared_messages == 1
        assert str(rows[5].miss).startswith("model changed: gpt-4o-mini -> gpt-4o"), rows[5].miss
        findings = [(f.rule, f.request) for f in lint_session(store, sid) if f.severity != "info"]
        assert findings == [("model-changed", 5)], findings
        with serve(store, sid, open_browser=False) as server:
            first_openai = server.view.call(3)
            assert first_openai["previous"] is None and first_openai["breaks"] == []
            assert server.view.call(4)["previous"] == 3 and server.view.call(4)["breaks"] == []
            assert [b["rule"] for b in server.view.call(5)["breaks"]] == ["model-changed"]
            assert [c["changed"] for c in server.view.session()["calls"]] == [[]] * 6


def test_sessions_show_and_stats_count_no_change_across_wires(
    recorded: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    db, sid = recorded
    assert main(["sessions", "show", sid, "--store", str(db)]) == 0
    shown = capsys.readouterr().out
    assert "changed: system" not in shown and " · changed:" not in shown, shown
    assert main(["stats", sid, "--store", str(db), "--json"]) == 0
    looked = json.loads(capsys.readouterr().out)
    assert looked["layers"]["system"]["changed"] == 0, looked["layers"]
    assert looked["runs"] == 1 and not looked.get("sessions_without_runs"), "the program's end is the run's"
    assert main(["stats", sid, "--store", str(db)]) == 0
    assert "no run ends on record" not in capsys.readouterr().out


def test_the_views_api_takes_a_prefix_of_the_id(recorded: tuple[Path, str]) -> None:
    db, sid = recorded
    with SQLiteStore(db) as store, serve(store, sid[:8], open_browser=False) as server:
        status, _, body = server.answer(f"/api/session/{sid[:8]}")
        assert status == 200 and json.loads(body)["session"]["id"] == sid
        assert server.answer(f"/api/session/{sid[:8]}/call/1")[0] == 200
        assert server.answer(f"/api/session/{sid[:8]}/whatif")[0] == 200
        status, _, body = server.answer("/api/session/zzzz")
        assert status == 404 and sid.encode() in body, "names the session it serves"


def test_a_program_that_makes_no_call_leaves_no_session(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "s.db"
    assert main(["record", "--store", str(db), "--", sys.executable, "-c", "raise SystemExit(3)"]) == 3
    said = capsys.readouterr().err
    assert said.count("\n") == 1 and "recorded no call" in said and "nothing stored" in said
    with SQLiteStore(db) as store:
        assert store.sessions() == []
