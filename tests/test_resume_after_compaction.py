"""A session resumed after a compaction whose next call never got its answer (the call failed, or the
process died with it on the wire) sends what a live run would have: the window that call carried,
with the new input joined to its last user message. No repair, no request refused, and the first
call's line names the compaction as the cause of its miss."""

from __future__ import annotations

import copy
import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tiny_agent.agent.loop import Agent, AgentConfig
from tiny_agent.context.engine import Context, ContextConfig
from tiny_agent.context.entries import CompactionMark
from tiny_agent.context.legality import check_anthropic_body
from tiny_agent.context.session import Session
from tiny_agent.context.window import window
from tiny_agent.errors import ProviderError
from tiny_agent.observe.export import export_lines
from tiny_agent.providers.prefix import without_marks
from tiny_agent.providers.registry import resolve_provider
from tiny_agent.providers.thinking import parse_thinking
from tiny_agent.store.base import SessionInfo
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.testing import BillingFake, Task
from tiny_agent.testing.tasks import is_summary_request
from tiny_agent.testing.thinking_server import ThinkingRules
from tiny_agent.tools.toolbox import Toolbox
from tiny_agent.tools.workspace import Workspace
from tiny_agent.types import Message, ModelResponse, OnProviderEvent, TextBlock, ToolResultBlock, ToolUseBlock

ENV = {"ANTHROPIC_API_KEY": "sk-test-1"}
REQUEST = "Please read the sixteen files one by one and report"
GO_ON = "Continue the task."
ANSWER = "All sixteen files read: the report is complete."


def sixteen(root: Path) -> Task:
    for i in range(16):
        (root / f"part{i:02d}.txt").write_text(f"line {i} of a long file with words " * 120)
    return Task(REQUEST, [[("read_file", {"path": f"part{i:02d}.txt"})] for i in range(16)], ANSWER)


class Sent:
    """The provider's ``send``, keeping each body as it left (the fake keeps what it admitted, which
    ``drop_block`` may have thinned). ``fail``: the first turn after the first summary call fails, as
    on an overloaded server; its body is the request the resumed run must go on from."""

    def __init__(self, send: Callable[..., ModelResponse], *, fail: bool) -> None:
        self.send, self.fail, self.summaries = send, fail, 0
        self.bodies: list[dict[str, Any]] = []
        self.failed: dict[str, Any] | None = None

    def __call__(self, body: dict[str, Any], *, on_event: OnProviderEvent | None = None) -> ModelResponse:
        self.bodies.append(copy.deepcopy(body))
        if is_summary_request(body, "anthropic"):
            self.summaries += 1
        elif self.fail and self.summaries and self.failed is None:
            self.failed = self.bodies[-1]
            raise ProviderError("anthropic: error in the answer: overloaded_error: Overloaded")
        return self.send(body, on_event=on_event)


@pytest.mark.parametrize("crashed", [False, True], ids=["failed", "crashed"])
@pytest.mark.parametrize(
    ("thinking", "binding"),
    [("adaptive", "strict"), ("adaptive", "drop_block"), ("off", "strict")],
    ids=["fold", "drop", "off"],
)
def test_a_resume_after_a_compaction_whose_next_call_was_lost_sends_the_live_window(
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
    thinking: str,
    binding: str,
    crashed: bool,
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    rules = ThinkingRules(redact_every=4)
    config = ContextConfig(compact_at=9000, keep_turns=2, policy="fraction")
    with BillingFake([sixteen(ws)], thinking=rules) as fake, SQLiteStore(tmp_path / "s.db") as store:
        url = fake.url("run", "anthropic", provider="anthropic")
        provider = resolve_provider(
            "anthropic",
            model="claude-sonnet-5",
            base_url=url,
            env=ENV,
            thinking=parse_thinking(thinking, binding=binding),
            max_retries=0,
        )
        toolbox = Toolbox(Workspace(ws).tools())
        session = Session.start(store, tools=toolbox.specs, config=config)
        send = provider.send
        failing = Sent(send, fail=True)
        monkeypatch.setattr(provider, "send", failing)
        first = Agent(provider, toolbox, context=session.context, config=AgentConfig(max_steps=100)).run(REQUEST)
        assert first.stop == "provider_error" and failing.failed is not None
        assert session.context.compactions, "the call that failed was the first after a compaction"
        sid = session.id
        session.close()
        if crashed:  # the process died with the call on the wire: the session ends on its open call entry
            opened = max(e.seq for e in store.entries(sid) if e.kind == "call")
            sid = Session.fork(store, sid, at=opened).id
        resumed_sends = Sent(send, fail=False)
        monkeypatch.setattr(provider, "send", resumed_sends)
        resumed = Session.resume(store, sid)
        assert resumed.lost_calls == (1 if crashed else 0)
        agent = Agent(provider, toolbox, context=resumed.context, config=AgentConfig(max_steps=100))
        before = len(resumed.context.ledger.calls)
        with caplog.at_level(logging.WARNING):
            second = agent.run(GO_ON)
        assert "repairing" not in caplog.text
        assert rules.rejected == []
        assert second.stop == "done" and second.answer == ANSWER
        expected = without_marks(failing.failed["messages"])
        expected[-1]["content"].append({"type": "text", "text": GO_ON})
        assert without_marks(resumed_sends.bodies[0]["messages"]) == expected
        turn = resumed.context.ledger.calls[before]
        assert turn.purpose == "turn" and turn.miss is not None
        assert turn.miss.startswith("a compaction replaced the conversation"), turn.miss
        state = resumed.context.state
        assert state.window.messages == window(state.messages, state.compactions[-1], state.stubs)


def test_input_after_a_compaction_past_every_message_starts_the_window_after_the_summary() -> None:
    """The fold's cut lies after the last message: a user turn that comes next is no part of the
    message the summary replaced, in the log as in the window a rebuild draws."""
    ctx = Context("s")
    ctx.add_user("read a")
    ctx.add_assistant(Message("assistant", (ToolUseBlock("t1", "read_file", {"path": "a"}),)))
    ctx.add_tool_results([ToolResultBlock("t1", "the text of a")])
    end = ctx.state.head + 1  # the seq the next message will start at
    ctx.append([CompactionMark(end, len(ctx.messages), "read a", "- files read: a", strategy="fold")])
    ctx.add_user(GO_ON)
    summary = ctx.compactions[-1].text()
    assert ctx.window() == [Message("user", (TextBlock(summary), TextBlock(GO_ON)))]
    state = ctx.state
    assert ctx.window() == window(state.messages, state.compactions[-1], state.stubs)
    assert ctx.messages[-1] == Message.user(GO_ON), "the summarised results stay as they were in the log"


def test_the_body_exported_after_such_a_resume_is_the_window_and_legal() -> None:
    """``sessions export --format anthropic`` writes the request tiny-agent would send next: the
    summary and the input as one user turn, never the results the summary replaced."""
    ctx = Context("s")
    ctx.add_user("read a")
    ctx.add_assistant(Message("assistant", (ToolUseBlock("t1", "read_file", {"path": "a"}),)))
    ctx.add_tool_results([ToolResultBlock("t1", "the text of a")])
    ctx.append([CompactionMark(ctx.state.head + 1, len(ctx.messages), "read a", "- files read: a", strategy="fold")])
    ctx.add_user(GO_ON)
    info = SessionInfo("s1", 0.0, 0.0, None, "read a", ctx.state.head)
    body = json.loads("".join(export_lines(info, ctx.entries, "anthropic")))
    assert check_anthropic_body(body) == []
    assert [m["role"] for m in body["messages"]] == ["user"]
    assert [b["type"] for b in body["messages"][0]["content"]] == ["text", "text"]
    assert body["messages"][0]["content"][-1]["text"] == GO_ON
