"""Issue 27: a session resumed with other thinking settings. The resume says once that the cache
misses from the first message on, the run goes on with no request refused, and a replay renders each call
with the settings it was sent with, so replayed under its own policy it is the recording, call by call."""

from __future__ import annotations

from pathlib import Path

from tiny_agent.agent.run import Run
from tiny_agent.agent.settings import RunSettings
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.testing import BillingFake, Task
from tiny_agent.testing.thinking_server import ThinkingRules
from tiny_agent.whatif.figures import CallFigures
from tiny_agent.whatif.replay import replay

ENV = {"ANTHROPIC_API_KEY": "sk-test-1"}
NOTE = (
    "the thinking settings differ from the session's (2048 -> adaptive): "
    "at the next request the cache misses from the first message on"
)


def reads(ws: Path, first: int, count: int) -> Task:
    for i in range(first, first + count):
        (ws / f"p{i}.txt").write_text(f"words of file {i} " * 200)
    return Task("read", [[("read_file", {"path": f"p{i}.txt"})] for i in range(first, first + count)], "Done.")


def row(c: CallFigures) -> tuple[object, ...]:
    return (c.purpose, c.input_tokens, c.cache_read_tokens, c.cache_write_tokens, c.output_tokens, c.reasoning_tokens)


def test_a_resume_with_other_thinking_settings_warns_once_and_replays_as_sent(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    rules = ThinkingRules()
    with (
        BillingFake([reads(ws, 0, 3), reads(ws, 3, 3)], thinking=rules) as fake,
        SQLiteStore(tmp_path / "s.db") as store,
    ):
        # Claude 4.6 takes both a budget and adaptive thinking (Claude 5 takes adaptive only).
        base = RunSettings(
            provider="anthropic", model="claude-sonnet-4-6", base_url=fake.url("r", "anthropic"), workspace=str(ws),
            code_tools=False,
        )  # fmt: skip
        with Run.open(store, settings=RunSettings.of({**base.given(), "thinking": "2048"}), env=ENV) as run:
            assert run.agent.run("Please read the first files").stop == "done"
            assert NOTE not in run.notes
            assert run.session is not None
            sid = run.session.id
        again = RunSettings.of({**base.given(), "thinking": "adaptive"})
        with Run.open(store, settings=again, resume=sid, env=ENV) as run:
            assert run.notes.count(NOTE) == 1
            assert run.agent.run("Now read the next files").stop == "done"
        bodies = [b.body for b in fake.bills("r")]
        entries = store.entries(sid)
    assert rules.rejected == []
    assert bodies[0]["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert bodies[-1]["thinking"] == {"type": "adaptive"}
    result = replay(entries)
    assert [row(c) for c in result.replayed.per_call] == [row(c) for c in result.recorded.per_call]
    change = next(i for i, b in enumerate(bodies) if b["thinking"] == {"type": "adaptive"})
    assert result.recorded.per_call[change].cache_read_tokens < result.recorded.per_call[change - 1].cache_read_tokens


def test_a_session_with_a_display_and_an_effort_resumes_with_thinking_off(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    rules = ThinkingRules()
    with (
        BillingFake([reads(ws, 0, 2), reads(ws, 2, 2)], thinking=rules) as fake,
        SQLiteStore(tmp_path / "s.db") as store,
    ):
        base = {"provider": "anthropic", "model": "claude-sonnet-5", "base_url": fake.url("r", "anthropic")}
        first = RunSettings.of({**base, "workspace": str(ws), "thinking": "adaptive", "thinking_display": "omitted",
                                "effort": "low", "code_tools": False})  # fmt: skip
        with Run.open(store, settings=first, env=ENV) as run:
            assert run.agent.run("Please read the first files").stop == "done"
            assert run.session is not None
            sid = run.session.id
        with Run.open(store, settings=RunSettings.of({**base, "thinking": "off"}), resume=sid, env=ENV) as run:
            assert "--thinking off leaves out the session's --effort low (give it again to keep it)" in run.notes
            assert run.agent.run("Now read the next files").stop == "done"
        last = fake.bills("r")[-1].body
    assert rules.rejected == []
    assert last["thinking"] == {"type": "disabled"} and "output_config" not in last


def test_a_resume_with_another_effort_misses_the_messages_and_says_so(tmp_path: Path) -> None:
    """Changing ``output_config.effort`` "always invalidates message blocks" (reasoning facts, section 1):
    the billing fake reads only the tools and system prompt at the change, the call's miss line names
    the effort, and the replay (the same simulator) bills it as recorded."""
    ws = tmp_path / "ws"
    ws.mkdir()
    with (
        BillingFake([reads(ws, 0, 3), reads(ws, 3, 3)], thinking=ThinkingRules()) as fake,
        SQLiteStore(tmp_path / "s.db") as store,
    ):
        base = RunSettings(
            provider="anthropic", model="claude-sonnet-5", base_url=fake.url("r", "anthropic"), workspace=str(ws),
            code_tools=False,
        )  # fmt: skip
        with Run.open(store, settings=RunSettings.of({**base.given(), "effort": "high"}), env=ENV) as run:
            assert run.agent.run("Please read the first files").stop == "done"
            assert run.session is not None
            sid = run.session.id
        with Run.open(store, settings=RunSettings.of({**base.given(), "effort": "low"}), resume=sid, env=ENV) as run:
            assert run.notes.count(NOTE.replace("2048 -> adaptive", "default//high -> default//low")) == 1
            assert run.agent.run("Now read the next files").stop == "done"
            calls = run.agent.context.ledger.calls
        bills = fake.bills("r")
        entries = store.entries(sid)
    change = next(i for i, b in enumerate(bills) if b.body["output_config"] == {"effort": "low"})
    assert bills[change].call.cache_read < bills[change - 1].call.cache_read + bills[change - 1].call.cache_write
    miss = calls[change].miss
    assert miss is not None and "effort changed" in miss and "[effort-changed at output_config.effort]" in miss
    result = replay(entries)
    assert [row(c) for c in result.replayed.per_call] == [row(c) for c in result.recorded.per_call]
