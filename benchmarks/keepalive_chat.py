"""The keepalive in a real chat: the CLI against the billing fake, the user away for seven minutes.

``tiny-agent chat`` runs as a process whose clock runs five times faster than the machine's (the
``timeshift`` sitecustomize, shared with the billing fake), so seven minutes pass in about ninety
seconds; the keepalive is on, as it is by default in a chat. The chat's lines go to
benchmarks/results/keepalive_chat.txt, the bill to keepalive_chat.json.

    PYTHONPATH=src .venv/bin/python benchmarks/keepalive_chat.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from tiny_agent.testing import BillingFake, Task

ROOT = Path(__file__).resolve().parents[1]
TEXT = ROOT / "benchmarks" / "results" / "keepalive_chat.txt"
DATA = ROOT / "benchmarks" / "results" / "keepalive_chat.json"
SPEED = 5.0
PAUSE = 420.0


class FastClock:
    """Real time since the start times SPEED, written to a file the chat's process reads."""

    def __init__(self, path: Path) -> None:
        self.path, self.start = path, time.time()
        self.stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def now(self) -> float:
        return self.start + (time.time() - self.start) * SPEED

    def _run(self) -> None:
        while not self.stopped.is_set():
            self.path.write_text(repr(self.now() - time.time()))
            time.sleep(0.05)


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="keepalive-") as tmp:
        folder = Path(tmp)
        (folder / "notes.txt").write_text("The release ships on Friday; the freeze starts Wednesday noon.\n" * 200)
        tasks = [
            Task("first question", [[("read_file", {"path": "notes.txt"})]], "It ships on Friday."),
            Task("second question", [], "The freeze starts on Wednesday at noon."),
        ]
        clock = FastClock(folder / "shift")
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(folder),
            "PYTHONPATH": f"{ROOT / 'benchmarks' / 'timeshift'}{os.pathsep}{ROOT / 'src'}",
            "TINY_AGENT_BENCH_SHIFT": str(folder / "shift"),
            "TINY_AGENT_STORE": str(folder / "s.db"),
            "ANTHROPIC_API_KEY": "sk-ant-keepalive-demo-not-a-real-key",
            "COLUMNS": "200",
        }
        with BillingFake(tasks, clock=clock.now) as fake:
            url = fake.url("chat", "anthropic")
            args = ["chat", "--provider", "anthropic", "--model", "claude-sonnet-4-6", "--base-url", url]
            proc = subprocess.Popen(
                [sys.executable, "-m", "tiny_agent", *args, "--workspace", str(folder)],
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
            assert proc.stdin is not None and proc.stdout is not None
            lines: list[str] = []
            proc.stdin.write("Here is the first question: when does it ship?\n")
            proc.stdin.flush()
            while "Friday." not in (line := proc.stdout.readline()):
                if not line:
                    raise SystemExit("the chat ended early:\n" + "".join(lines))
                lines.append(line)
            lines.append(line)
            time.sleep(PAUSE / SPEED)  # the user is away for seven minutes of the cache's time
            proc.stdin.write("And the second question: when is the freeze?\n")
            proc.stdin.close()
            lines.append(proc.stdout.read())
            proc.wait(timeout=120)
            bills = fake.bills("chat")
        clock.stopped.set()
    transcript = [
        f"$ tiny-agent {' '.join(args[:-2])} --base-url <billing fake>   (the user away {PAUSE / 60:.0f} minutes)",
        *(line.rstrip("\n") for line in lines if line.strip()),
    ]
    TEXT.write_text("\n".join(transcript) + "\n")
    calls = [
        {
            "max_tokens": b.body.get("max_tokens"),
            "input": b.call.input_tokens,
            "cache_read": b.call.cache_read,
            "cache_write": b.call.cache_write,
            "usd": round(b.call.usd, 6),
        }
        for b in bills
    ]
    DATA.write_text(json.dumps({"command": "PYTHONPATH=src .venv/bin/python benchmarks/keepalive_chat.py",
                                "pause_seconds": PAUSE, "calls": calls}, indent=1) + "\n")  # fmt: skip
    print("\n".join(transcript))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
