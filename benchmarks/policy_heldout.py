"""The default policy on task shapes it was not built on, and on a model with a high cache minimum.

The lead held these four shapes back from the engineers who built the cost policy, then ran them
with ``policy_floor``'s method (the task for real through the CLI against the billing fake, then
``tiny-agent replay --sweep`` over twelve fixed thresholds, the cheapest also run for real) on each
model given: claude-sonnet-4-6 (1,024-token cache minimum) and claude-haiku-4-5 (4,096).

    PYTHONPATH=src .venv/bin/python benchmarks/policy_heldout.py [MODEL ...]

Writes benchmarks/results/policy_heldout.json.
"""

from __future__ import annotations

import json
import random
import sys
import tempfile
import time
from pathlib import Path

import policy_floor as pf

from tiny_agent.testing import Task

RESULTS = Path(__file__).resolve().parent / "results" / "policy_heldout.json"


def forty_reads(root: Path) -> list[Task]:
    rng = random.Random(11)
    steps = pf.reads(root, [rng.randint(1200, 2600) for _ in range(40)], "f", 11)
    return [Task("read all forty files", steps, answer="All forty files read.")]


def writes(root: Path) -> list[Task]:
    rng = random.Random(12)
    steps = []
    for i in range(22):
        if i % 2 == 0:
            steps += pf.reads(root, [rng.randint(300, 700)], f"src{i:02d}_", 100 + i)
        body = pf.code(rng, rng.randint(800, 1600))
        steps.append([("write_file", {"path": f"out/gen{i:02d}.py", "content": body})])
    return [Task("generate the modules", steps, answer="All modules written.")]


def spiky(root: Path) -> list[Task]:
    rng = random.Random(13)
    sizes = [rng.randint(250, 500) for _ in range(28)]
    for at in (5, 13, 21):
        sizes[at] = 14000
    steps = pf.reads(root, sizes, "s", 13)
    return [Task("check the spiky files", steps, answer="Spiky files checked.")]


def parallel(root: Path) -> list[Task]:
    rng = random.Random(14)
    steps = []
    for g in range(12):
        group = pf.reads(root, [rng.randint(600, 1400) for _ in range(3)], f"p{g:02d}_", 200 + g)
        steps.append([c for s in group for c in s])
    return [Task("read the groups", steps, answer="All groups read.")]


SHAPES = [
    pf.Shape("forty reads of 1.2k-2.6k tokens", forty_reads, [(0, "Please read all forty files, one by one.")]),
    pf.Shape("writes with reads", writes, [(0, "Please generate the modules as planned.")]),
    pf.Shape("spiky reads (three of 14k)", spiky, [(0, "Please check the spiky files, in order.")]),
    pf.Shape("parallel reads in threes", parallel, [(0, "Please read the groups of files.")]),
]


def main() -> int:
    models = sys.argv[1:] or ["claude-sonnet-4-6", "claude-haiku-4-5"]
    rows = []
    for model in models:
        pf.MODEL = model
        with tempfile.TemporaryDirectory(prefix="policy-heldout-") as tmp:
            for shape in SHAPES:
                started = time.monotonic()
                row = pf.measure(shape, Path(tmp), [])
                row["model"] = model
                rows.append(row)
                d, b, r = row["default"], row["best_fixed"], row["best_fixed_run_for_real"]
                print(
                    f"{model:<18} {shape.name:<32} default ${d['billed_usd']:.4f} ({d['summaries']} summaries)"
                    f"  best fixed {b['compact_at']} ${b['predicted_usd']:.4f} replayed / ${r['billed_usd']:.4f} run"
                    f"  ratio {row['ratio_to_best_fixed']:.3f}  {time.monotonic() - started:.0f}s",
                    flush=True,
                )
    RESULTS.write_text(
        json.dumps(
            {
                "command": "PYTHONPATH=src .venv/bin/python benchmarks/policy_heldout.py " + " ".join(models),
                "rows": rows,
            },
            indent=1,
        )
        + "\n"
    )
    print(f"wrote {RESULTS}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
