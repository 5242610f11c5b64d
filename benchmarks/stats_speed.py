"""How fast ``stats`` answers over a big store: 10,000 sessions, 200,000 model calls.

The store is built through ``SQLiteStore.append`` itself, one batch per session of typed entries
encoded by ``entry_codec.encode`` (its settings, its user inputs, each call with its response, tool
result and ``call_done``, compactions, run ends), each call priced by its provider's profile, so the
call index is filled as a real run fills it, and the entries carry bodies of a
realistic size (tool results of a few hundred characters) that ``stats`` must never have to read.
The store's clock is moved back so the sessions spread over 30 days (for ``--by day``).

    PYTHONPATH=src .venv/bin/python benchmarks/stats_speed.py          # writes benchmarks/results/stats_speed.json
    PYTHONPATH=src .venv/bin/python benchmarks/stats_speed.py --sessions 500 --calls 20   # a quick look

The build takes minutes (every append is a durable transaction); the timed part is ``stats``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from unittest import mock

from tiny_agent.context.entries import (
    CallDone,
    CallOpened,
    CompactionMark,
    ConfigChange,
    Response,
    RunChange,
    RunStop,
    ToolResult,
    TypedEntry,
    UserInput,
)
from tiny_agent.context.entry_codec import encode
from tiny_agent.context.tokens import CallRecord
from tiny_agent.observe import stats
from tiny_agent.observe.report import format_stats
from tiny_agent.providers.registry import offline_profile
from tiny_agent.store import sqlite as sqlite_store
from tiny_agent.store.base import NewEntry
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.types import TextBlock, ToolResultBlock, ToolUseBlock, Usage

RESULTS = Path(__file__).parent / "results" / "stats_speed.json"
SRC = Path(__file__).resolve().parents[1] / "src"
DAY = 86400.0
MODELS = [("anthropic", "claude-sonnet-4-6"), ("openai", "gpt-4o-mini"), ("local", "SmolLM2-135M-Instruct")]
PROFILES = {model: offline_profile(provider, model) for provider, model in MODELS}
"""Each model's profile: its calls are priced by its provider's real rules, as a run prices them."""
WINDOW = 128_000


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def session_entries(rng: random.Random, calls: int, start: float) -> list[NewEntry]:
    """One session's entries, typed and encoded as a run writes them: its settings, a request,
    ``calls`` calls (every ninth a summary), a run end."""
    provider, model = rng.choices(MODELS, weights=[6, 3, 1])[0]
    profile = PROFILES[model]
    stamped = rng.random() < 0.03
    system = "You are tiny-agent, a careful assistant working inside one folder."
    values: list[TypedEntry] = [
        RunChange({"provider": provider, "model": model}),
        ConfigChange({"system": system, "compact_at": 0.8}),
        UserInput((TextBlock("tour the files and tell me what they hold"),)),
    ]
    messages, size = 1, 3000
    previous_messages = None
    changes: list[str] = []
    for n in range(calls):
        if stamped:
            system = f"You are tiny-agent. Current time: 2026-12-01T10:{n // 60:02d}:{n % 60:02d}Z."
            values.append(ConfigChange({"system": system}))
        summary = n > 0 and n % 9 == 0
        purpose = "compaction" if summary else "turn"
        prints = {"tools": "t00c0ffee", "tool_names": ["read_file", "write_file", "list_dir"], "system": digest(system),
                  "pins": digest(""), "messages": messages, "chain": digest(f"{start}-{n}")}  # fmt: skip
        shared = None if previous_messages is None else (previous_messages if not changes else 1)
        seq_call = len(values)
        values.append(CallOpened(purpose, model, size * 4, prints, "", provider, tuple(changes), shared,
                                 WINDOW, int(0.8 * WINDOW)))  # fmt: skip
        read = 0 if (stamped or n == 0 or changes) else int(size * 0.9)
        write = size - read if provider == "anthropic" else None
        miss = None
        if stamped and n:
            miss = f'system prompt changed at character 34: now "...{n % 60:02d}Z.", was "...{(n - 1) % 60:02d}Z."'
        elif changes:
            miss = "a compaction replaced the conversation (expected: the next request reads the new prefix)"
        elif n and rng.random() < 0.04:
            read, miss = (
                0,
                f"the cache entry expired: {rng.randint(301, 3000):,}s since the previous request (lifetime 300s)",
            )
            write = size if provider == "anthropic" else None
        usage = Usage(size, rng.randint(20, 400), read, write)
        record = CallRecord(usage, profile.price(usage), rng.uniform(0.5, 9), model, None, purpose, "tool_use", miss,
                            None, f"msg_{start:.0f}{n}")  # fmt: skip
        if summary:
            values.append(CallDone(seq_call, record, (TextBlock("s" * 300),)))
            values.append(CompactionMark(seq_call - 1, messages - 3, "s" * 300, "", size, 2500))
            previous_messages, messages, size, changes = messages, 3, 2500, ["compaction"]
            continue
        use = ToolUseBlock(f"toolu_{n}", "read_file", {"path": f"f{n}.txt"})
        values.append(Response((use,), seq_call))
        values.append(CallDone(seq_call, record))
        values.append(ToolResult(ToolResultBlock(use.id, "words of a file " * 25)))
        previous_messages, changes = messages, []
        messages, size = messages + 2, size + rng.randint(200, 900)
    reason = rng.choices(["done", "budget", "step_limit"], weights=[90, 6, 4])[0]
    values.append(RunStop(reason, calls, ""))
    return [encode(value) for value in values]


def build(path: Path, sessions: int, calls: int, seed: int = 7) -> float:
    rng = random.Random(seed)
    end = time.time()
    clock = [end]
    began = time.perf_counter()
    with mock.patch.object(sqlite_store.time, "time", lambda: clock[0]), SQLiteStore(path) as store:
        for i in range(sessions):
            clock[0] = end - 30 * DAY + 30 * DAY * i / sessions
            info = store.create(workspace=f"/home/user/project{i % 20}")
            entries = session_entries(rng, calls, clock[0])
            store.append(info.id, entries, expected_head=-1)
            if i % 1000 == 999:
                print(f"  {i + 1:,} sessions written ({time.perf_counter() - began:.0f}s)", file=sys.stderr)
    return time.perf_counter() - began


def timed(store: SQLiteStore, repeats: int, as_json: bool, **kwargs: Any) -> tuple[list[float], Any]:
    """Seconds of ``stats`` and what the command does with it: the text report, or the whole JSON."""
    times, result = [], None
    for _ in range(repeats):
        began = time.perf_counter()
        result = stats(store, **kwargs)
        if as_json:
            json.dumps(result.to_dict(), ensure_ascii=False)
        else:
            format_stats(result, lambda sid: store.get(sid).title)
        times.append(time.perf_counter() - began)
    return times, result


def command_seconds(path: Path, *args: str) -> float:
    """Wall-clock of the whole command in a new process (interpreter start and imports included)."""
    began = time.perf_counter()
    subprocess.run([sys.executable, "-m", "tiny_agent", "stats", "--store", str(path), *args], check=True,
                   stdout=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": str(SRC)})  # fmt: skip
    return time.perf_counter() - began


def summary(times: list[float]) -> dict[str, Any]:
    return {
        "median": round(statistics.median(times), 3),
        "max": round(max(times), 3),
        "runs": [round(t, 3) for t in times],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--calls", type=int, default=20, help="calls per session")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--store", type=Path, help="keep the store here (default: a temporary folder)")
    parser.add_argument("--no-write", action="store_true", help="do not write the results file")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = args.store or Path(folder) / "big.db"
        if path.exists():
            print(f"using the existing store {path}", file=sys.stderr)
            built = None
        else:
            print(f"building {args.sessions:,} sessions x {args.calls} calls in {path}", file=sys.stderr)
            built = build(path, args.sessions, args.calls)
        timings: dict[str, list[float]] = {}
        with SQLiteStore(path) as store:
            timings["text"], result = timed(store, args.repeats, False)
            timings["text_by_day"], daily = timed(store, args.repeats, False, by="day")
            timings["json"], _ = timed(store, args.repeats, True)
            timings["json_by_day"], _ = timed(store, args.repeats, True, by="day")
        command = [command_seconds(path) for _ in range(2)]
        size = path.stat().st_size
    report = {
        "what": "tiny-agent stats over a store built through SQLiteStore.append (one batch per session); seconds of "
        "the library call plus its text report or its whole --json output",
        "command": "PYTHONPATH=src .venv/bin/python benchmarks/stats_speed.py",
        "date": time.strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores (shared), {platform.python_implementation()} "
        f"{platform.python_version()}, SQLite {sqlite3.sqlite_version}",
        "sessions": len(result.sessions),
        "calls": result.total.calls,
        "store_mb": round(size / 1e6, 1),
        "build_seconds": None if built is None else round(built, 1),
        "build": "SQLiteStore.append, one batch (one transaction) per session; the store's clock moved back to "
        "spread the sessions over 30 days",
        "seconds": {name: summary(times) for name, times in timings.items()},
        "command_seconds": [round(t, 2) for t in command],
        "days": len(daily.groups),
        "limit_seconds": 2.0,
        "within_limit": max(t for times in timings.values() for t in times) < 2.0,
        "figures": {
            k: result.total.to_dict()[k]
            for k in ("calls", "input_tokens", "cost_usd", "saved_usd", "hit_rate", "miss_causes", "budget_stops")
        },
    }
    print(json.dumps(report, indent=2))
    if not args.no_write:
        RESULTS.parent.mkdir(exist_ok=True)
        RESULTS.write_text(json.dumps(report, indent=2) + "\n")
        print(f"wrote {RESULTS}", file=sys.stderr)
    return 0 if report["within_limit"] else 1


if __name__ == "__main__":
    sys.exit(main())
