"""Sessions: a Context rebuilt from stored entries renders byte for byte what the original rendered;
a resume closes what a crash left open and sends the same prefix the last request sent."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tiny_agent.context.engine import NOT_RUN, Context, ContextConfig
from tiny_agent.context.entries import CallOpened
from tiny_agent.context.legality import check_messages
from tiny_agent.context.log import MemoryLog, StoredLog
from tiny_agent.context.session import Session
from tiny_agent.errors import CompactionError, IllegalRequestError, SessionConflict
from tiny_agent.providers.anthropic.adapter import AnthropicProvider
from tiny_agent.providers.openai.adapter import OpenAICompatProvider
from tiny_agent.providers.prefix import without_marks
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.testing import ScriptedProvider, tool_call
from tiny_agent.types import Message, ToolResultBlock, ToolSpec, ToolUseBlock

READ = ToolSpec("read_file", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}})
RENDERERS = (AnthropicProvider(model="claude-sonnet-4-6", api_key="k"), OpenAICompatProvider(model="m", api_key="k"))


def bodies(ctx: Context) -> list[str]:
    return [json.dumps(r.render(ctx.prompt()), sort_keys=True) for r in RENDERERS]


def snapshot(ctx: Context) -> dict[str, Any]:
    return {
        "bodies": bodies(ctx),
        "messages": ctx.messages,
        "compactions": ctx.compactions,
        "pins": ctx.pins,
        "settings": ctx.settings,
        "calls": ctx.ledger.calls,
        "ratios": ctx.ledger.ratios,
        "tokens": ctx.context_tokens(),
        "pending": ctx.pending_calls,
    }


texts = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=40)
operation = st.one_of(
    st.tuples(st.just("user"), texts),
    st.tuples(st.just("calls"), st.integers(1, 3)),
    st.tuples(st.just("answer"), texts),
    st.tuples(st.just("results"), st.booleans()),
    st.tuples(st.just("complete"), st.booleans()),
    st.tuples(st.just("pin"), texts),
    st.tuples(st.just("unpin"), st.integers(1, 3)),
    st.tuples(st.just("compact"), st.integers(1, 3)),
    st.tuples(st.just("system"), texts),
)


def apply(ctx: Context, op: tuple[str, Any], counter: list[int]) -> None:
    kind, arg = op
    counter[0] += 1
    n = counter[0]
    if kind == "user":
        ctx.add_user(arg)
    elif kind == "calls":
        ctx.add_assistant(
            Message("assistant", tuple(ToolUseBlock(f"t{n}_{i}", "read_file", {"path": f"f{i}"}) for i in range(arg)))
        )
    elif kind == "answer":
        ctx.add_assistant(Message.assistant(arg))
    elif kind == "results":
        calls = ctx.pending_calls
        chosen = calls if arg else calls[:1]
        ctx.add_tool_results([ToolResultBlock(c.id, f"content of {c.input['path']} " * 30) for c in chosen])
    elif kind == "complete":
        reply = tool_call("read_file", f"s{n}", path="x") if arg else Message.assistant(f"answer {n}")
        with contextlib.suppress(IllegalRequestError):  # nothing sendable yet (no user turn last)
            ctx.complete(ScriptedProvider([reply]))
    elif kind == "pin":
        ctx.pin(arg)
    elif kind == "unpin":
        if len(ctx.pins) >= arg:
            ctx.unpin(arg)
    elif kind == "compact":
        with contextlib.suppress(CompactionError):  # nothing worth compacting yet
            ctx.compact(lambda transcript: f"summary {n}", keep_turns=arg)
    elif kind == "system":
        ctx.system = arg


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=st.lists(operation, min_size=1, max_size=25))
def test_a_stored_session_rebuilds_the_same_context(tmp_path: Path, ops: list[tuple[str, Any]]) -> None:
    with SQLiteStore(tmp_path / f"s{abs(hash(str(ops)))}.db") as store:
        session = Session.start(store, tools=[READ], system="be brief", pins=["p0"])
        original = session.context
        counter = [0]
        for op in ops:
            apply(original, op, counter)
        rebuilt = Context(tools=[READ], log=StoredLog(store, session.id, store.entries(session.id)))
        assert snapshot(rebuilt) == snapshot(original)
        in_memory = Context(tools=[READ], log=MemoryLog(original.entries))
        assert snapshot(in_memory) == snapshot(original)


def test_a_context_built_from_messages_is_normalised_like_add() -> None:
    messages = [
        Message.user("a"),
        Message.user("b"),
        Message("assistant", (ToolUseBlock("t", "read_file", {"path": "x"}),)),
        Message("user", (ToolResultBlock("t", "r"),)),
        Message.user("c"),
    ]
    ctx = Context("s", (READ,), messages=messages)
    added = Context("s", (READ,))
    for m in messages:
        added.add(m)
    assert ctx.messages == added.messages
    assert [m.role for m in ctx.messages] == ["user", "assistant", "user"]
    assert [b.type for b in ctx.messages[2].content] == ["tool_result", "text"]
    assert check_messages(ctx.window()) == []


def crashed_session(store: SQLiteStore, tmp: Path) -> str:
    """A session whose process died after a response asked for two tools and one result was stored,
    and a second call was on the wire."""
    session = Session.start(store, tools=[READ], system="s")
    ctx = session.context
    ctx.add_user("read two files")
    calls = (ToolUseBlock("a", "read_file", {"path": "1"}), ToolUseBlock("b", "read_file", {"path": "2"}))
    ctx.complete(ScriptedProvider([Message("assistant", calls)]))
    ctx.add_tool_result(ToolResultBlock("a", "one"))
    ctx.append([CallOpened("turn", "m", 10, {})])
    return session.id  # no close(): the process "died"


def test_resume_closes_what_a_crash_left_open(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "s.db") as store:
        sid = crashed_session(store, tmp_path)
    with SQLiteStore(tmp_path / "s.db") as store:
        # The writer mark names this very process (the "dead" one is us), so take it over.
        session = Session.resume(store, sid[:10], tools=[READ], force=True)
        assert [c.id for c in session.interrupted] == ["b"]
        assert session.lost_calls == 1
        window = session.context.window()
        assert check_messages(window) == [], "legal without a repair"
        results = {b.tool_use_id: b for b in window[-1].tool_results}
        assert results["a"].content == "one" and results["b"].content == NOT_RUN and results["b"].is_error
        assert session.context.state.open_calls == {}


def test_a_resume_without_tools_keeps_the_sessions_tools_and_closes_the_crash_first(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "s.db") as store:
        sid = crashed_session(store, tmp_path)
        head = store.get(sid).head
    with SQLiteStore(tmp_path / "s.db") as store:
        session = Session.resume(store, sid, force=True)
        assert session.context.tools == (READ,)
        assert [e.kind for e in store.entries(sid, after=head)] == ["call_failed", "tool_result"]


@pytest.mark.parametrize("renderer", RENDERERS, ids=["anthropic", "openai"])
def test_resume_renders_the_prefix_the_last_request_sent(tmp_path: Path, renderer: Any) -> None:
    provider = ScriptedProvider(
        [tool_call("read_file", "c1", path="a"), Message.assistant("it says hi")], wire=renderer.wire
    )
    with SQLiteStore(tmp_path / "s.db") as store:
        session = Session.start(store, tools=[READ], system="s", pins=["never edit dev.mjs"])
        session.context.add_user("what does a say?")
        session.context.complete(provider)
        session.context.add_tool_result(ToolResultBlock("c1", "hi"))
        session.context.complete(provider)
        last = provider.requests[-1]
        session.close()
    with SQLiteStore(tmp_path / "s.db") as store:
        resumed = Session.resume(store, session.id, tools=[READ])
        resumed.context.add_user("and b?")
        first = provider.render(resumed.context.prompt())
    last, first = without_marks(last), without_marks(first)
    assert {k: v for k, v in first.items() if k != "messages"} == {k: v for k, v in last.items() if k != "messages"}
    assert first["messages"][: len(last["messages"])] == last["messages"]


def test_two_writers_on_one_session(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "s.db") as a, SQLiteStore(tmp_path / "s.db") as b:
        session = Session.start(a, tools=[READ])
        with pytest.raises(SessionConflict, match="open in another tiny-agent"):
            Session.resume(b, session.id, tools=[READ])
        # Even a writer that forced its way in cannot interleave: the older one's next append fails.
        other = Session.resume(b, session.id, tools=[READ], force=True)
        other.context.add_user("from b")
        with pytest.raises(SessionConflict, match="nothing was written"):
            session.context.add_user("from a")
        assert [e.kind for e in b.entries(session.id)][-1] == "user"


def test_settings_come_from_the_session_and_flags_override_them(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "s.db") as store:
        first = Session.start(store, system="first system", config=ContextConfig(keep_turns=2), settings={"model": "x"})
        first.close()
        again = Session.resume(store, first.id)
        assert (again.context.system, again.context.config.keep_turns) == ("first system", 2)
        again.close()
        changed = Session.resume(store, first.id, config=ContextConfig(keep_turns=5), settings={"model": "y"})
        assert changed.context.config.keep_turns == 5 and changed.context.run_settings["model"] == "y"
        assert changed.context.system == "first system"
        assert [e.kind for e in store.entries(first.id)[-2:]] == ["config", "run"], "the overrides are recorded"
