"""Issue 30, finding 6: a replay says which policy it replays, warns where a request would overflow
the window, marks a call that was in flight when the session ended, and pairs rows by call id."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from tiny_agent.context.config import ContextConfig
from tiny_agent.context.session import Session
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.testing import ScriptedProvider, tool_call
from tiny_agent.types import Entry, Message, ToolResultBlock, ToolSpec
from tiny_agent.whatif.figures import paired_rows, replay_lines
from tiny_agent.whatif.replay import Policy, replay

READ = ToolSpec("read_file", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}})
MODEL = "claude-sonnet-4-6"


def recorded(tmp_path: Path, sizes: list[int]) -> list[Entry]:
    """A session of one read per size (words of output), then the answer; its entries."""
    replies: list[object] = [tool_call("read_file", f"c{i}", path=f"{i}.txt") for i in range(len(sizes))]
    replies.append(Message.assistant("done"))
    provider = ScriptedProvider(  # a 1M window (Sonnet 4.6's long context): the recording itself fits
        replies,  # type: ignore[arg-type]
        name="anthropic",
        model=MODEL,
        pricing_id="anthropic",
        context_window=1_000_000,
    )
    tmp_path.mkdir(exist_ok=True)
    with SQLiteStore(tmp_path / "s.db") as store:
        config = ContextConfig(keep_turns=2, policy="fraction", compact_at=0.9)
        session = Session.start(store, tools=[READ], system="s " * 300, config=config)
        ctx = session.context
        ctx.record_run(provider="anthropic", model=MODEL)
        ctx.add_user("go")
        for i, size in enumerate(sizes):
            ctx.maybe_compact(provider)  # the policy consulted before every turn, as the loop does
            ctx.complete(provider)
            ctx.add_tool_result(ToolResultBlock(f"c{i}", "data " * size))
        ctx.complete(provider)
        session.close()
        return list(store.entries(session.id))


def test_the_header_names_the_policy_it_replays(tmp_path: Path) -> None:
    entries = recorded(tmp_path, [300] * 4)
    header = replay_lines(replay(entries))[0]
    assert "as recorded" not in header.split(":")[0]
    assert "policy=fraction" in header and "keep-turns=2" in header and "(the recorded policy)" in header, header
    changed = replay_lines(replay(entries, Policy({"keep_turns": 3})))[0]
    assert "keep-turns=3" in changed and "(changed: keep-turns=3)" in changed, changed


def test_a_request_over_the_window_is_called_an_overflow(tmp_path: Path) -> None:
    entries = recorded(tmp_path, [300, 150_000])  # a read of about 150k tokens, into gpt-4o-mini's 128k
    result = replay(entries, Policy(provider="openai", model="gpt-4o-mini"))
    lines = replay_lines(result)
    assert any(line.startswith("OVERFLOW: ") and "128,000-token window" in line for line in lines), lines
    assert any(line.endswith("OVERFLOW") for line in lines), "the row is marked"
    assert result.to_dict()["replayed"]["overflows"]
    small = recorded(tmp_path / "small", [300, 300])
    assert not any("OVERFLOW" in line for line in replay_lines(replay(small, Policy(provider="openai"))))


def test_a_call_in_flight_when_the_session_ended_is_marked(tmp_path: Path) -> None:
    entries = recorded(tmp_path, [300] * 2)
    last = next(e for e in reversed(entries) if e.kind == "call")
    # The process died while the next call was out: its call entry, and nothing after it.
    entries.append(dataclasses.replace(last, seq=len(entries), id="in-flight", at=last.at + 1))
    result = replay(entries)
    lines = replay_lines(result)
    assert result.recorded.unfinished == (len(entries) - 1,)
    assert f"call {len(entries) - 1} was in flight when the session ended (no reply recorded): not replayed" in lines


def test_rows_are_paired_by_call_id(tmp_path: Path) -> None:
    entries = recorded(tmp_path, [600] * 8)
    result = replay(entries, Policy({"policy": "fraction", "compact_at": 2500, "keep_turns": 1}))
    rows = paired_rows(result.recorded.per_call, result.replayed.per_call)
    turns = [c for c in result.recorded.per_call if c.purpose == "turn"]
    assert sum(1 for left, right in rows if left is not None and right is not None) >= len(turns)
    for left, right in rows:
        if left is not None and right is not None:
            assert left.call == right.call and left.purpose == right.purpose
    extra = [right for left, right in rows if left is None]
    assert extra and all(r.purpose == "compaction" for r in extra), "the replay's own compactions stand alone"
    assert result.replayed.compactions > result.recorded.compactions
