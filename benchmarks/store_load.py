"""Many writers at once on one store: 8 processes, 20 sessions each, appending at the same moment.

    PYTHONPATH=src python benchmarks/store_load.py            # both backends -> benchmarks/results/store_load.json
    PYTHONPATH=src python benchmarks/store_load.py --appends 10 --out /tmp/load.json   # a quick look

Each process opens the store (its own connection pool, or its own SQLite connection), creates its
sessions, waits for the others, then appends turn after turn to each of its sessions in turn, the way
a run writes them: a ``call``; a ``response`` with its ``call_done``; a ``tool_result``. Every append
is timed. Then the store is read back and checked: every session holds exactly the entries its
appends were told were written, its own, in order, seqs 0, 1, 2, ... without a gap (``lost``,
``interleaved``); an append that failed (``errors``, each counted) must have written nothing. The
same load runs against a SQLite file (WAL, synchronous=FULL) and a
throwaway PostgreSQL server on this machine (fsync and synchronous_commit on, as a real server runs).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import platform
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.pg_cluster import Cluster  # noqa: E402

from tiny_agent.store import open_store  # noqa: E402

TURN: list[list[str]] = [["call"], ["response", "call_done"], ["tool_result"]]
"""The batches of one turn, as a run appends them."""
PAD = "x" * 600
"""About the size of a small entry body; a tool result is larger."""


def body(kind: str, owner: str, n: int) -> dict[str, Any]:
    text = PAD * (4 if kind == "tool_result" else 1)
    return {"v": 1, "owner": owner, "n": n, "text": text}


def writer(location: str, proc: int, sessions: int, appends: int, start: Any, ready: Any, out: Any) -> None:
    latencies: list[float] = []
    errors: list[str] = []
    ids: list[tuple[str, str]] = []
    acked: dict[str, list[str]] = {}
    """The kinds of the entries each session's appends were told were written, in order."""
    try:
        store = open_store(location)
        heads: dict[str, int] = {}
        for s in range(sessions):
            info = store.create(workspace=f"/load/{proc}")
            heads[info.id] = -1
            acked[info.id] = []
            ids.append((info.id, f"{proc}/{s}"))
        ready.release()
        start.wait()
        for a in range(appends):
            kinds = TURN[a % len(TURN)]
            for sid, owner in ids:
                batch = [(kind, body(kind, owner, len(acked[sid]) + i)) for i, kind in enumerate(kinds)]
                began = time.perf_counter()
                try:
                    written = store.append(sid, batch, expected_head=heads[sid])
                    heads[sid] = written[-1].seq
                    acked[sid] += kinds
                except Exception as exc:  # counted; the batch was not written, and the run goes on
                    errors.append(f"{type(exc).__name__}: {exc}")
                latencies.append(time.perf_counter() - began)
        store.close()
    except Exception as exc:
        errors.append(f"{type(exc).__name__}: {exc}")
        ready.release()
    out.put(
        {
            "proc": proc,
            "latencies": latencies,
            "errors": errors,
            "ids": ids,
            "acked": acked,
            "done": time.perf_counter(),
        }
    )


def load(location: str, processes: int, sessions: int, appends: int) -> dict[str, Any]:
    ctx = multiprocessing.get_context("spawn")
    start, ready, out = ctx.Event(), ctx.Semaphore(0), ctx.Queue()
    procs = [
        ctx.Process(target=writer, args=(location, p, sessions, appends, start, ready, out)) for p in range(processes)
    ]
    for p in procs:
        p.start()
    for _ in procs:
        ready.acquire()  # every process has its store open and its sessions created
    began = time.perf_counter()
    start.set()
    results = [out.get(timeout=1800) for _ in procs]
    for p in procs:
        p.join(60)
    seconds = max(r["done"] for r in results) - began
    latencies = sorted(x for r in results for x in r["latencies"])
    errors = [e for r in results for e in r["errors"]]
    acked = {sid: kinds for r in results for sid, kinds in r["acked"].items()}
    lost, interleaved, entries = check(location, [i for r in results for i in r["ids"]], acked)
    quantiles = statistics.quantiles(latencies, n=100)
    return {
        "seconds": round(seconds, 2),
        "appends": len(latencies),
        "entries": entries,
        "entries_per_s": round(entries / seconds, 1),
        "appends_per_s": round(len(latencies) / seconds, 1),
        "append_ms_p50": round(quantiles[49] * 1000, 2),
        "append_ms_p99": round(quantiles[98] * 1000, 2),
        "append_ms_max": round(latencies[-1] * 1000, 2),
        "errors": len(errors),
        "first_errors": errors[:3],
        "lost": lost,
        "interleaved": interleaved,
    }


def check(location: str, ids: list[tuple[str, str]], acked: dict[str, list[str]]) -> tuple[int, int, int]:
    """(entries an append was told were written and the store does not hold, sessions whose entries
    are not exactly their own acknowledged ones in order, entries read)."""
    lost = interleaved = total = 0
    with open_store(location) as store:
        for sid, owner in ids:
            entries = store.entries(sid)
            total += len(entries)
            lost += max(0, len(acked[sid]) - len(entries))
            mine = [(e.seq, e.kind, e.body.get("owner"), e.body.get("n")) for e in entries]
            if mine != [(n, kind, owner, n) for n, kind in enumerate(acked[sid])]:
                interleaved += 1
    return lost, interleaved, total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--processes", type=int, default=8)
    parser.add_argument("--sessions", type=int, default=20, help="sessions per process")
    parser.add_argument("--appends", type=int, default=30, help="appends per session (a turn is three)")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "store_load.json")
    args = parser.parse_args()
    shape = (args.processes, args.sessions, args.appends)
    load_before = [round(x, 2) for x in os.getloadavg()]
    scratch = Path(tempfile.mkdtemp(prefix="tiny-agent-load-"))
    cluster = Cluster(Path(tempfile.mkdtemp(prefix="tiny-agent-pg-")))
    try:
        results: dict[str, Any] = {}
        results["sqlite"] = load(str(scratch / "sessions.db"), *shape)
        print("sqlite", json.dumps(results["sqlite"]))
        url = cluster.start().url()  # fsync, synchronous_commit and full_page_writes on
        results["postgresql"] = load(url, *shape)
        print("postgresql", json.dumps(results["postgresql"]))
        import psycopg

        with psycopg.connect(url) as db:
            version = str(db.execute("SHOW server_version").fetchone()[0])  # type: ignore[index]
    finally:
        cluster.stop()
        for path in scratch.iterdir():
            path.unlink()
        scratch.rmdir()
    report = {
        "what": "8 processes x 20 sessions appending at once to one store: entries/s and append latency",
        "command": "PYTHONPATH=src python benchmarks/store_load.py",
        "processes": args.processes,
        "sessions_per_process": args.sessions,
        "appends_per_session": args.appends,
        "batch": "a turn is 3 appends: [call], [response, call_done], [tool_result]; bodies 0.6-2.4 KB",
        "machine": {
            "cpus": os.cpu_count(),
            "load_average_before": load_before,
            "load_average_after": [round(x, 2) for x in os.getloadavg()],
        },
        "python": platform.python_version(),
        "sqlite": f"{sqlite3.sqlite_version} (WAL, synchronous=FULL, one file)",
        "postgresql": f"{version} (throwaway cluster on 127.0.0.1, fsync on, synchronous_commit on)",
        "results": results,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n")
    print(f"wrote {args.out}")
    # A SQLite writer may time out on the file's one write lock (counted, nothing written); the shared
    # database must take the whole load without an error, and no store may lose or mix an entry.
    bad = results["postgresql"]["errors"] or any(r["lost"] or r["interleaved"] for r in results.values())
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
