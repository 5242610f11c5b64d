"""The size of the window after a compaction against the server's own count: the runs that
tests/test_estimates.py, tests/integration/test_estimates_local.py and
benchmarks/estimates_after_compaction.py each measure, written once.

The error of a compaction is (the size it recorded - the next request's billed input) / billed input.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tiny_agent.agent.loop import DEFAULT_SYSTEM, AgentConfig
from tiny_agent.agent.run import Run
from tiny_agent.agent.settings import RunSettings
from tiny_agent.context.engine import Context, ContextConfig
from tiny_agent.context.shrink.compaction import Compaction
from tiny_agent.providers.local.provider import LocalProvider
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.testing.billing import BillingFake
from tiny_agent.testing.contents import KINDS, content, mixed_reads, o200k_counter
from tiny_agent.testing.scripted import tool_call
from tiny_agent.testing.tasks import is_summary_request
from tiny_agent.tools.toolbox import Toolbox
from tiny_agent.tools.workspace import Workspace
from tiny_agent.types import Message, ToolResultBlock, Wire

__all__ = ["AfterCompactions", "after_compactions", "local_compaction"]


@dataclass(frozen=True)
class AfterCompactions:
    errors: list[float]
    """One per compaction that a turn followed."""
    compactions: int
    turns_after: int
    """Requests that followed a summary call (each compaction's next turn)."""
    counts: int
    """count_tokens requests the fake answered."""
    stop: str


def after_compactions(root: Path, wire: Wire, model: str, env: Mapping[str, str], *, count: bool) -> AfterCompactions:
    """A 16-file task of mixed content through ``wire``'s adapter against the billing fake (counting
    with o200k), compacting at 9,000 tokens; ``count=False`` turns off the count after a compaction."""
    ws = root / f"ws-{wire}-{count}"
    ws.mkdir()
    task = mixed_reads(ws)
    with BillingFake([task], counter=o200k_counter) as fake, SQLiteStore(root / f"{wire}{count}.db") as store:
        settings = RunSettings(provider=wire, model=model, base_url=fake.url("r", wire), workspace=str(ws))
        config = {"compact_at": 9000, "keep_turns": 2, "policy": "fraction"}
        with Run.open(store, settings=settings, config=config, env=env, agent=AgentConfig(max_steps=60)) as run:
            if not count:
                provider: Any = run.provider
                provider._profile = dataclasses.replace(provider.profile, free_count=False)
            stop = run.agent.run("Please read the mixed files one by one").stop
            marks = list(run.context.compactions)
        bills = fake.bills("r")
        counts = len(fake.counts("r"))

    def summary(bill: Any) -> bool:
        return is_summary_request(bill.body, wire)

    firsts = [b for prev, b in itertools.pairwise(bills) if summary(prev) and not summary(b)]
    pairs = zip(marks, firsts, strict=False)
    errors = [((m.tokens_after or 0) - b.call.input_tokens) / b.call.input_tokens for m, b in pairs]
    return AfterCompactions(errors, len(marks), len(firsts), counts, stop)


def local_compaction(root: Path, base_url: str, api_key: str) -> tuple[Compaction | None, int]:
    """Four files of mixed content read, a compaction keeping one turn, then one turn, on a llama.cpp
    server: the compaction, and the input the server reported for that turn."""
    toolbox = Toolbox(Workspace(str(root)).tools())
    config = ContextConfig(summary_max_tokens=48, policy="fraction", clear_after=None)
    ctx = Context(DEFAULT_SYSTEM, toolbox.specs, config=config)
    ctx.add_user("Read the four files and tell me what they hold.")
    for i, kind in enumerate(KINDS):
        ctx.add(tool_call("read_file", f"c{i}", path=f"{kind}.txt"))
        ctx.add_tool_result(ToolResultBlock(f"c{i}", content(kind, 700, seed=i)))
    ctx.add(Message.assistant("I have read them."))
    ctx.add_user("Now summarise what the JSON file holds.")
    with LocalProvider(base_url=base_url, api_key=api_key, max_tokens=16) as provider:
        done = ctx.compact(provider=provider, keep_turns=1)
        ctx.complete(provider)
    return done, ctx.ledger.calls[-1].usage.input_tokens or 0
