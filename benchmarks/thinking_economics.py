"""Does reasoning break the cache economics? The 40-file read task (one request, one tool loop) priced
with thinking on and off, each against naive full replay (no cache marks, no compaction).

The task runs on the billing fake with the thinking rules enforced (``testing.thinking_server``),
through the official SDKs: on Anthropic as claude-sonnet-5 (preserved thinking, so the compactions
fold the kept turns into the summary; thinking of 2,048 budget, billed as output) and on DeepSeek as
deepseek-v4-flash (reasoning_content, sent back on every tool-loop turn). Each run's cost is what the
fake billed, at genai-prices' prices where it has the model (else the wire's default model). The
acceptance: the ratio tiny-agent / naive with thinking on is within 10% of the same ratio with
thinking off. Both the whole bill and the context's share of it (the calls priced without their
output) are reported: the thinking output is the same under every context policy, so it moves the
whole-bill ratio towards 1 by itself, the more so the longer the model thinks.

    PYTHONPATH=src python benchmarks/thinking_economics.py   # writes benchmarks/results/thinking_economics.json

No network; about half a minute.
"""

from __future__ import annotations

import dataclasses
import json
import platform
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tiny_agent.agent.loop import Agent, AgentConfig
from tiny_agent.context.engine import ContextConfig
from tiny_agent.providers.base import Provider
from tiny_agent.providers.registry import resolve_provider
from tiny_agent.providers.thinking import parse_thinking
from tiny_agent.testing import BillingFake, Task
from tiny_agent.testing.thinking_server import ThinkingRules
from tiny_agent.tools.toolbox import Toolbox
from tiny_agent.tools.workspace import Workspace
from tiny_agent.types import CachePlan, Prompt

ENV = {"ANTHROPIC_API_KEY": "sk-bench", "DEEPSEEK_API_KEY": "sk-bench"}
FILES = 40
RESULT = Path(__file__).parent / "results" / "thinking_economics.json"
SETUPS = {
    "anthropic": ("anthropic", "claude-sonnet-5", "anthropic", "adaptive", "off"),
    "deepseek": ("deepseek", "deepseek-v4-flash", "openai", None, "off"),
    "anthropic_drop_block": ("anthropic", "claude-sonnet-5", "anthropic", "adaptive", "off"),
}
BINDINGS = {"anthropic_drop_block": "drop_block"}
"""Not the default (fold): drop_block, shown because it is cheaper only by what the model no longer
reads. After a compaction inside the loop the API drops a kept turn's block and every later one, so
until the next compaction the model sees none of its own reasoning, and those tokens are not billed."""


NAIVE = ContextConfig(compact_at=10**9, policy="fraction", summary="transcript", clear_after=None)
"""Naive full replay (as in cache_economics.py): no compaction; no cache marks (``NoMarks``)."""


class NoMarks:
    """A provider that sends no cache marks: naive full replay."""

    def __init__(self, inner: Provider) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def assemble(self, prompt: Prompt, messages: Sequence[Sequence[dict[str, Any]]]) -> dict[str, Any]:
        return self.inner.assemble(dataclasses.replace(prompt, cache=CachePlan(False, False, ())), messages)


def task(root: Path) -> Task:
    for i in range(FILES):
        (root / f"part{i:02d}.txt").write_text(f"line {i} of a long file with words " * 120)
    steps = [[("read_file", {"path": f"part{i:02d}.txt"})] for i in range(FILES)]
    return Task("read the forty files", steps, "All forty files read.")


def run(setup: str, thinking: str | None, naive: bool, words: int = 40) -> dict[str, Any]:
    name, model, wire, _, _ = SETUPS[setup]
    rules = ThinkingRules(words=words)
    with tempfile.TemporaryDirectory() as folder, BillingFake([task(Path(folder))], thinking=rules) as fake:
        url = fake.url("run", wire, provider=name)
        settings = parse_thinking(thinking, binding=BINDINGS.get(setup, "strict") if thinking != "off" else "strict")
        provider: Any = resolve_provider(name, model=model, base_url=url, env=ENV, thinking=settings)
        config = NAIVE if naive else ContextConfig()
        agent = Agent(
            NoMarks(provider) if naive else provider,
            Toolbox(Workspace(folder).tools()),
            config=AgentConfig(max_steps=200),
            context_config=config,
        )
        result = agent.run("Please read the forty files one by one")
        bills = fake.bills("run")
    assert result.stop == "done", result.error
    calls = agent.context.ledger.calls
    profile = provider.profile
    # The context's share of the bill: the same calls priced without their output (the model's words
    # and its thinking cost the same whatever the context policy).
    inputs = [profile.price(dataclasses.replace(b.call.usage(), output_tokens=0)) or 0.0 for b in bills]
    return {
        "usd": round(sum(b.call.usd for b in bills), 6),
        "input_usd": round(sum(inputs), 6),
        "calls": len(bills),
        "compactions": sum(1 for c in calls if c.purpose == "compaction"),
        "input_tokens": sum(b.call.input_tokens for b in bills),
        "cache_read": sum(b.call.cache_read for b in bills),
        "output_tokens": sum(b.call.output_tokens for b in bills),
        "reasoning_tokens": sum(c.usage.reasoning_tokens or 0 for c in calls),
        "requests_with_thinking_dropped": requests_with_thinking_dropped(rules),
        "output_price": profile.prices.output if profile.prices is not None else 0.0,
    }


def thinking_blocks_dropped(transformations: Sequence[Mapping[str, Any]]) -> int:
    """The thinking blocks the API dropped from one request (its ``input_transformations``)."""
    return sum(1 for t in transformations if t.get("type") == "thinking_block_dropped")


def requests_with_thinking_dropped(rules: ThinkingRules) -> int:
    """The requests whose thinking the API dropped, at least one block."""
    return sum(1 for t in rules.transformations if thinking_blocks_dropped(t))


SWEEP_WORDS = (0, 10, 30, 35, 40, 160)
"""Words of thinking per reply for the sweep (the fake thinks the same length in every reply); 30 and
35 bracket where the whole-bill drift crosses 10%."""


def sweep() -> list[dict[str, Any]]:
    """The Anthropic drift against the length of the model's thinking: the thinking output is the same
    under every context policy, so the longer the model thinks, the nearer 1 the whole-bill ratio."""
    off = run("anthropic", "off", False), run("anthropic", "off", True)
    rows = []
    for words in SWEEP_WORDS:
        agent, naive = run("anthropic", "adaptive", False, words), run("anthropic", "adaptive", True, words)
        ratio, base = agent["usd"] / naive["usd"], off[0]["usd"] / off[1]["usd"]
        context = agent["input_usd"] / naive["input_usd"]
        base_context = off[0]["input_usd"] / off[1]["input_usd"]
        # The summary calls' own thinking (their reasoning tokens beyond the naive run's), priced as output.
        summary_thinking = (agent["reasoning_tokens"] - naive["reasoning_tokens"]) * agent["output_price"]
        without = (agent["usd"] - summary_thinking) / naive["usd"]
        rows.append(
            {
                "words": words,
                "reasoning_tokens_per_turn": round(naive["reasoning_tokens"] / max(1, naive["calls"]), 1),
                "ratio_drift": round(ratio / base - 1, 4),
                "input_ratio_drift": round(context / base_context - 1, 4),
                "ratio_drift_without_summary_thinking": round(without / base - 1, 4),
            }
        )
        print(
            f"sweep: {words:>3} words of thinking a reply ({rows[-1]['reasoning_tokens_per_turn']} tokens): "
            f"whole-bill drift {rows[-1]['ratio_drift']:+.1%}, context drift {rows[-1]['input_ratio_drift']:+.1%}, "
            f"whole bill without the summaries' thinking {rows[-1]['ratio_drift_without_summary_thinking']:+.1%}"
        )
    return rows


def main() -> None:
    started = time.time()
    rows: dict[str, Any] = {}
    for setup, (_, model, _, on, off) in SETUPS.items():
        figures = {}
        for label, thinking in (("thinking_on", on), ("thinking_off", off)):
            agent, naive = run(setup, thinking, False), run(setup, thinking, True)
            figures[label] = {
                "tiny_agent": agent,
                "naive": naive,
                "ratio": round(agent["usd"] / naive["usd"], 4),
                "input_ratio": round(agent["input_usd"] / naive["input_usd"], 4),
            }
        on, off = figures["thinking_on"], figures["thinking_off"]
        drift = on["ratio"] / off["ratio"] - 1
        input_drift = on["input_ratio"] / off["input_ratio"] - 1
        rows[setup] = {
            "model": model,
            **figures,
            "ratio_drift": round(drift, 4),
            "input_ratio_drift": round(input_drift, 4),
            "within_10_percent": abs(drift) <= 0.10,
            "input_within_10_percent": abs(input_drift) <= 0.10,
        }
        print(
            f"{setup:<10} {model:<18} whole bill: ratio on {on['ratio']:.3f} off {off['ratio']:.3f} "
            f"drift {drift:+.1%} · context only: on {on['input_ratio']:.3f} off {off['input_ratio']:.3f} "
            f"drift {input_drift:+.1%}"
        )
    RESULT.parent.mkdir(exist_ok=True)
    out = {
        "sweep": sweep(),
        "command": "PYTHONPATH=src python benchmarks/thinking_economics.py",
        "task": f"{FILES} file reads in one request (one tool loop)",
        "python": platform.python_version(),
        "seconds": round(time.time() - started, 1),
        "setups": rows,
    }
    RESULT.write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
