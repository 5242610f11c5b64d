"""GPT-5.6's explicit caching through the real CLI, against the billing fake (no network, no key).

Three things a user would do, with their output:
1. a task on ``--provider openai --model gpt-5.6``: the per-call lines show the writes (1.25x) and reads
   (0.1x) the fake billed by the simulator's GPT-5.6 rules;
2. the same on an endpoint that refuses ``prompt_cache_options`` with a 400 (as a model or proxy that
   does not know it does): one line says it, and a resumed session does not send it again;
3. a session recorded on Anthropic (Sonnet 4.6) replayed as GPT-5.6: what it would have cost there.

The commands and their output go to benchmarks/results/gpt56_demo.txt, the figures to
benchmarks/results/gpt56_demo.json.

    PYTHONPATH=src .venv/bin/python benchmarks/gpt56_demo.py
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import time
from pathlib import Path
from typing import Any

from replay_demo import tiny_agent as run_cli

from tiny_agent.testing import BillingFake, Task

ROOT = Path(__file__).resolve().parents[1]
TEXT = ROOT / "benchmarks" / "results" / "gpt56_demo.txt"
DATA = ROOT / "benchmarks" / "results" / "gpt56_demo.json"
TASK = "Please tour the files of this folder, one by one."


def workspace(root: Path) -> Task:
    for i in range(6):
        line = f"Section {i}: the service reads setting number {i} at start and keeps it until it stops. "
        (root / f"part{i:02d}.txt").write_text(line * 90)
    steps = [[("read_file", {"path": f"part{i:02d}.txt"})] for i in range(6)]
    return Task("tour the files", steps, answer="All six parts read; each sets one value at start.")


def tiny_agent(args: list[str], env: dict[str, str], transcript: list[str]) -> str:
    done = run_cli(args, env, transcript)
    return done.stdout + done.stderr


def session_of(output: str) -> str:
    found = re.search(r"session ([0-9a-f]{12})", output)
    if found is None:
        raise SystemExit(f"no session id in:\n{output}")
    return found.group(1)


def main() -> int:
    transcript: list[str] = []
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="gpt56-demo-") as tmp:
        folder = Path(tmp)
        ws = folder / "ws"
        ws.mkdir()
        task = workspace(ws)
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(folder),
            "PYTHONPATH": str(ROOT / "src"),
            "TINY_AGENT_STORE": str(folder / "sessions.db"),
            "OPENAI_API_KEY": "sk-gpt56-demo-not-a-real-key",
            "ANTHROPIC_API_KEY": "sk-ant-gpt56-demo-not-a-real-key",
            "COLUMNS": "200",
        }
        common = ["--workspace", str(ws), "--policy", "fraction", "--compact-at", "12000", "--keep-turns", "2"]
        with BillingFake([task]) as fake:
            url = fake.url("gpt56", "openai")
            tiny_agent(
                ["--provider", "openai", "--model", "gpt-5.6", "--base-url", url, *common, TASK], env, transcript
            )
            bills = fake.bills("gpt56")
            results["gpt-5.6 run"] = {
                "calls": len(bills),
                "usd": round(sum(b.call.usd for b in bills), 6),
                "cache_read": sum(b.call.cache_read for b in bills),
                "cache_write": sum(b.call.cache_write for b in bills),
                "input": sum(b.call.input_tokens for b in bills),
            }
            url = fake.url("sonnet", "anthropic")
            out = tiny_agent(
                ["--provider", "anthropic", "--model", "claude-sonnet-4-6", "--base-url", url, *common, TASK],
                env,
                transcript,
            )
            sonnet = session_of(out)
            results["sonnet run usd"] = round(sum(b.call.usd for b in fake.bills("sonnet")), 6)
        replayed = tiny_agent(["replay", sonnet, "--provider", "openai", "--model", "gpt-5.6", "--json"], env, [])
        figures = json.loads(replayed)["replayed"]
        results["sonnet session replayed as gpt-5.6"] = {"usd": figures.get("cost_usd"), "calls": figures.get("calls")}
        tiny_agent(["replay", sonnet, "--provider", "openai", "--model", "gpt-5.6"], env, transcript)

        with BillingFake([task], refuses=["prompt_cache_options"]) as fake:
            url = fake.url("older", "openai")
            first = tiny_agent(
                ["--provider", "openai", "--model", "gpt-5.6", "--base-url", url, "--workspace", str(ws), TASK],
                env,
                transcript,
            )
            resumed = ["--provider", "openai", "--model", "gpt-5.6", "--base-url", url, "--workspace", str(ws)]
            tiny_agent([*resumed, "-c", "Thanks. Anything else?"], env, transcript)
            sent = [b.body.get("prompt_cache_options") is not None for b in fake.bills("older")]
            results["refused"] = {
                "session": session_of(first),
                "answered requests": len(sent),
                "answered requests carrying prompt_cache_options": sum(sent),
                "note": "the fake answers a request carrying prompt_cache_options with a 400 and bills nothing",
            }
    results["date"] = time.strftime("%Y-%m-%d")
    results["command"] = "PYTHONPATH=src .venv/bin/python benchmarks/gpt56_demo.py"
    TEXT.parent.mkdir(parents=True, exist_ok=True)
    TEXT.write_text(re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT", "\n".join(transcript)))
    DATA.write_text(json.dumps(results, indent=2) + "\n")
    print("\n".join(transcript))
    print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
