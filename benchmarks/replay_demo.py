"""Record a task through the real CLI against the billing fake, then ask what other policies would cost.

The task tours 12 files of about 2,000 tokens each on Anthropic's wire (claude-sonnet-4-6 prices);
the billing fake answers as a scripted model and bills each request by Anthropic's cache rules. The
task runs for real under three fixed thresholds (A: compact at 12,000 tokens keeping 2 turns, B: at
20,000 keeping 4, C: 80% of the window keeping 4; ``--policy fraction``), then each session is
replayed under the others, and a sweep is run over A (fixed thresholds, and the cost policy with each
as its ceiling). The commands and their output go to benchmarks/results/replay_demo.txt, the
predictions to benchmarks/results/replay_demo.json.

    PYTHONPATH=src .venv/bin/python benchmarks/replay_demo.py
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from tiny_agent.testing import BillingFake, Task

ROOT = Path(__file__).resolve().parents[1]
TEXT = ROOT / "benchmarks" / "results" / "replay_demo.txt"
DATA = ROOT / "benchmarks" / "results" / "replay_demo.json"
MODEL = "claude-sonnet-4-6"
FIXED = ["--policy", "fraction"]
"""Fixed thresholds: the cost policy (the default) would compact below them when the prices say so."""
POLICIES = {
    "A": ["--compact-at", "12000", "--keep-turns", "2", *FIXED],
    "B": ["--compact-at", "20000", "--keep-turns", "4", *FIXED],
    "C": ["--compact-at", "0.8", "--keep-turns", "4", *FIXED],
}
FLAGS = {"A": {"compact_at": 12000, "keep_turns": 2}, "B": {"compact_at": 20000, "keep_turns": 4}}
FLAGS["C"] = {"compact_at": 0.8, "keep_turns": 4}
for flags in FLAGS.values():
    flags["policy"] = "fraction"
TASK = "Please tour the files of this folder, one by one."


def workspace(root: Path) -> Task:
    for i in range(12):
        line = f"Section {i}: the service reads setting number {i} at start and keeps it until it stops. "
        (root / f"part{i:02d}.txt").write_text(line * 90)
    steps = [[("read_file", {"path": f"part{i:02d}.txt"})] for i in range(12)]
    return Task("tour the files", steps, answer="All twelve parts read; each sets one value at start.")


def tiny_agent(args: list[str], env: dict[str, str], transcript: list[str]) -> subprocess.CompletedProcess[str]:
    shown = ["tiny-agent", *args]
    done = subprocess.run(
        [sys.executable, "-m", "tiny_agent", *args], env=env, capture_output=True, text=True, timeout=300
    )
    transcript.append(f"$ {shlex.join(shown)}")
    transcript.extend((done.stdout + done.stderr).rstrip("\n").splitlines())
    transcript.append("")
    if done.returncode != 0:
        raise SystemExit(f"tiny-agent {' '.join(args)} failed ({done.returncode}):\n{done.stderr}")
    return done


def main() -> int:
    transcript: list[str] = []
    results: dict[str, Any] = {"model": MODEL, "policies": FLAGS, "sessions": {}, "predictions": []}
    with tempfile.TemporaryDirectory(prefix="replay-demo-") as tmp:
        folder = Path(tmp)
        ws = folder / "ws"
        ws.mkdir()
        task = workspace(ws)
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(folder),
            "PYTHONPATH": str(ROOT / "src"),
            "TINY_AGENT_STORE": str(folder / "sessions.db"),
            "ANTHROPIC_API_KEY": "sk-ant-replay-demo-not-a-real-key",
            "COLUMNS": "200",
        }
        with BillingFake([task]) as fake:
            for name, flags in POLICIES.items():
                url = fake.url(f"policy{name}", "anthropic")
                args = ["--provider", "anthropic", "--model", MODEL, "--base-url", url, "--workspace", str(ws)]
                done = tiny_agent([*args, *flags, "--json", TASK], env, transcript)
                session = json.loads(done.stdout)["session"]
                billed = sum(b.call.usd for b in fake.bills(f"policy{name}"))
                results["sessions"][name] = {
                    "session": session,
                    "billed_usd": billed,
                    "calls": len(fake.bills(f"policy{name}")),
                }
        ids = {name: s["session"] for name, s in results["sessions"].items()}
        tiny_agent(["replay", ids["A"][:12], *POLICIES["B"]], env, transcript)
        tiny_agent(
            [
                "replay",
                ids["A"][:12],
                "--sweep",
                "compact-at=12000,20000,0.5",
                "keep-turns=2,4",
                "policy=fraction,cost",
            ],
            env,
            transcript,
        )
        for source in POLICIES:
            for target in POLICIES:
                if source == target:
                    continue
                done = tiny_agent(["replay", ids[source][:12], *POLICIES[target], "--json"], env, [])
                predicted = json.loads(done.stdout)["replayed"]["cost_usd"]
                real = results["sessions"][target]["billed_usd"]
                results["predictions"].append(
                    {
                        "recorded": source,
                        "replayed_under": target,
                        "predicted_usd": predicted,
                        "billed_usd": real,
                        "error_percent": round(100 * (predicted - real) / real, 2),
                    }
                )
    TEXT.parent.mkdir(parents=True, exist_ok=True)
    TEXT.write_text("\n".join(transcript) + "\n")
    DATA.write_text(json.dumps(results, indent=2) + "\n")
    for row in results["predictions"]:
        print(
            f"{row['recorded']} replayed under {row['replayed_under']}: predicted ${row['predicted_usd']:.4f}, "
            f"billed ${row['billed_usd']:.4f} ({row['error_percent']:+.2f}%)"
        )
    print(f"wrote {TEXT.relative_to(ROOT)} and {DATA.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
