"""Sessions recorded against the billing fake, for the look-back tests: a tour of files (with
compactions), one whose system prompt carries a timestamp that changes before every call."""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from pathlib import Path

from tiny_agent.agent.loop import DEFAULT_SYSTEM, Agent, AgentConfig, Event, TurnEvent
from tiny_agent.context.engine import Context, ContextConfig
from tiny_agent.context.session import Session
from tiny_agent.providers.registry import resolve_provider
from tiny_agent.store.base import Store
from tiny_agent.testing import Bill, BillingFake, Task
from tiny_agent.tools.toolbox import Toolbox
from tiny_agent.tools.workspace import Workspace

ENV = {"ANTHROPIC_API_KEY": "sk-test-billing-fake-1", "OPENAI_API_KEY": "sk-test-billing-fake-2"}
MODELS = {"anthropic": "claude-sonnet-4-6", "openai": "gpt-4o-mini"}


def tour(root: Path, name: str, files: int) -> Task:
    """Read ``files`` files of about 2,000 tokens each, one per step."""
    for i in range(files):
        (root / f"{name}{i}.txt").write_text(f"line {i} of {name}, a long file with words " * 250)
    steps = [[("read_file", {"path": f"{name}{i}.txt"})] for i in range(files)]
    return Task(f"tour the {name} files", steps, f"All {name} files read.")


class Stamp:
    """A system prompt that says the time, moved on by a second before every call (the seed's crash)."""

    def __init__(self, context: Context) -> None:
        self.context = context
        self.now = datetime.datetime(2026, 12, 1, 10, 0, 0, tzinfo=datetime.UTC)
        self.set()

    def set(self) -> None:
        self.context.system = f"{DEFAULT_SYSTEM}\nCurrent time: {self.now:%Y-%m-%dT%H:%M:%SZ}."

    def __call__(self, event: Event) -> None:
        if isinstance(event, TurnEvent):
            self.now += datetime.timedelta(seconds=1)
            self.set()


def record(
    store: Store,
    fake: BillingFake,
    root: Path,
    wire: str,
    route: str,
    requests: Sequence[str],
    *,
    stamped: bool = False,
    config: ContextConfig | None = None,
    budget_usd: float | None = None,
    pin_before: int | None = None,
) -> str:
    """Run ``requests`` one after another in a new stored session on ``route``; returns its id.
    ``pin_before``: add a pin before that request (a change of the pins layer)."""
    provider = resolve_provider(wire, model=MODELS[wire], base_url=fake.url(route, wire), env=ENV)  # type: ignore[arg-type]
    toolbox = Toolbox(Workspace(root, code_tools=False).tools())  # the figures were measured on these three
    session = Session.start(
        store,
        workspace=str(root),
        tools=toolbox.specs,
        system=DEFAULT_SYSTEM,
        config=config or ContextConfig(compact_at=6000, keep_turns=2),
        settings={"provider": provider.name, "model": provider.model},
    )
    stamp = Stamp(session.context) if stamped else None
    agent = Agent(provider, toolbox, context=session.context, config=AgentConfig(budget_usd=budget_usd), on_event=stamp)
    for i, request in enumerate(requests):
        if pin_before == i:
            session.context.pin("Answer in one line.")
        agent.run(request)
    session.close()
    return session.id


def billed(fake: BillingFake, routes: Sequence[str]) -> list[Bill]:
    return [b for route in routes for b in fake.bills(route)]
