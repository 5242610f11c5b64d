"""The keepalive: pings that read the cached prefix while the user is idle, priced against a rewrite.

A fake clock drives both the engine and the billing fake (Anthropic's cache rules, claude-sonnet-4-6
prices), reached through the real SDK: a user back after 7 minutes pays less with the keepalive
than without, one who never comes back costs at most the cap, and a user who types while a ping is
in flight finds the conversation whole.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from tiny_agent.agent.keepalive import Keepalive
from tiny_agent.agent.loop import DEFAULT_SYSTEM, Agent
from tiny_agent.context import keepalive
from tiny_agent.context.engine import Context
from tiny_agent.context.legality import repair
from tiny_agent.context.log import MemoryLog
from tiny_agent.observe.history import history_lines
from tiny_agent.providers.registry import resolve_provider
from tiny_agent.testing import BillingFake, ScriptedProvider, Task, tool_call
from tiny_agent.tools.toolbox import Toolbox
from tiny_agent.tools.workspace import Workspace
from tiny_agent.types import Message, ModelResponse, ToolResultBlock, Usage
from tiny_agent.whatif.replay import replay

from .recorded import ENV, MODELS


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def tasks(root: Path) -> list[Task]:
    out = []
    for n in range(2):
        (root / f"doc{n}.txt").write_text(f"paragraph {n} of the design notes, with numbers {n * 7} and names\n" * 300)
        out.append(Task(f"question number {n}", [[("read_file", {"path": f"doc{n}.txt"})]], f"Answer {n}."))
    return out


def session(tmp_path: Path, fake: BillingFake, clock: Clock, route: str) -> Agent:
    ws = tmp_path / route
    ws.mkdir()
    for name in ("doc0.txt", "doc1.txt"):
        (ws / name).write_text((tmp_path / name).read_text())
    provider = resolve_provider("anthropic", model=MODELS["anthropic"], base_url=fake.url(route, "anthropic"), env=ENV)
    toolbox = Toolbox(Workspace(ws).tools())
    context = Context(DEFAULT_SYSTEM, toolbox.specs, log=MemoryLog(clock=clock), clock=clock)
    return Agent(provider, toolbox, context=context)


def idle(agent: Agent, clock: Clock, seconds: float, warm: Keepalive | None) -> None:
    """The user away for ``seconds``: the clock moves in steps of 10 s, the keepalive ticking."""
    end = clock.now + seconds
    while clock.now < end:
        clock.now = min(end, clock.now + 10)
        if warm is not None:
            with warm.idle():
                warm.tick()


def billed(fake: BillingFake, route: str, purpose: str | None = None) -> float:
    bills = fake.bills(route)
    if purpose == "keepalive":
        bills = [b for b in bills if b.body.get("max_tokens") == 1]
    return sum(b.call.usd for b in bills)


@pytest.fixture
def fake(tmp_path: Path) -> Any:
    clock = Clock()
    with BillingFake(tasks(tmp_path), clock=clock) as billing:
        billing.test_clock = clock  # type: ignore[attr-defined]
        yield billing


def test_a_user_back_after_seven_minutes_pays_less_with_the_keepalive(tmp_path: Path, fake: Any) -> None:
    clock = fake.test_clock
    totals = {}
    for route, keep in (("without", False), ("with", True)):
        agent = session(tmp_path, fake, clock, route)
        assert agent.run("Here is question number 0").stop == "done"
        warm = Keepalive(agent.context, agent.provider, clock=clock, thread=False) if keep else None
        idle(agent, clock, 7 * 60, warm)
        assert agent.run("Here is question number 1").stop == "done"
        totals[route] = billed(fake, route)
    pings = [c for c in agent.context.ledger.calls if c.purpose == "keepalive"]
    assert len(pings) == 1, "one ping at 4.5 minutes keeps the entry until the user is back"
    assert pings[0].usage.cache_read_tokens and pings[0].usage.output_tokens == 1
    after = [b for b in fake.bills("with") if b.body.get("max_tokens") != 1][2]
    assert after.call.miss is None and after.call.cache_read > 0, "the question after the pause read the prefix"
    assert totals["with"] < totals["without"], totals
    # The ping is a call of its own everywhere the calls are shown, and a replay sends it again.
    entries = list(agent.context.entries)
    lines = [line for line in history_lines(entries) if line.startswith("[keepalive")]
    assert len(lines) == 1 and "[keepalive 1 · in=" in lines[0]
    replayed = replay(entries)
    purposes = [c.purpose for c in replayed.replayed.per_call]
    assert purposes == [c.purpose for c in replayed.recorded.per_call] and purposes.count("keepalive") == 1
    assert replayed.replayed.compactions == 0, "a ping is not taken for a summary call"
    assert replayed.replayed.cost_usd == pytest.approx(totals["with"], rel=0.01)


def test_a_user_who_never_comes_back_costs_at_most_the_cap(tmp_path: Path, fake: Any) -> None:
    clock = fake.test_clock
    agent = session(tmp_path, fake, clock, "gone")
    assert agent.run("Here is question number 0").stop == "done"
    notes: list[Any] = []
    warm = Keepalive(agent.context, agent.provider, clock=clock, thread=False, on_event=notes.append)
    first = keepalive.plan(agent.context, agent.provider, clock())
    assert first.cap >= 1 and first.due is not None
    idle(agent, clock, 3 * 3600, warm)
    pings = [c for c in agent.context.ledger.calls if c.purpose == "keepalive"]
    assert len(pings) == first.cap, "it pings until the pings cost what one rewrite would, then stops"
    spent = billed(fake, "gone", "keepalive")
    assert spent <= first.rewrite_usd * 1.01, (spent, first.rewrite_usd)
    texts = [getattr(n, "text", "") for n in notes]
    stopped = [t for t in texts if "stopped after" in t]
    assert stopped and f"(${spent:.4f}; they may cost about what rewriting" in stopped[0], stopped
    assert any("--cache-ttl 1h" in t for t in texts), "an hour of pings costs more than a one-hour write"


def test_nothing_is_pinged_where_it_cannot_pay(tmp_path: Path) -> None:
    clock = Clock()
    provider = ScriptedProvider([Message.assistant("hi")])  # a local-like profile: the cache never expires
    ctx = Context("system", (), clock=clock)
    ctx.add_user("hello")
    ctx.complete(provider)
    plan = keepalive.plan(ctx, provider, clock())
    assert plan.due is None


class Blocking(ScriptedProvider):
    """A provider whose ping waits until the test lets it go."""

    def __init__(self, replies: list[ModelResponse]) -> None:
        super().__init__(replies)
        self.pinging = threading.Event()
        self.release = threading.Event()

    def send(self, body: dict[str, Any], **kwargs: Any) -> ModelResponse:
        if body.get("max_tokens") == 1:
            self.pinging.set()
            assert self.release.wait(30), "the test never released the ping"
        return super().send(body, **kwargs)


def test_a_user_who_types_during_a_ping_loses_nothing() -> None:
    clock = Clock()
    usage = Usage(3000, 10, 0, 3000)  # a prefix the cache keeps
    replies = [tool_call("read_file", "c0", path="a"), Message.assistant(".")]
    provider = Blocking([ModelResponse(m, usage, "tool_use", "scripted") for m in replies])
    ctx = Context("system " * 400, (), clock=clock)
    ctx.add_user("read a")
    ctx.complete(provider)
    warm = Keepalive(ctx, provider, clock=clock, thread=False)
    before = [m.to_dict() for m in ctx.window()]
    prompt = keepalive.ping_prompt(ctx)
    assert [m.role for m in prompt.messages] == ["user"], "the ping ends before the pending tool call"
    typed = threading.Event()

    def user() -> None:
        with warm.idle():
            provider.pinging.wait(30)
        ctx.add_tool_result(_result("c0"))  # what the user's turn adds once idle() lets it go
        typed.set()

    pinger = threading.Thread(target=lambda: _tick_when_idle(warm, clock))
    person = threading.Thread(target=user)
    person.start()
    pinger.start()
    assert provider.pinging.wait(30)
    person.join(timeout=0.5)
    assert person.is_alive() and not typed.is_set(), "leaving idle() waits for the ping in flight"
    provider.release.set()
    pinger.join(30)
    person.join(30)
    assert typed.is_set()
    kinds = [e.kind for e in ctx.entries]
    assert kinds.index("tool_result") > max(i for i, k in enumerate(kinds) if k == "call_done")
    assert [m.to_dict() for m in ctx.window()][: len(before)] == before, "the ping added nothing to the window"
    assert list(repair(ctx.window())) == ctx.window(), "the conversation is legal"
    assert ctx.ledger.calls[-1].purpose == "keepalive"


def _tick_when_idle(warm: Keepalive, clock: Clock) -> None:
    while not warm._idle.is_set():
        threading.Event().wait(0.01)
    clock.now += 290
    warm.tick()


def _result(call_id: str) -> ToolResultBlock:
    return ToolResultBlock(call_id, "contents of a")


def test_a_ping_under_a_thinking_budget_is_priced_at_all_the_output_it_may_bill(tmp_path: Path, fake: Any) -> None:
    """The ping carries the run's budget (another one would lose the message cache), so its reply may
    think up to it: the plan prices it so, and its pings still cost at most one rewrite."""
    from tiny_agent.context.shrink.policy import decision_prices
    from tiny_agent.providers.thinking import parse_thinking

    clock = fake.test_clock
    agent = session(tmp_path, fake, clock, "budget")
    agent.provider = resolve_provider(
        "anthropic",
        model="claude-sonnet-4-6",
        base_url=fake.url("budget", "anthropic"),
        env=ENV,
        thinking=parse_thinking("2048"),
    )
    assert agent.run("Here is question number 0").stop == "done"
    found = keepalive.plan(agent.context, agent.provider, clock())
    prices = decision_prices(agent.provider.profile)
    assert found.ping_usd == pytest.approx(prices.read * found.prefix_tokens + prices.output * 2049)
    assert found.cap == int(found.rewrite_usd // found.ping_usd)
    assert keepalive.ping_prompt(agent.context).max_tokens == 1
    unthinking = resolve_provider(
        "anthropic", model="claude-sonnet-4-6", base_url=fake.url("budget", "anthropic"), env=ENV
    )
    plain = keepalive.plan(agent.context, unthinking, clock())
    assert found.ping_usd - plain.ping_usd == pytest.approx(prices.output * 2048)
