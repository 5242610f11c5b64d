"""What a call record carries for looking back: what changed the window since the previous call,
how many messages it shares with the previous request, and a ``stop`` entry for every run's end."""

from __future__ import annotations

from pathlib import Path

from tiny_agent.agent.loop import Agent, AgentConfig
from tiny_agent.context.engine import Context
from tiny_agent.testing import ScriptedProvider, tool_call
from tiny_agent.tools.toolbox import Toolbox
from tiny_agent.tools.workspace import Workspace
from tiny_agent.types import Message


def agent_for(tmp_path: Path, replies: list[Message], **config: object) -> Agent:
    (tmp_path / "notes.txt").write_text("buy milk\n")
    return Agent(ScriptedProvider(replies), Toolbox(Workspace(tmp_path).tools()), config=AgentConfig(**config))  # type: ignore[arg-type]


def test_each_call_says_how_many_messages_it_shares_with_the_previous_request(tmp_path: Path) -> None:
    agent = agent_for(tmp_path, [tool_call("read_file", path="notes.txt"), Message.assistant("milk")])
    agent.run("what is in notes.txt?")
    calls = [e.body for e in agent.context.entries if e.kind == "call"]
    assert [c["shared_messages"] for c in calls] == [None, 1]
    assert calls[1]["shared_messages"] == calls[0]["fingerprint"]["messages"], "the second extends the first"
    assert [c["changes"] for c in calls] == [[], []]


def test_a_changed_message_shares_only_the_messages_before_it(tmp_path: Path) -> None:
    ctx = Context("You are terse.", [])
    provider = ScriptedProvider([Message.assistant("one"), Message.assistant("two")])
    ctx.add_user("first")
    ctx.complete(provider)
    ctx.add_user("second")
    ctx.complete(provider)
    first, second = (e.body for e in ctx.entries if e.kind == "call")
    assert first["fingerprint"]["messages"] == 1 and second["shared_messages"] == 1
    # A system prompt change is a change of the system layer: the messages before it are still shared
    # (the cache can read none of them, which the miss cause says; the layers say what moved).
    ctx.system = "You are verbose."
    ctx.add_user("third")
    provider.replies.append(Message.assistant("three"))
    ctx.complete(provider)
    second, third = [e.body for e in ctx.entries if e.kind == "call"][-2:]
    assert third["shared_messages"] == second["fingerprint"]["messages"] == 3


def test_a_compaction_is_named_in_the_next_calls_changes(tmp_path: Path) -> None:
    ctx = Context("You are terse.", [])
    provider = ScriptedProvider([Message.assistant(f"reply {i}") for i in range(4)])
    for i in range(3):
        ctx.add_user(f"question {i} " + "words " * 50)
        ctx.complete(provider)
    ctx.compact(lambda transcript: "the user asked three questions", keep_turns=1)
    ctx.add_user("and now?")
    ctx.complete(provider)
    last = [e.body for e in ctx.entries if e.kind == "call"][-1]
    assert last["changes"] == ["compaction"]
    assert last["shared_messages"] < [e.body for e in ctx.entries if e.kind == "call"][-2]["fingerprint"]["messages"]


def test_every_run_ends_in_a_stop_entry(tmp_path: Path) -> None:
    agent = agent_for(tmp_path, [tool_call("read_file", path="notes.txt"), Message.assistant("milk")])
    agent.run("what is in notes.txt?")
    stops = [e.body for e in agent.context.entries if e.kind == "stop"]
    assert stops == [{"v": 1, "reason": "done", "steps": 2, "detail": ""}]
    assert agent.context.entries[-1].kind == "stop"


def test_a_step_limit_stop_is_recorded_with_its_reason(tmp_path: Path) -> None:
    replies = [tool_call("read_file", path="notes.txt") for _ in range(3)]
    agent = agent_for(tmp_path, replies, max_steps=2)
    result = agent.run("read it forever")
    assert result.stop == "step_limit"
    (stop,) = [e.body for e in agent.context.entries if e.kind == "stop"]
    assert stop["reason"] == "step_limit" and stop["steps"] == 2


def test_a_provider_error_stop_keeps_the_error_as_its_detail(tmp_path: Path) -> None:
    from tiny_agent.errors import ProviderConnectionError

    agent = agent_for(tmp_path, [ProviderConnectionError("connection refused")])  # type: ignore[list-item]
    result = agent.run("hello")
    assert result.stop == "provider_error"
    (stop,) = [e.body for e in agent.context.entries if e.kind == "stop"]
    assert stop["reason"] == "provider_error" and "connection refused" in stop["detail"]
