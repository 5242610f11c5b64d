"""A stored session run with ``--thinking-binding drop_block``, read back: ``lint --session`` and the
view redraw each turn request with the thinking settings it was sent with, the binding included, so
the summary calls' stored bodies and the turns around them carry the same ``thinking`` and no
thinking-settings change is found where none happened. A session recorded before the call entries
named the binding reads the same, and goes on after a resume without a made-up change either. A
session resumed with another binding is read, linted and replayed call by call as each was sent."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tiny_agent.agent.loop import DEFAULT_SYSTEM, Agent, AgentConfig
from tiny_agent.context import render
from tiny_agent.context.engine import ContextConfig
from tiny_agent.context.entries import CallDone, CallOpened, CompactionMark, RunChange, RunStop, TypedEntry
from tiny_agent.context.entry_codec import read
from tiny_agent.context.replayed import Unnamed
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
from tiny_agent.whatif.figures import Figures
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


def run(
    root: Path,
    store: SQLiteStore,
    fake: BillingFake,
    request: str,
    resume: str | None = None,
    binding: str | None = "drop_block",
    compact_at: int = 9000,
) -> str:
    """``request`` in a new stored session (or ``resume``d) with ``binding`` on a preserved-thinking
    model that compacts inside its tool loop (a resume does not); None: ``--thinking off``."""
    thinking = parse_thinking("adaptive", binding=binding) if binding else parse_thinking("off")
    url = fake.url("r", "anthropic")
    provider = resolve_provider("anthropic", model="claude-sonnet-5", base_url=url, env=ENV, thinking=thinking)
    toolbox = Toolbox(Workspace(root).tools())
    # The resume goes on with a turn, not a compaction: its request is the one compared with the last.
    config = ContextConfig(compact_at=compact_at if resume is None else 60_000, keep_turns=2, policy="fraction")
    settings = {"provider": "anthropic", "model": "claude-sonnet-5", "thinking": thinking.label}
    if binding:
        settings["thinking_binding"] = binding
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
    assert keys == ({"adaptive", "adaptive///drop_block"} if legacy else {"adaptive///drop_block"})
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


def resumed(root: Path, first: str, then: str | None, legacy: bool) -> tuple[Path, str, int]:
    """A session run with the binding ``first`` (``legacy``: its call entries keyed as they were
    before they named it), resumed an hour later with ``then`` (None: ``--thinking off``); no
    compaction. Where it is stored, and the seq its resume starts after."""
    where, rules, now = root / "s.db", ThinkingRules(), [time.time()]
    tasks = [files(root, 0, 4, "read the files"), files(root, 4, 3, "read three more")]
    with SQLiteStore(where) as store, BillingFake(tasks, thinking=rules, clock=lambda: now[0]) as fake:
        with pytest.MonkeyPatch.context() as patch:
            if legacy:
                patch.setattr(render, "thinking_key", legacy_key)
            sid = run(root, store, fake, "Please read the files", binding=first, compact_at=60_000)
        head = store.get(sid).head
        now[0] += 3600
        run(root, store, fake, "Now read three more", resume=sid, binding=then)
        bound = ["block_binding" in b.body.get("thinking", {}) for b in fake.bills("r")]
        calls = [e.seq for e in store.entries(sid) if e.kind == "call"]
    assert rules.rejected == []
    assert bound == [(seq > head) == (then == "drop_block") for seq in calls], bound
    return where, sid, head


def replays_as_recorded(found: list[Entry]) -> None:
    """A replay under the session's own policy bills each call as the recording did."""
    result = replay(found)
    assert not result.replayed.estimated, "every request is the recorded one: nothing is estimated"

    def bills(figures: Figures) -> list[tuple[int | None, int, int, int | None, float]]:
        return [
            (c.call, c.input_tokens, c.cache_read_tokens, c.cache_write_tokens, round(c.cost_usd or 0.0, 9))
            for c in figures.per_call
        ]

    assert bills(result.replayed) == bills(result.recorded)


def test_a_strict_session_resumed_with_drop_block_replays_as_recorded(tmp_path: Path) -> None:
    where, sid, head = resumed(tmp_path, "strict", "drop_block", legacy=False)
    found = entries(where, sid)
    keys = {(e.seq > head, v.fingerprint.get("thinking")) for e in found for v in read(e) if isinstance(v, CallOpened)}
    assert keys == {(False, "adaptive"), (True, "adaptive///drop_block")}
    replays_as_recorded(found)


def test_a_strict_resume_of_an_older_drop_block_log_is_read_strict(tmp_path: Path) -> None:
    where, sid, head = resumed(tmp_path, "drop_block", "strict", legacy=True)
    with SQLiteStore(where) as store:
        view = SessionView.of(store.get(sid), store.entries(sid))
        findings = lint_session(store, sid)
    assert [view.unnamed.at(c.seq) for c in view.calls] == [
        "drop_block" if c.seq <= head else "strict" for c in view.calls
    ]
    first = next(c for c in view.calls if c.seq > head)
    for call in view.calls:
        shown = view.call(call.index)
        assert shown["request"]["exact"], call.index
        changed = [b for b in shown["breaks"] if b["rule"] == "thinking-changed"]
        assert bool(changed) == (call is first), call.index
    assert len([f for f in findings if f.rule == "thinking-changed"]) == 1
    replays_as_recorded(entries(where, sid))


def test_a_drop_block_session_resumed_with_thinking_off_replays_as_recorded(tmp_path: Path) -> None:
    # The run settings' drop_block stays in force, unsent: the calls without thinking bind nothing.
    where, sid, head = resumed(tmp_path, "drop_block", None, legacy=False)
    with SQLiteStore(where) as store:
        view = SessionView.of(store.get(sid), store.entries(sid))
    assert {c.opened.fingerprint.get("thinking") for c in view.calls if c.seq > head} == {"off"}
    assert all(view.call(c.index)["request"]["exact"] for c in view.calls)
    replays_as_recorded(entries(where, sid))


def test_an_unnamed_binding_is_the_one_in_force_at_its_call() -> None:
    """A run's settings in force name it; where none do (drop_block chosen from Python, before the
    flag), the run's own compactions say, and only its own."""
    call = CallOpened("turn", "claude-sonnet-5", 1, {"thinking": "adaptive"})
    dropped = CompactionMark(0, 2, "summary", "r", strategy="drop_block")
    log: list[TypedEntry] = [
        *(RunChange({"provider": "anthropic"}), call, dropped, call, RunStop("done")),  # 1-5: drop_block
        *(call, RunStop("done")),  # 6-7: the next run compacted nothing
        *(RunChange({"thinking_binding": "strict"}), call, RunStop("done")),  # 8-10
        *(RunChange({"thinking_binding": "drop_block"}), call, RunStop("done"), call),  # 11-14: still asked for
    ]
    unnamed = Unnamed.of(enumerate(log, 1))
    calls = [seq for seq, value in enumerate(log, 1) if isinstance(value, CallOpened)]
    assert [unnamed.at(seq) for seq in calls] == [
        "drop_block",
        "drop_block",
        "strict",
        "strict",
        "drop_block",
        "drop_block",
    ]


def test_lint_finds_no_modified_thinking_after_a_drop_block_compaction(tmp_path: Path) -> None:
    """A compaction moves the kept turns to other places: the block now at a place that held another
    one before was not modified, and lint does not say so (it did, one error a compaction)."""
    rules = ThinkingRules(redact_every=4)
    with SQLiteStore(tmp_path / "s.db") as store, BillingFake([files(tmp_path, 0, 24, "read")], thinking=rules) as fake:
        thinking = parse_thinking("adaptive", binding="drop_block")
        url = fake.url("r", "anthropic")
        provider = resolve_provider("anthropic", model="claude-sonnet-5", base_url=url, env=ENV, thinking=thinking)
        toolbox = Toolbox(Workspace(tmp_path).tools())
        config = ContextConfig(compact_at=6000, keep_turns=1, policy="fraction")
        session = Session.start(store, tools=toolbox.specs, system=DEFAULT_SYSTEM, config=config)
        agent = Agent(provider, toolbox, context=session.context, config=AgentConfig(max_steps=100))
        assert agent.run("Please read the files").stop == "done"
        session.close()
        assert sum(1 for c in agent.context.ledger.calls if c.purpose == "compaction") >= 3
        errors = [f for f in lint_session(store, session.id) if f.severity == "error"]
    assert rules.rejected == [] and errors == [], errors
