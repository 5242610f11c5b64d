"""Which compaction to run with thinking on (issue 27)? The three options on Anthropic, each against
naive full replay, on a task long enough that the server's trigger fires:

- ``fold`` (the default): tiny-agent's own compaction, the kept turns folded into the summary;
- ``drop_block``: tiny-agent's own compaction, the turns kept, the API drops the blocks it must;
- ``server``: Anthropic's server-side compaction (``compact_20260112``) at its smallest trigger,
  50,000 input tokens, with tiny-agent's own compaction set above it (``compact_at`` 180,000,
  ``fraction``) so that the server compacts first.

fold and drop_block run with the default ``ContextConfig``; nothing is tuned per option. The task:
60 reads of ~2,000-token files in one request (one tool loop), claude-sonnet-5 with preserved
thinking (budget 2,048), on the billing fake with the thinking rules and server compaction enforced
(``testing.thinking_server``, ``testing.anthropic_compaction``), through the official SDK. Each
run's cost is what the fake billed (a server compaction's two passes included).

    PYTHONPATH=src python benchmarks/compaction_options.py   # writes benchmarks/results/compaction_options.json

No network; about a minute.
"""

from __future__ import annotations

import datetime
import json
import platform
import tempfile
import time
from pathlib import Path
from typing import Any

from thinking_economics import NAIVE, NoMarks, requests_with_thinking_dropped, thinking_blocks_dropped

from tiny_agent.agent.loop import Agent, AgentConfig
from tiny_agent.context.engine import ContextConfig
from tiny_agent.providers.registry import resolve_provider
from tiny_agent.providers.thinking import parse_thinking
from tiny_agent.testing import BillingFake, Task
from tiny_agent.testing.anthropic_compaction import ServerCompaction
from tiny_agent.testing.thinking_server import ThinkingRules
from tiny_agent.tools.toolbox import Toolbox
from tiny_agent.tools.workspace import Workspace

ENV = {"ANTHROPIC_API_KEY": "sk-bench"}
MODEL = "claude-sonnet-5"
FILES = 60
TRIGGER = 50_000
RESULT = Path(__file__).parent / "results" / "compaction_options.json"
OPTIONS: dict[str, tuple[str, ContextConfig, int | None]] = {
    "fold": ("strict", ContextConfig(), None),
    "drop_block": ("drop_block", ContextConfig(), None),
    "server": ("strict", ContextConfig(compact_at=180_000, policy="fraction"), TRIGGER),
    "naive": ("strict", NAIVE, None),
}
"""Option -> (thinking block binding, tiny-agent's context config, the server's trigger)."""


def task(root: Path) -> Task:
    for i in range(FILES):
        line = f"File {i}: the service reads setting {i} when it starts, and logs it at level {i % 7}. "
        (root / f"f{i:02d}.txt").write_text(line * 95)
    steps = [[("read_file", {"path": f"f{i:02d}.txt"})] for i in range(FILES)]
    return Task("read the sixty files", steps, "All sixty files read.")


def run(option: str) -> dict[str, Any]:
    binding, config, trigger = OPTIONS[option]
    compaction, rules = ServerCompaction(), ThinkingRules()
    with (
        tempfile.TemporaryDirectory() as folder,
        BillingFake([task(Path(folder))], thinking=rules, compaction=compaction) as fake,
    ):
        thinking = parse_thinking("adaptive", binding=binding)
        url = fake.url("run", "anthropic")
        provider: Any = resolve_provider(
            "anthropic", model=MODEL, base_url=url, env=ENV, thinking=thinking, compact_threshold=trigger
        )
        agent = Agent(
            NoMarks(provider) if option == "naive" else provider,
            Toolbox(Workspace(folder).tools()),
            config=AgentConfig(max_steps=200),
            context_config=config,
        )
        result = agent.run("Please read the sixty files one by one")
        bills = fake.bills("run")
    assert result.stop == "done", result.error
    assert rules.rejected == [] and compaction.rejected == [], (rules.rejected[:1], compaction.rejected[:1])
    calls = agent.context.ledger.calls
    return {
        "usd": round(sum(b.call.usd for b in bills), 6),
        "calls": len(bills),
        "own_compactions": len(agent.context.state.compactions),
        "server_compactions": compaction.compactions,
        "max_request_tokens": max(b.call.input_tokens for b in bills),
        "input_tokens": sum(b.call.input_tokens for b in bills),
        "cache_read": sum(b.call.cache_read for b in bills),
        "output_tokens": sum(b.call.output_tokens for b in bills),
        "reasoning_tokens": sum(c.usage.reasoning_tokens or 0 for c in calls),
        "recorded_usd": round(sum(c.cost_usd or 0.0 for c in calls), 6),
        # What drop_block's price leaves out: once a kept turn's block is dropped, every later one is
        # too, so until the next compaction the model reads none of its own reasoning.
        "thinking_blocks_dropped": sum(thinking_blocks_dropped(t) for t in rules.transformations),
        "requests_with_thinking_dropped": requests_with_thinking_dropped(rules),
    }


def main() -> None:
    started = time.time()
    rows = {option: run(option) for option in OPTIONS}
    naive = rows["naive"]["usd"]
    for option, row in rows.items():
        row["ratio"] = round(row["usd"] / naive, 4)
        print(
            f"{option:<11} ${row['usd']:.4f}  {row['ratio']:.3f}x naive  calls {row['calls']}  "
            f"own compactions {row['own_compactions']}  server compactions {row['server_compactions']}  "
            f"largest request {row['max_request_tokens']:,} tokens  "
            f"requests whose thinking the API dropped {row['requests_with_thinking_dropped']}"
        )
    RESULT.parent.mkdir(exist_ok=True)
    out = {
        "command": "PYTHONPATH=src python benchmarks/compaction_options.py",
        "date": datetime.date.today().isoformat(),
        "task": f"{FILES} reads of ~2,000-token files in one request (one tool loop), {MODEL}, thinking adaptive",
        "server_trigger": TRIGGER,
        "python": platform.python_version(),
        "seconds": round(time.time() - started, 1),
        "options": rows,
    }
    RESULT.write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
