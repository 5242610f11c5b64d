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
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from tiny_agent.testing.estimates import after_compactions, local_compaction

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "estimates_after_compaction.json"
MODELS = {"anthropic": "claude-sonnet-4-6", "openai": "gpt-4o-mini"}
ENV = {"ANTHROPIC_API_KEY": "sk-ant-bench-not-a-real-key", "OPENAI_API_KEY": "sk-bench-not-a-real-key"}


def fake_path(root: Path, wire: str, count: bool) -> list[float]:
    run = after_compactions(root, wire, MODELS[wire], ENV, count=count)
    if run.turns_after != run.compactions:
        raise SystemExit(f"{wire}: {run.compactions} compactions, but {run.turns_after} turns after one")
    return run.errors


def local_path(root: Path) -> list[float]:
    from tiny_agent.providers.local.llama_server import LlamaServer, find_default_model

    server = LlamaServer(find_default_model(), ctx_size=4096).start()
    try:
        done, served = local_compaction(root, server.base_url, server.api_key)
        after = (done.tokens_after or 0) if done is not None else 0
        return [(after - served) / (served or 1)]
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
