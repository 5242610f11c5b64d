"""The miss in the clock: when more time passed between two requests than the previous one's cache
entries live, the per-call diagnosis, ``lint`` (given the times) and the view name the same rule,
``cache-expired`` at ``$``, from one function (``providers.cache_expiry``); within the lifetime,
none of them names anything."""

from __future__ import annotations

from pathlib import Path

import pytest

from tiny_agent.agent.loop import DEFAULT_SYSTEM, Agent
from tiny_agent.context.engine import Context, ContextConfig
from tiny_agent.context.log import MemoryLog
from tiny_agent.observe.lint import lint_bodies
from tiny_agent.observe.view.data import SessionView, diagnosed_break
from tiny_agent.providers.cache_expiry import expired, lifetime_of
from tiny_agent.providers.registry import resolve_provider
from tiny_agent.providers.wire import cache_rules
from tiny_agent.store.base import SessionInfo
from tiny_agent.testing import BillingFake, Task
from tiny_agent.tools.toolbox import Toolbox
from tiny_agent.tools.workspace import Workspace

from .recorded import ENV, MODELS

SYSTEM = DEFAULT_SYSTEM + "\nProject notes: keep every answer short and exact. " * 150


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def _two_turns(root: Path, idle: float) -> tuple[list[str | None], SessionView]:
    """Two questions ``idle`` seconds apart on the billing fake (one clock for the fake, the engine and
    its log): each call's miss line, and the session as the view and ``lint --session`` read it."""
    clock = Clock()
    tasks = [Task("question one", [], "One."), Task("question two", [], "Two.")]
    with BillingFake(tasks, clock=clock) as fake:
        url = fake.url("r", "anthropic")
        provider = resolve_provider("anthropic", model=MODELS["anthropic"], base_url=url, env=ENV)
        toolbox = Toolbox(Workspace(root, code_tools=False).tools())
        context = Context(SYSTEM, toolbox.specs, log=MemoryLog(clock=clock), clock=clock, config=ContextConfig())
        agent = Agent(provider, toolbox, context=context)
        agent.run("question one")
        clock.now += idle
        agent.run("question two")
        bills = fake.bills("r")
    assert [b.call.cache_read > 0 for b in bills] == [False, idle <= 300]  # what the server did
    misses = [c.miss for c in context.ledger.calls]
    info = SessionInfo("s-expiry", clock.now, clock.now, str(root), "question one", context.entries[-1].seq)
    return misses, SessionView.of(info, list(context.entries))


def test_an_expired_entry_is_named_alike_by_the_diagnosis_lint_and_the_view(tmp_path: Path) -> None:
    misses, view = _two_turns(tmp_path, idle=400)
    assert misses[1] is not None and misses[1].startswith("the cache entry expired: 400s since the previous request")
    assert diagnosed_break(misses[1]) == ("cache-expired", "$", None)
    timed = view.timed_bodies()
    findings = lint_bodies([b for _, b, _ in timed], times=[t for _, _, t in timed])
    assert [(f.request, f.rule, f.path) for f in findings if f.rule == "cache-expired"] == [(1, "cache-expired", "$")]
    assert [(b["rule"], b["path"]) for b in view.call(1)["breaks"]] == [("cache-expired", "$")]
    # Without the times (plain bodies), lint cannot know: it says nothing of the clock.
    assert not [f for f in lint_bodies([b for _, b, _ in timed]) if f.rule == "cache-expired"]


def test_within_the_lifetime_nothing_is_named(tmp_path: Path) -> None:
    misses, view = _two_turns(tmp_path, idle=100)
    assert misses == [None, None]
    timed = view.timed_bodies()
    findings = lint_bodies([b for _, b, _ in timed], times=[t for _, _, t in timed])
    assert not [f for f in findings if f.severity != "info"]
    assert view.call(1)["breaks"] == []


@pytest.mark.parametrize(("ttl", "lifetime"), [(None, 300.0), ("5m", 300.0), ("1h", 3600.0)])
def test_the_lifetime_is_the_longest_breakpoint_ttl(ttl: str | None, lifetime: float) -> None:
    mark = {"type": "ephemeral", **({"ttl": ttl} if ttl else {})}
    body = {
        "model": "claude-sonnet-4-6",
        "system": [{"type": "text", "text": "stable " * 900, "cache_control": mark}],
        "messages": [{"role": "user", "content": "hi"}],
    }
    rules = cache_rules("claude-sonnet-4-6", "anthropic")
    assert lifetime_of(body, "anthropic", rules) == lifetime
    assert expired(body, lifetime, "anthropic", rules) is None
    gone = expired(body, lifetime + 1, "anthropic", rules)
    assert gone is not None and gone.rule == "cache-expired" and gone.tokens_lost > 0
