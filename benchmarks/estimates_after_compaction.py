"""How far is the engine's size of the window after a compaction from the server's own count?

Per provider path, on tool output of JSON, code, prose and other scripts (testing.contents):
- Anthropic and OpenAI: a 16-file task through the adapters (the official SDKs) against the billing
  fake, which counts every block with o200k (a real BPE tokenizer, unlike the characters-over-four the
  engine's estimator resembles) and answers Anthropic's count_tokens like the API; OpenAI models are
  counted offline with tiktoken. Each run twice: with the count after each compaction (the default)
  and without it (the estimate alone, as before).
- llama.cpp: the real server with the embedded model; the local provider counts every prompt with
  the server (/apply-template + /tokenize). One compaction, then one turn.
The error is (size recorded on the compaction - the next request's billed input) / billed input.

    PYTHONPATH=src .venv/bin/python benchmarks/estimates_after_compaction.py [--no-local]

Writes benchmarks/results/estimates_after_compaction.json.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from tiny_agent.agent.loop import DEFAULT_SYSTEM, AgentConfig
from tiny_agent.agent.run import Run
from tiny_agent.agent.settings import RunSettings
from tiny_agent.agent.tools import Toolbox
from tiny_agent.agent.workspace import Workspace
from tiny_agent.context.engine import Context, ContextConfig
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.testing import BillingFake, tool_call
from tiny_agent.testing.contents import KINDS, content, mixed_reads, o200k_counter
from tiny_agent.testing.tasks import is_summary_request
from tiny_agent.types import Message, ToolResultBlock

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "estimates_after_compaction.json"
MODELS = {"anthropic": "claude-sonnet-4-6", "openai": "gpt-4o-mini"}
ENV = {"ANTHROPIC_API_KEY": "sk-ant-bench-not-a-real-key", "OPENAI_API_KEY": "sk-bench-not-a-real-key"}


def fake_path(root: Path, wire: str, count: bool) -> list[float]:
    ws = root / f"ws-{wire}-{count}"
    ws.mkdir()
    task = mixed_reads(ws)
    with BillingFake([task], counter=o200k_counter) as fake, SQLiteStore(root / f"{wire}{count}.db") as store:
        settings = RunSettings(provider=wire, model=MODELS[wire], base_url=fake.url("r", wire), workspace=str(ws))
        config = {"compact_at": 9000, "keep_turns": 2, "policy": "fraction"}
        with Run.open(store, settings=settings, config=config, env=ENV, agent=AgentConfig(max_steps=60)) as run:
            if not count:
                provider: Any = run.provider
                provider._profile = dataclasses.replace(provider.profile, free_count=False)
            run.agent.run("Please read the mixed files one by one")
            marks = list(run.context.compactions)
        bills = fake.bills("r")
    firsts = [b for a, b in itertools.pairwise(bills) if is_summary_request(a.body, wire)]
    firsts = [b for b in firsts if not is_summary_request(b.body, wire)]
    pairs = zip(marks, firsts, strict=True)
    return [((m.tokens_after or 0) - b.call.input_tokens) / b.call.input_tokens for m, b in pairs]


def local_path(root: Path) -> list[float]:
    from tiny_agent.providers.llama_server import LlamaServer, find_default_model
    from tiny_agent.providers.local import LocalProvider

    server = LlamaServer(find_default_model(), ctx_size=4096).start()
    try:
        toolbox = Toolbox(Workspace(root).tools())
        ctx = Context(DEFAULT_SYSTEM, toolbox.specs, config=ContextConfig(summary_max_tokens=48, clear_after=None))
        ctx.add_user("Read the four files and tell me what they hold.")
        for i, kind in enumerate(KINDS):
            ctx.add(tool_call("read_file", f"c{i}", path=f"{kind}.txt"))
            ctx.add_tool_result(ToolResultBlock(f"c{i}", content(kind, 700, seed=i)))
        ctx.add(Message.assistant("I have read them."))
        ctx.add_user("Now summarise what the JSON file holds.")
        with LocalProvider(base_url=server.base_url, api_key=server.api_key, max_tokens=16) as provider:
            done = ctx.compact(provider=provider, keep_turns=1)
            ctx.complete(provider)
        served = ctx.ledger.calls[-1].usage.input_tokens or 1
        after = (done.tokens_after or 0) if done is not None else 0
        return [(after - served) / served]
    finally:
        server.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-local", action="store_true")
    args = parser.parse_args()
    started = time.monotonic()
    rows: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="estimates-") as tmp:
        root = Path(tmp)
        for wire in ("anthropic", "openai"):
            for count in (True, False):
                errors = fake_path(root, wire, count)
                key = f"{wire} ({'counted' if count else 'estimate only'})"
                rows[key] = {"errors": [round(e, 4) for e in errors], "worst": round(max(errors, key=abs), 4)}
                print(f"{key:<30} {len(errors)} compactions, worst {rows[key]['worst']:+.2%}", flush=True)
        if not args.no_local:
            errors = local_path(root)
            rows["llama.cpp (counted by the server)"] = {"errors": [round(e, 4) for e in errors]}
            print(f"{'llama.cpp (server count)':<30} {errors[0]:+.2%}", flush=True)
    out = {
        "command": "PYTHONPATH=src .venv/bin/python benchmarks/estimates_after_compaction.py",
        "date": time.strftime("%Y-%m-%d"),
        "seconds": round(time.monotonic() - started, 1),
        "paths": rows,
    }
    RESULTS.write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
