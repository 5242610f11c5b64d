"""A stored session run with ``--thinking-binding drop_block``, read back: ``lint --session`` and the
view redraw each turn request with the thinking settings it was sent with, the binding included, so
the summary calls' stored bodies and the turns around them carry the same ``thinking`` and no
thinking-settings change is found where none happened. A session recorded before the call entries
named the binding reads the same, and goes on after a resume without a made-up change either."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tiny_agent.agent.loop import DEFAULT_SYSTEM, Agent, AgentConfig
from tiny_agent.context import render
from tiny_agent.context.engine import ContextConfig
from tiny_agent.context.entries import CallDone, CallOpened
from tiny_agent.context.entry_codec import read
from tiny_agent.context.session import Session
from tiny_agent.observe.lint import lint_session
from tiny_agent.observe.view.data import SessionView
from tiny_agent.providers.registry import resolve_provider
from tiny_agent.providers.thinking import Thinking, parse_thinking
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.testing import BillingFake, Task
from tiny_agent.testing.thinking_server import ThinkingRules
from tiny_agent.tools.toolbox import Toolbox
from tiny_agent.tools.workspace import Workspace
from tiny_agent.types import Entry
from tiny_agent.whatif.replay import replay

ENV = {"ANTHROPIC_API_KEY": "sk-test-1"}
BINDING = {"prefix_mismatch_behavior": "drop_block"}


def files(root: Path, first: int, count: int, request: str) -> Task:
    for i in range(first, first + count):
        (root / f"part{i:02d}.txt").write_text(f"line {i} of a long file with words " * 120)
    return Task(request, [[("read_file", {"path": f"part{i:02d}.txt"})] for i in range(first, first + count)], "Read.")


def legacy_key(thinking: Thinking) -> str:
    """The key as call entries recorded it before it named the binding."""
    return "/".join(str(x) for x in (thinking.label, thinking.display or "", thinking.effort or "")).rstrip("/")


def run(root: Path, store: SQLiteStore, fake: BillingFake, request: str, resume: str | None = None) -> str:
    """``request`` in a new stored session (or ``resume``d), drop_block on a preserved-thinking model
    that compacts inside its tool loop."""
    thinking = parse_thinking("2048", binding="drop_block")
    url = fake.url("r", "anthropic")
    provider = resolve_provider("anthropic", model="claude-sonnet-5", base_url=url, env=ENV, thinking=thinking)
    toolbox = Toolbox(Workspace(root).tools())
    # The resume goes on with a turn, not a compaction: its request is the one compared with the last.
    config = ContextConfig(compact_at=9000 if resume is None else 60_000, keep_turns=2, policy="fraction")
    settings = {"provider": "anthropic", "model": "claude-sonnet-5", "thinking": "2048"}
    settings["thinking_binding"] = "drop_block"
    if resume is None:
        session = Session.start(
            store, workspace=str(root), tools=toolbox.specs, system=DEFAULT_SYSTEM, config=config, settings=settings
        )
    else:
        session = Session.resume(store, resume, tools=toolbox.specs, config=config, settings=settings)
    agent = Agent(provider, toolbox, context=session.context, config=AgentConfig(max_steps=100))
    assert agent.run(request).stop == "done"
    session.close()
    return session.id


def record(root: Path, legacy: bool) -> tuple[Path, str, int]:
    """The session, stored at ``root``, and the seq its resume starts after: a run, then a resume an
    hour later by the fake's clock (its first call misses); ``legacy``: the first run records the keys
    as they were, and this version goes on with it."""
    where, rules, now = root / "s.db", ThinkingRules(redact_every=4), [time.time()]
    tasks = [files(root, 0, 24, "read the files"), files(root, 24, 4, "read four more")]
    with SQLiteStore(where) as store, BillingFake(tasks, thinking=rules, clock=lambda: now[0]) as fake:
        with pytest.MonkeyPatch.context() as patch:
            if legacy:
                patch.setattr(render, "thinking_key", legacy_key)
            sid = run(root, store, fake, "Please read the files")
        head = store.get(sid).head
        now[0] += 3600
        run(root, store, fake, "Now read four more", resume=sid)
        bills = fake.bills("r")
    assert rules.rejected == []
    assert all(b.body["thinking"]["block_binding"] == BINDING for b in bills)
    assert sum(1 for b in bills if "Summary" in str(b.reply)) >= 2, "it compacted, more than once"
    return where, sid, head


@pytest.fixture(scope="module", params=[False, True], ids=["now", "legacy"])
def recorded(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, bool, int]:
    where, sid, head = record(tmp_path_factory.mktemp("drop"), request.param)
    return where, sid, request.param, head


def entries(where: Path, sid: str) -> list[Entry]:
    with SQLiteStore(where) as store:
        return store.entries(sid)


def test_lint_finds_no_thinking_change_on_a_drop_block_session(recorded: tuple[Path, str, bool, int]) -> None:
    where, sid, _, _ = recorded
    with SQLiteStore(where) as store:
        findings = lint_session(store, sid)
    assert [f for f in findings if f.rule == "thinking-changed"] == []


def test_the_view_redraws_each_turn_as_it_was_sent(recorded: tuple[Path, str, bool, int]) -> None:
    where, sid, legacy, _ = recorded
    with SQLiteStore(where) as store:
        view = SessionView.of(store.get(sid), store.entries(sid))
    keys = {c.opened.fingerprint.get("thinking") for c in view.calls if c.opened.purpose == "turn"}
    assert keys == ({"2048", "2048///drop_block"} if legacy else {"2048///drop_block"})
    summaries = [c for c in view.calls if c.opened.purpose == "compaction"]
    assert len(summaries) >= 2 and all(c.request is not None for c in summaries)
    for call in view.calls:
        shown = view.call(call.index)
        assert [b for b in shown["breaks"] if b["rule"] == "thinking-changed"] == [], call.index
        if call.opened.purpose == "turn":
            assert shown["request"]["exact"], call.index


def test_a_replay_under_its_own_policy_is_the_recording(recorded: tuple[Path, str, bool, int]) -> None:
    where, sid, _, _ = recorded
    result = replay(entries(where, sid))
    assert result.recorded.compactions >= 2
    assert not result.replayed.estimated, "every request is the recorded one: nothing is estimated"
    assert [c.call for c in result.replayed.per_call] == [c.call for c in result.recorded.per_call]


def test_a_resumed_session_names_no_thinking_change(recorded: tuple[Path, str, bool, int]) -> None:
    where, sid, _, head = recorded
    typed = [(e, v) for e in entries(where, sid) for v in read(e)]
    resumed = next(e.seq for e, v in typed if isinstance(v, CallOpened) and e.seq > head)
    first = next(v.record for e, v in typed if isinstance(v, CallDone) and v.call == resumed)
    # The fake's clock moved on, not the engine's: the line finds the bytes alike, not why the entry went.
    assert first.miss and "identical prefix" in first.miss and "thinking" not in first.miss, first.miss
