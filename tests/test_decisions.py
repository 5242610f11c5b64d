"""A compaction's decision is a log entry: what the policy saw, what it chose, whether it failed;
replay, stats and ``sessions show`` read it, and a session from before it existed still replays."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tiny_agent.context.config import ContextConfig
from tiny_agent.context.engine import Context
from tiny_agent.context.entries import Decision
from tiny_agent.context.entry_codec import decode, encode
from tiny_agent.context.log import MemoryLog
from tiny_agent.context.session import Session
from tiny_agent.context.shrink.compaction import SUMMARY_OPENING
from tiny_agent.context.shrink.decisions import decisions, decisions_of
from tiny_agent.context.state import State
from tiny_agent.errors import CompactionError, UnreadableEntry
from tiny_agent.observe.history import history_lines
from tiny_agent.observe.stats import stats
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.testing import ScriptedProvider, tool_call
from tiny_agent.types import Entry, Message, ToolResultBlock, ToolSpec
from tiny_agent.whatif.replay import Policy, replay

READ = ToolSpec("read_file", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}})
MODEL = "claude-sonnet-4-6"
OLD = Path(__file__).parent / "data" / "session_before_decisions.json"
FRACTION = ContextConfig(clear_after=None, policy="fraction", compact_at=3500, keep_turns=2)


def answering(summaries: list[str]) -> Callable[[dict[str, Any]], Message]:
    """A model that reads the next file each turn and answers a summary request with the next of
    ``summaries`` (the last one again once it is the only one left)."""
    turn = iter(range(1000))

    def answer(body: dict[str, Any]) -> Message:
        if SUMMARY_OPENING in json.dumps(body["messages"][-1]):
            return Message.assistant(summaries.pop(0) if len(summaries) > 1 else summaries[0])
        i = next(turn)
        return tool_call("read_file", f"c{i}", path=f"{i}.txt")

    return answer


def provider(summaries: list[str]) -> ScriptedProvider:
    return ScriptedProvider([answering(summaries)] * 60, name="anthropic", model=MODEL, pricing_id="anthropic")


def run(ctx: Context, p: ScriptedProvider, turns: int, clock: list[float]) -> None:
    """``turns`` turns as the loop runs them: clearing and compaction considered before each call."""
    for i in range(turns):
        clock[0] += 30
        ctx.maybe_clear(p)
        with contextlib.suppress(CompactionError):  # the run goes on without it, as the loop's does
            ctx.maybe_compact(p)
        ctx.complete(p)
        ctx.add_tool_result(ToolResultBlock(ctx.state.pending[0], f"part {i} " + "data " * 400))


def fail_at_the_end(ctx: Context, p: ScriptedProvider, clock: list[float], summaries: list[str]) -> None:
    """Turns until the window is past the threshold, then a compaction whose summary is too big: the
    run stops there (killed, or its pipe closed) before its next call."""
    for _ in range(10):
        if ctx.context_tokens(p) > ctx.threshold(p) and ctx.failed_at is None:
            break
        run(ctx, p, 1, clock)
    summaries[:] = ["huge " * 20000]
    with pytest.raises(CompactionError, match="not smaller"):
        ctx.maybe_compact(p)


def context(config: ContextConfig = FRACTION) -> tuple[Context, list[float]]:
    clock = [1764600000.0]
    ctx = Context("s " * 300, [READ], config=config, log=MemoryLog(clock=lambda: clock[0]), clock=lambda: clock[0])
    ctx.record_run(provider="anthropic", model=MODEL)
    ctx.add_user("go")
    return ctx, clock


def typed(ctx: Context) -> list[tuple[Entry, Any]]:
    return [(e, decode(e)) for e in ctx.entries]


def test_a_decision_round_trips_through_its_stored_json() -> None:
    full = Decision(
        "cost", "compact", 14_210, 13_500, 100_000, 128_000, 4, {"input": 3e-6, "read": 3e-7}, 31, 13, "cached"
    )
    failed = Decision("manual", "compact", 9_000, failed_at=9_000, error="the summary call returned no text")
    for value in (full, failed, Decision("clearing", "clear", 20_000, messages=3)):
        kind, body = encode(value)
        assert kind == "decision" and body["v"] == 1
        assert decode(Entry(kind, json.loads(json.dumps(body)), "e", 0, 0.0)) == [value]
    with pytest.raises(UnreadableEntry, match="tokens"):
        State.of([Entry("decision", {"v": 1, "policy": "cost", "action": "compact"}, "e", 0, 0.0)])


def test_the_policy_writes_its_decision_before_the_compaction_and_the_window_is_unchanged_by_it() -> None:
    ctx, clock = context()
    run(ctx, provider(["the files hold the settings"]), 10, clock)
    kinds = [e.kind for e in ctx.entries]
    assert kinds.count("compaction") >= 1 and kinds.count("decision") == kinds.count("compaction")
    for i, kind in enumerate(kinds):
        if kind == "compaction":
            assert kinds[i - 1] == "decision", "the decision is written with the compaction it led to"
    made = [v for _, values in typed(ctx) for v in values if isinstance(v, Decision)]
    first = made[0]
    assert (first.policy, first.action, first.threshold, first.ceiling, first.keep_turns) == (
        "fraction",
        "compact",
        3500,
        3500,
        2,
    )
    assert first.tokens > 3500 and first.failed_at is None and first.summarizer == "cached"
    assert first.prices == {}, "the fraction policy weighs no price"
    mark = next(e.body for e in ctx.entries if e.kind == "compaction")
    assert first.cut == mark["cut"] and first.messages == mark["messages"] and first.tokens == mark["tokens_before"]
    without = State.of(e for e in ctx.entries if e.kind != "decision")
    assert without.window.messages == ctx.state.window.messages and without.epoch == ctx.state.epoch


def test_the_cost_policy_records_the_prices_and_the_threshold_it_chose() -> None:
    clock = [1000.0]
    ctx = Context("system prompt " * 50, (READ,), config=ContextConfig(clear_after=None), clock=lambda: clock[0])
    ctx.add_user("read every file")
    scripted = ScriptedProvider(
        [*(tool_call("read_file", f"c{i}", path=f"f{i}") for i in range(14)), Message.assistant("the summary")],
        pricing_id="anthropic",
    )
    for i in range(14):
        ctx.complete(scripted)
        ctx.add_tool_result(ToolResultBlock(f"c{i}", f"line {i} of the file\n" * 200))
    assert ctx.maybe_compact(scripted) is not None
    (decision,) = decisions(ctx.entries)
    assert decision.policy == "cost" and decision.threshold is not None and decision.ceiling is not None
    assert decision.threshold < decision.ceiling and decision.tokens < decision.ceiling, "below the limit: it paid"
    assert set(decision.prices) == {"input", "read", "write", "output"}
    assert decision.prices["read"] < decision.prices["input"] < decision.prices["output"]


def test_a_failed_compaction_is_a_decision_and_a_resume_waits_for_growth_too(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "s.db") as store:
        session = Session.start(store, tools=[READ], system="s " * 300, config=FRACTION)
        ctx = session.context
        ctx.record_run(provider="anthropic", model=MODEL)
        ctx.add_user("go")
        clock = [0.0]
        summaries = ["the files hold the settings"]
        p = provider(summaries)
        run(ctx, p, 8, clock)
        fail_at_the_end(ctx, p, clock, summaries)
        failed = [d for d in decisions(ctx.entries) if d.failed_at is not None]
        assert len(failed) == 1 and "not smaller" in failed[0].error and failed[0].summarizer == "cached"
        assert ctx.failed_at == failed[0].failed_at == failed[0].tokens
        session.close()
        again = Session.resume(store, session.id)
        assert again.context.failed_at == failed[0].failed_at, "the log says it failed: a resume knows it"
        untouched = ScriptedProvider([], name="anthropic", model=MODEL)
        assert again.context.maybe_compact(untouched) is None and not untouched.requests, "it waits for growth"
        shown = "\n".join(history_lines(store.entries(session.id)))
        assert "fraction policy compacts at" in shown and "failed, history kept as it was: the summary" in shown
        figures = stats(store, [session.id]).total
        assert figures.compaction_failures == 1 and figures.compactions == len(decisions(ctx.entries)) - 1
        again.close()


def test_a_manual_compaction_writes_its_decision_and_the_fold_keeps_the_policys_failure_apart() -> None:
    ctx, clock = context(ContextConfig(clear_after=None, compact_at=10**6, policy="fraction"))
    run(ctx, provider([""]), 6, clock)
    with pytest.raises(CompactionError, match="no text"):
        ctx.compact(provider=provider([""]), keep_turns=2)  # asked twice at the window's end, then from the transcript
    (decision,) = decisions(ctx.entries)
    assert decision.policy == "manual" and decision.keep_turns == 2 and decision.failed_at is not None
    assert ctx.failed_at is None, "a compaction the user asked for does not hold the policy back"
    assert ctx.compact(ctx.summarizer(provider(["the summary"])), keep_turns=2) is not None
    assert decisions(ctx.entries)[-1].summarizer == "transcript"


def test_replay_reads_a_failed_decision_after_the_last_turn() -> None:
    """A run that stopped right after a compaction failed consulted the policy once more than it has
    turns: the decision says so (a mark cannot: there is none)."""
    ctx, clock = context()
    summaries = ["the files hold the settings"]
    p = provider(summaries)
    run(ctx, p, 8, clock)
    fail_at_the_end(ctx, p, clock, summaries)
    log = list(ctx.entries)
    assert log[-1].kind == "decision" and log[-1].body["failed_at"], "the run ended on a failed compaction"
    result = replay(log)
    purposes = [c.purpose for c in result.recorded.per_call]
    assert purposes[-1] == "compaction"
    assert [c.purpose for c in result.replayed.per_call] == purposes
    assert result.replayed.cost_usd == pytest.approx(result.recorded.cost_usd)
    assert [(d.policy, d.tokens, d.failed_at is None) for d in result.replayed.decisions] == [
        (d.policy, d.tokens, d.failed_at is None) for d in result.recorded.decisions
    ]
    guessed = replay([e for e in log if e.kind != "decision"])  # as an older tiny-agent wrote it
    assert [c.purpose for c in guessed.replayed.per_call] == purposes[:-1], "without it, the guess misses it"


def test_a_replay_under_another_policy_reports_its_own_decisions() -> None:
    ctx, clock = context()
    run(ctx, provider(["the files hold the settings"]), 12, clock)
    other = replay(list(ctx.entries), Policy({"compact_at": 6000}))
    assert other.recorded.decisions and other.replayed.decisions
    assert all(d.threshold == 6000 for d in other.replayed.decisions if d.action == "compact")
    assert other.to_dict()["replayed"]["decisions"][0]["threshold"] == 6000


def old_session() -> list[Entry]:
    return [Entry(e["kind"], e["body"], e["id"], e["seq"], e["at"]) for e in json.loads(OLD.read_text())]


def test_a_session_from_before_decisions_still_replays_to_its_recorded_bill() -> None:
    log = old_session()
    assert not any(e.kind == "decision" for e in log), "recorded by tiny-agent e01d80d"
    result = replay(log)
    assert result.recorded.compactions == result.replayed.compactions == 2
    assert [c.fingerprint for c in result.replayed.per_call] == [c.fingerprint for c in result.recorded.per_call]
    assert result.replayed.cost_usd == pytest.approx(result.recorded.cost_usd)
    assert not result.replayed.estimated


def test_the_decisions_of_an_older_session_are_guessed_from_its_marks_and_summary_calls() -> None:
    found = decisions_of((e, decode(e)) for e in old_session())
    assert all(d.guessed for d in found)
    assert [(d.decision.policy, d.decision.failed_at is not None) for d in found] == [
        ("fraction", True),
        ("fraction", False),
        ("fraction", False),
    ]
    done = [d.decision for d in found if d.decision.failed_at is None]
    marks = [e.body for e in old_session() if e.kind == "compaction"]
    assert [d.tokens for d in done] == [m["tokens_before"] for m in marks]
    assert all(d.ceiling == 3500 and d.threshold is None for d in done), "the cost policy's choice is not known"
    shown = "\n".join(history_lines(old_session()))
    assert shown.count("[compacted ·") == 2, "its compactions are shown as before"
    assert "policy compacts at" not in shown, "sessions show states no decision the log does not hold"
