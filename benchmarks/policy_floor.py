"""Is the default policy at the floor? Each task shape run for real through the CLI, then swept in hindsight.

For each task shape, the task runs once through the real CLI (``python -m tiny_agent``) against the
billing fake (Anthropic's wire, claude-sonnet-4-6 prices, Anthropic's cache rules) with the default
policy and a pin. Then ``tiny-agent replay ID --sweep policy=fraction compact-at=... keep-turns=4``
replays that same session under fixed thresholds; the cheapest of them is the hindsight-best fixed
threshold, and the report gives the default's bill over it. The best threshold is then also run for
real, to check the replay's prediction against what the fake bills.

Shapes (none of them is the issue's held-out 40-read task):
- many small reads: 60 reads of 250-700 tokens of JSON, code and prose;
- a few large reads: 8 reads of 5k-9k tokens;
- a long chat with pauses: 14 messages, each a short task of 1-3 reads, with pauses of 1-20 minutes
  between some of them (the process runs on a shifted clock, see ``timeshift/``), keepalive off so the
  pauses bill as they would;
- mixed growth (a check of our own, not tuned on): reads that grow from 200 to 4,000 tokens.

    PYTHONPATH=src .venv/bin/python benchmarks/policy_floor.py [--shape NAME]

Writes benchmarks/results/policy_floor.json and policy_floor.txt (the commands and their output).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tiny_agent.testing import BillingFake, Task

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / "results" / "policy_floor.json"
TEXT = ROOT / "benchmarks" / "results" / "policy_floor.txt"
MODEL = "claude-sonnet-4-6"
PIN = "never change files under vendor/"
THRESHOLDS = [4000, 6000, 8000, 10000, 12000, 14000, 16000, 20000, 24000, 30000, 40000, 60000]
SHIFT = ROOT / "benchmarks" / "timeshift"
"""A sitecustomize that adds the seconds written in $TINY_AGENT_BENCH_SHIFT to time.time()."""


def prose(rng: random.Random, tokens: int) -> str:
    words = ["the", "service", "reads", "each", "setting", "at", "start", "and", "keeps", "it", "until", "stops"]
    out: list[str] = []
    while len(" ".join(out)) < tokens * 4:
        out.append(rng.choice(words))
    return " ".join(out)


def code(rng: random.Random, tokens: int) -> str:
    lines: list[str] = []
    n = 0
    while len("\n".join(lines)) < tokens * 4:
        n += 1
        lines.append(f"def handler_{n}(request, limit={rng.randint(1, 99)}):")
        lines.append(f"    value = request.get('k{n}', {rng.randint(0, 9)}) * limit")
        lines.append("    return {'ok': value > 0, 'value': value}\n")
    return "\n".join(lines)


def jsonish(rng: random.Random, tokens: int) -> str:
    rows: list[dict[str, Any]] = []
    while len(json.dumps(rows, indent=1)) < tokens * 4:
        rows.append({"id": len(rows), "name": f"item-{rng.randint(100, 999)}", "tags": ["a", "b"], "n": rng.random()})
    return json.dumps(rows, indent=1)


KINDS: list[Callable[[random.Random, int], str]] = [prose, code, jsonish]


@dataclass(frozen=True)
class Shape:
    name: str
    make: Callable[[Path], list[Task]]
    requests: list[tuple[float, str]]
    """(pause before, user text): a run has one; a chat several."""
    chat: bool = False


def reads(root: Path, sizes: list[int], prefix: str, seed: int) -> list[list[tuple[str, dict[str, Any]]]]:
    rng = random.Random(seed)
    steps = []
    for i, size in enumerate(sizes):
        name = f"{prefix}{i:02d}.txt"
        (root / name).write_text(KINDS[i % len(KINDS)](rng, size))
        steps.append([("read_file", {"path": name})])
    return steps


def small_reads(root: Path) -> list[Task]:
    rng = random.Random(1)
    steps = reads(root, [rng.randint(250, 700) for _ in range(60)], "small", 1)
    return [Task("check every small file", steps, answer="All sixty small files checked.")]


def large_reads(root: Path) -> list[Task]:
    rng = random.Random(2)
    steps = reads(root, [rng.randint(5000, 9000) for _ in range(8)], "large", 2)
    return [Task("review the large files", steps, answer="The eight large files are reviewed.")]


def growing_reads(root: Path) -> list[Task]:
    steps = reads(root, [200 + 170 * i for i in range(24)], "grow", 3)
    return [Task("read the growing files", steps, answer="All growing files read.")]


CHAT_PAUSES = [0, 60, 400, 90, 1200, 30, 420, 150, 60, 900, 45, 380, 120, 200]


def chat_tasks(root: Path) -> list[Task]:
    rng = random.Random(4)
    tasks = []
    for n in range(len(CHAT_PAUSES)):
        sizes = [rng.randint(400, 2500) for _ in range(rng.randint(1, 3))]
        steps = reads(root, sizes, f"chat{n:02d}_", 40 + n)
        tasks.append(Task(f"question number {n}", steps, answer=f"Answer {n}: looked at {len(sizes)} file(s)."))
    return tasks


SHAPES = [
    Shape("many small reads", small_reads, [(0, "Please check every small file, one by one.")]),
    Shape("a few large reads", large_reads, [(0, "Please review the large files, one by one.")]),
    Shape(
        "a long chat with pauses",
        chat_tasks,
        [(p, f"Here is question number {n}: what do the files say?") for n, p in enumerate(CHAT_PAUSES)],
        chat=True,
    ),
    Shape("growing reads (held out)", growing_reads, [(0, "Please read the growing files, in order.")]),
]


class Shift:
    """A clock shared with the CLI's process: real time plus the seconds in a file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.seconds = 0.0
        path.write_text("0")

    def pause(self, seconds: float) -> None:
        self.seconds += seconds
        self.path.write_text(repr(self.seconds))

    def now(self) -> float:
        return time.time() + self.seconds


def cli(args: list[str], env: dict[str, str], transcript: list[str], stdin: str | None = None) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "tiny_agent", *args], env=env, capture_output=True, text=True, timeout=900, input=stdin
    )
    transcript.append(f"$ {shlex.join(['tiny-agent', *args])}")
    transcript.extend((done.stdout + done.stderr).rstrip("\n").splitlines()[-12:])
    transcript.append("")
    if done.returncode != 0:
        raise SystemExit(f"tiny-agent {' '.join(args)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return done.stdout


def chat(args: list[str], env: dict[str, str], shape: Shape, shift: Shift, answers: list[str]) -> str:
    """A chat fed one message at a time, each after its pause (on the shifted clock) and once the
    previous answer was printed."""
    with tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "tiny_agent", "chat", *args],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
        )
        assert proc.stdin is not None and proc.stdout is not None
        out: list[str] = []
        for (pause, text), answer in zip(shape.requests, answers, strict=True):
            shift.pause(pause)
            proc.stdin.write(text + "\n")
            proc.stdin.flush()
            while answer not in (line := proc.stdout.readline()):
                if not line:
                    err.seek(0)
                    raise SystemExit(f"the chat ended early: {err.read()[-3000:]}")
                out.append(line)
            out.append(line)
        proc.stdin.close()
        out.append(proc.stdout.read())
        code = proc.wait(timeout=300)
        err.seek(0)
        errors = err.read()
    if code != 0:
        raise SystemExit(f"chat failed ({code}): {errors[-3000:]}")
    return "".join(out) + errors


def session_of(env: dict[str, str]) -> str:
    listing = cli(["sessions", "list", "--json"], env, [])
    return str(json.loads(listing)[0]["id"])


def run_shape(
    shape: Shape,
    fake: BillingFake,
    env: dict[str, str],
    ws: Path,
    shift: Shift,
    route: str,
    flags: list[str],
    transcript: list[str],
    answers: list[str],
) -> dict[str, Any]:
    """The shape run once through the CLI with ``flags``, billed on ``route`` of the fake."""
    url = fake.url(route, "anthropic")
    args = ["--provider", "anthropic", "--model", MODEL, "--base-url", url, "--workspace", str(ws), "--pin", PIN]
    args += ["--max-steps", "100"]
    if shape.chat:
        args = [*args, "--keepalive", "off", *flags]
        output = chat(args, env, shape, shift, answers)
        transcript.append(f"$ tiny-agent chat {shlex.join(args)}  (fed {len(answers)} messages, one by one)")
        transcript.extend(output.rstrip("\n").splitlines()[-6:])
        transcript.append("")
        session = session_of(env)
    else:
        done = cli([*args, *flags, "--json", shape.requests[0][1]], env, transcript)
        session = json.loads(done)["session"]
    bills = fake.bills(route)
    turns = [b for b in bills if not _summary(b.body)]
    first = shape.requests[0][1]
    return {
        "session": session,
        "billed_usd": sum(b.call.usd for b in bills),
        "calls": len(bills),
        "summaries": len(bills) - len(turns),
        "task_in_every_request": all(first in json.dumps(b.body) for b in turns),
        "pin_in_every_request": all(PIN in json.dumps(b.body) for b in bills),
    }


def _summary(body: Any) -> bool:
    from tiny_agent.testing.tasks import is_summary_request

    return is_summary_request(body, "anthropic")


def measure(shape: Shape, folder: Path, transcript: list[str]) -> dict[str, Any]:
    ws = folder / shape.name.replace(" ", "_")
    ws.mkdir()
    tasks = shape.make(ws)
    shift = Shift(folder / f"shift-{ws.name}")
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(folder),
        "PYTHONPATH": f"{SHIFT}{os.pathsep}{ROOT / 'src'}",
        "TINY_AGENT_BENCH_SHIFT": str(shift.path),
        "TINY_AGENT_STORE": str(folder / f"{ws.name}.db"),
        "ANTHROPIC_API_KEY": "sk-ant-policy-floor-not-a-real-key",
        "COLUMNS": "200",
    }
    answers = [t.answer for t in tasks]
    with BillingFake(tasks, clock=shift.now) as fake:
        default = run_shape(shape, fake, env, ws, shift, "default", [], transcript, answers)
    grid = ",".join(str(t) for t in THRESHOLDS)
    sweep = ["replay", default["session"][:12], "--sweep", "policy=fraction", f"compact-at={grid}", "keep-turns=4"]
    swept = json.loads(cli([*sweep, "--json"], env, []))["sweep"]
    cli(sweep, env, transcript)
    fixed = [
        {
            "compact_at": t,
            "predicted_usd": r["replayed"]["cost_usd"],
            "compactions": r["replayed"]["compactions"],
            "pins": r["replayed"]["every_pin_in_every_request"],
        }
        for t, r in zip(THRESHOLDS, swept, strict=True)
    ]
    best = min(fixed, key=lambda f: f["predicted_usd"])
    shift2 = Shift(folder / f"shift2-{ws.name}")
    env2 = {**env, "TINY_AGENT_BENCH_SHIFT": str(shift2.path), "TINY_AGENT_STORE": str(folder / f"{ws.name}-2.db")}
    fixed_flags = ["--compact-at", str(best["compact_at"]), "--keep-turns", "4", "--policy", "fraction"]
    with BillingFake(tasks, clock=shift2.now) as fake:
        real_best = run_shape(shape, fake, env2, ws, shift2, "best", fixed_flags, transcript, answers)
    floor = min(best["predicted_usd"], real_best["billed_usd"])
    return {
        "shape": shape.name,
        "default": default,
        "fixed_thresholds": fixed,
        "best_fixed": best,
        "best_fixed_run_for_real": real_best,
        "ratio_to_best_fixed": round(default["billed_usd"] / floor, 4),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", action="append", default=[])
    parser.add_argument("--out", type=Path, default=DATA)
    args = parser.parse_args()
    started = time.monotonic()
    transcript: list[str] = []
    rows = []
    with tempfile.TemporaryDirectory(prefix="policy-floor-") as tmp:
        for shape in SHAPES:
            if args.shape and not any(s in shape.name for s in args.shape):
                continue
            row = measure(shape, Path(tmp), transcript)
            rows.append(row)
            best = row["best_fixed"]
            default, real = row["default"], row["best_fixed_run_for_real"]
            print(
                f"{shape.name:<26} default ${default['billed_usd']:.4f} ({default['summaries']} summaries), best "
                f"{best['compact_at']} ${best['predicted_usd']:.4f} predicted, ${real['billed_usd']:.4f} run for real"
                f" · ratio {row['ratio_to_best_fixed']:.3f}",
                flush=True,
            )
    result = {
        "model": MODEL,
        "command": "PYTHONPATH=src .venv/bin/python benchmarks/policy_floor.py",
        "date": time.strftime("%Y-%m-%d"),
        "seconds": round(time.monotonic() - started, 1),
        "rows": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    if not args.shape:
        TEXT.write_text("\n".join(transcript) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
