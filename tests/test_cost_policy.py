"""The cost policy: compact at the threshold whose cycle costs least, and bill no more than the best
fixed threshold found in hindsight.

The floor test records a task for real through the adapters against the billing fake, then sweeps
fixed thresholds over the same session with the replay: the default must cost at most 3% more than
the cheapest of them, with the task and the pin in every request.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from tiny_agent.agent.loop import AgentConfig
from tiny_agent.agent.run import Run
from tiny_agent.agent.settings import RunSettings
from tiny_agent.context.engine import Context, ContextConfig
from tiny_agent.context.shrink.policy import ANTHROPIC_RATIOS, Cycle, best_threshold
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.testing import BillingFake, ScriptedProvider, Task, tool_call
from tiny_agent.testing.tasks import is_summary_request
from tiny_agent.types import Message, ToolResultBlock, ToolSpec
from tiny_agent.whatif.replay import replay, sweep

from .recorded import ENV, MODELS

READ = ToolSpec("read_file", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}})
PIN = "never touch the vendor folder"


def cycle(growth: float, summary: int = 200, keep: int = 4) -> Cycle:
    return Cycle(growth, fixed=500, summary=summary, record=400, instructions=100, keep_turns=keep, reserve=1024)


def test_the_chosen_threshold_costs_least_per_turn() -> None:
    c = cycle(600)
    best = best_threshold(ANTHROPIC_RATIOS, c, 200_000)
    cost = c.cost_per_turn(ANTHROPIC_RATIOS, best)
    for other in (best * 0.5, best * 0.8, best * 1.25, best * 2, 200_000):
        assert cost <= c.cost_per_turn(ANTHROPIC_RATIOS, other) + 1e-12


def test_the_threshold_follows_the_cost_of_a_compaction_and_the_growth() -> None:
    cheap, dear = cycle(600, summary=50), cycle(600, summary=2000)
    assert best_threshold(ANTHROPIC_RATIOS, cheap, 10**6) < best_threshold(ANTHROPIC_RATIOS, dear, 10**6)
    assert best_threshold(ANTHROPIC_RATIOS, cycle(300), 10**6) < best_threshold(ANTHROPIC_RATIOS, cycle(5000), 10**6)
    assert best_threshold(ANTHROPIC_RATIOS, cycle(600), 3000) <= 3000, "compact_at stays a ceiling"
    assert best_threshold(ANTHROPIC_RATIOS, cycle(0), 50_000) == 50_000, "a window that does not grow"


def test_the_threshold_stays_where_the_kept_half_is_still_cached() -> None:
    """On a model with a 4,096-token cache minimum (Haiku 4.5), a compaction must leave a window that
    is cached: at least twice the minimum, of which a compaction keeps at most half."""
    c = cycle(300)
    free = best_threshold(ANTHROPIC_RATIOS, c, 200_000)
    assert free < 8192, "the cycle alone would compact below it"
    assert best_threshold(ANTHROPIC_RATIOS, c, 200_000, floor=8192) >= 8192
    assert best_threshold(ANTHROPIC_RATIOS, c, 6000, floor=8192) == 6000, "compact_at stays a ceiling"


def grown(turns: int, size: int, clock: list[float], config: ContextConfig | None = None) -> Context:
    ctx = Context("system prompt " * 50, (READ,), pins=[PIN], config=config, clock=lambda: clock[0])
    ctx.add_user("read every file")
    provider = ScriptedProvider([tool_call("read_file", f"c{i}", path=f"f{i}") for i in range(turns)])
    for i in range(turns):
        ctx.complete(provider)
        ctx.add_tool_result(ToolResultBlock(f"c{i}", f"line {i} of the file\n" * size))
    return ctx


def test_the_policy_waits_while_a_compaction_would_not_pay_then_compacts() -> None:
    clock = [1000.0]
    config = ContextConfig(clear_after=None)
    provider = ScriptedProvider([Message.assistant("the summary")] * 2)
    assert grown(2, 200, clock, config).maybe_compact(provider) is None, "two small turns: nothing to gain"
    ctx = grown(14, 200, clock, config)
    done = ctx.maybe_compact(provider)
    assert done is not None, "fourteen turns far below compact_at: the cycle says compact"
    assert done.tokens_before is not None and done.tokens_before < ctx.threshold(provider) / 5


def test_a_huge_keep_turns_decides_as_keeping_every_turn_would(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keeping a hundred million turns is keeping all there are: the decision must not count down
    from a hundred million (it took minutes at 100% CPU), and it is the one keeping them all makes."""
    from tiny_agent.context.shrink import policy as shrink  # where the cut that fits a threshold is chosen

    cuts: list[int] = []
    choose = shrink.choose_cut

    def counted(messages: Any, keep: int) -> int | None:
        cuts.append(keep)
        if len(cuts) > 1000:
            pytest.fail(f"counting down from keep_turns: {cuts[:3]} ...")
        return choose(messages, keep)

    monkeypatch.setattr(shrink, "choose_cut", counted)
    done = {}
    for keep in (100_000_000, 14):
        ctx = grown(14, 200, [1000.0], ContextConfig(clear_after=None, keep_turns=keep))
        done[keep] = ctx.maybe_compact(ScriptedProvider([Message.assistant("the summary")]))
    assert done[100_000_000] is not None and done[14] is not None
    assert done[100_000_000].cut == done[14].cut
    assert 0 < len(cuts) < 100, "counted down from the turns there are"


def test_a_cold_cache_gets_its_summary_from_the_transcript() -> None:
    clock = [1000.0]
    ctx = grown(4, 200, clock, ContextConfig(clear_after=None))
    provider = ScriptedProvider([Message.assistant("the summary")] * 2)
    assert ctx.maybe_compact(provider) is None, "warm: not due yet"
    clock[0] += 3600  # past the 5-minute lifetime: the next request rewrites the whole window anyway
    assert ctx.maybe_compact(provider) is not None, "cold: compacting now saves most of that rewrite"
    body = provider.requests[-1]
    assert body["tool_choice"] == {"type": "none"} and "<transcript>" in json.dumps(body["messages"])


def small_reads(root: Path) -> Task:
    rng = random.Random(5)
    steps = []
    for i in range(36):
        (root / f"f{i:02d}.txt").write_text(" ".join(f"word{rng.randint(0, 999)}" for _ in range(rng.randint(90, 260))))
        steps.append([("read_file", {"path": f"f{i:02d}.txt"})])
    return Task("check the files", steps, "All checked.")


@pytest.mark.parametrize("wire", ["anthropic", "openai"])
def test_the_default_costs_at_most_three_percent_over_the_best_fixed_threshold(tmp_path: Path, wire: str) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    task = small_reads(ws)
    with BillingFake([task]) as fake, SQLiteStore(tmp_path / "s.db") as store:
        given = RunSettings(provider=wire, model=MODELS[wire], base_url=fake.url("d", wire), workspace=str(ws))
        with Run.open(store, settings=given, pins=[PIN], env=ENV, agent=AgentConfig(max_steps=80)) as run:
            assert run.agent.run("Please check the files one by one").stop == "done"
            assert run.session is not None
            entries = store.entries(run.session.id)
        bills = fake.bills("d")
    billed = sum(b.call.usd for b in bills)
    turns = [b for b in bills if not is_summary_request(b.body, wire)]
    assert len(turns) < len(bills), "the default compacted"
    assert all("check the files one by one" in json.dumps(b.body) and PIN in json.dumps(b.body) for b in turns)
    assert replay(entries).replayed.cost_usd == pytest.approx(billed, rel=0.01)
    thresholds = [2000, 3000, 4000, 5000, 6000, 8000, 10000, 12000, 16000, 20000, 30000]
    swept = sweep(entries, {"policy": ["fraction"], "compact_at": thresholds, "keep_turns": [4]})
    assert all(r.replayed.every_pin_in_every_request for r in swept)
    best = min(r.replayed.cost_usd or 0.0 for r in swept)
    assert billed <= 1.03 * best, (billed, best)
