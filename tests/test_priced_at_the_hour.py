"""A call is priced at the hour it was sent, and a replay prices each call at its own hour: DeepSeek
V4's price changes with the hour of the day in genai-prices' data (00:10 UTC costs half of 09:00),
so a session recorded at 00:10 replayed at twice its bill an hour later, whatever the policy. A
simulated clock that starts at 0 is priced now, not at a model's first, older price."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest

from tiny_agent.agent.loop import Agent, AgentConfig
from tiny_agent.context.engine import Context, ContextConfig
from tiny_agent.context.log import MemoryLog
from tiny_agent.providers.pricing import price_usd
from tiny_agent.providers.registry import resolve_provider
from tiny_agent.testing import BillingFake, Task
from tiny_agent.tools.toolbox import Toolbox
from tiny_agent.tools.workspace import Workspace
from tiny_agent.types import Usage
from tiny_agent.whatif.replay import replay

MODEL = "deepseek-v4-flash"
OFF_PEAK = datetime.datetime(2026, 12, 6, 0, 10, tzinfo=datetime.UTC).timestamp()
PEAK = datetime.datetime(2026, 12, 6, 9, 0, tzinfo=datetime.UTC).timestamp()


def test_the_data_has_an_off_peak_price() -> None:
    usage = Usage(100_000, 1_000, 50_000, 0)
    off, on = price_usd(usage, MODEL, "deepseek", OFF_PEAK), price_usd(usage, MODEL, "deepseek", PEAK)
    assert off is not None and on is not None and off == pytest.approx(on / 2)


def test_a_session_recorded_off_peak_is_priced_and_replayed_off_peak(tmp_path: Path) -> None:
    for i in range(12):
        (tmp_path / f"part{i}.txt").write_text(f"line {i} of a file " * 80)
    task = Task("read", [[("read_file", {"path": f"part{i}.txt"})] for i in range(12)], "Read.")
    now = [OFF_PEAK]

    def clock() -> float:
        now[0] += 2.0
        return now[0]

    log = MemoryLog(clock=clock)
    context = Context(log=log, clock=clock, config=ContextConfig(compact_at=3000, keep_turns=1, policy="fraction"))
    with BillingFake([task]) as fake:
        url = fake.url("r", "openai", provider="deepseek")
        provider = resolve_provider("deepseek", model=MODEL, base_url=url, env={"DEEPSEEK_API_KEY": "k"})
        agent = Agent(provider, Toolbox(Workspace(tmp_path).tools()), context=context, config=AgentConfig())
        assert agent.run("read the files").stop == "done"
    calls = context.ledger.calls
    assert any(c.purpose == "compaction" for c in calls)
    at_the_hour = [price_usd(c.usage, MODEL, "deepseek", OFF_PEAK) for c in calls]
    assert [c.cost_usd for c in calls] == pytest.approx(at_the_hour)
    result = replay(list(log.entries))
    assert result.replayed.cost_usd == pytest.approx(result.recorded.cost_usd)
    assert result.recorded.cost_usd == pytest.approx(sum(x or 0.0 for x in at_the_hour))


def test_a_simulated_clock_is_priced_now() -> None:
    usage = Usage(100_000, 1_000, 50_000, 0)
    for model, maker in ((MODEL, "deepseek"), ("o3", "openai")):
        assert price_usd(usage, model, maker, 1000.0) == price_usd(usage, model, maker)
