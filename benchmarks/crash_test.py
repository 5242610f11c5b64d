"""The crash test of issue 7, as a script: every kill point, the outcome table, results to JSON.

    PYTHONPATH=src python benchmarks/crash_test.py                    # all cases -> benchmarks/results/crash_test.json
    PYTHONPATH=src python benchmarks/crash_test.py --only tool --keep  # some cases; keep their folders
    PYTHONPATH=src python benchmarks/crash_test.py --postgres          # against PostgreSQL -> crash_test_postgres.json

The same cases run in ``tests/crash/test_crash.py``; see ``tests/crash/harness.py`` for what a case
is and what is checked after each kill.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import platform
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.crash.harness import (  # noqa: E402
    deterministic_cases,
    format_table,
    postgres_cases,
    real_cli_cases,
    resume_cases,
    run_cases,
    sabotage_cases,
    table,
    timed_cases,
    trace,
)
from tests.pg_cluster import Cluster  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", help="run only the cases whose name contains this")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--keep", action="store_true", help="keep the cases' folders (printed at the end)")
    parser.add_argument("--sabotage", action="store_true", help="also run the deliberately broken engines")
    parser.add_argument("--trace", action="store_true", help="list every kill point of a run without a kill, and stop")
    parser.add_argument(
        "--postgres", action="store_true", help="each case in a database of a throwaway PostgreSQL server"
    )
    parser.add_argument(
        "--out", type=Path, help="results file (default: benchmarks/results/crash_test[_postgres].json)"
    )
    args = parser.parse_args()
    results = ROOT / "benchmarks" / "results"
    args.out = args.out or results / ("crash_test_postgres.json" if args.postgres else "crash_test.json")
    with contextlib.ExitStack() as stack:
        server = None
        if args.postgres:
            cluster = Cluster(Path(tempfile.mkdtemp(prefix="tiny-agent-pg-")))
            stack.callback(cluster.stop)
            server = cluster.start().url()  # fsync on, as a real server runs
        return run(args, server)


def run(args: argparse.Namespace, postgres: str | None) -> int:
    if args.trace:
        with tempfile.TemporaryDirectory(prefix="tiny-agent-trace-") as scratch:
            for hit in trace(Path(scratch), postgres):
                print(f"run {hit['run'][-1]}  {hit['point']:20} #{hit['n']:<3} {hit['label']}")
        return 0

    cases = [*deterministic_cases(), *resume_cases(), *timed_cases(), *real_cli_cases()]
    if postgres:
        cases += postgres_cases()
    if args.sabotage:
        cases += sabotage_cases()
    if args.only:
        cases = [c for c in cases if args.only in c.name]
    folder = Path(tempfile.mkdtemp(prefix="tiny-agent-crash-"))
    started = time.monotonic()
    outcomes = run_cases(cases, folder, workers=args.workers, postgres=postgres)
    seconds = time.monotonic() - started
    for line in format_table(outcomes):
        print(line)
    summary = table([o for o in outcomes if not o.sabotage])
    sabotaged = [o for o in outcomes if o.sabotage]
    if sabotaged:
        summary["sabotage_caught"] = f"{sum(bool(o.failures) for o in sabotaged)} of {len(sabotaged)}"
    print(json.dumps(summary, indent=2))
    print(f"{len(cases)} cases in {seconds:.0f} s with {args.workers} workers")
    if not args.only:
        result = {
            "what": "SIGKILL a real tiny-agent run at many moments, resume it, check the log and the work (issue 7)",
            "python": platform.python_version(),
            "store": "postgresql" if postgres else "sqlite",
            "sqlite": sqlite3.sqlite_version,
            **({"postgresql": _server_version(postgres)} if postgres else {}),
            "seconds": round(seconds, 1),
            "workers": args.workers,
            "summary": summary,
            "cases": [o.summary() for o in outcomes],
        }
        args.out.parent.mkdir(parents=True, exist_ok=True)
        head = json.dumps({k: v for k, v in result.items() if k != "cases"}, indent=1, ensure_ascii=False)
        rows = ",\n".join(f"  {json.dumps(case, ensure_ascii=False)}" for case in result["cases"])
        args.out.write_text(f'{head[:-2]},\n "cases": [\n{rows}\n ]\n}}\n')  # one line per case
        print(f"wrote {args.out}")
    if args.keep:
        print(f"case folders: {folder}")
    else:
        import shutil

        shutil.rmtree(folder, ignore_errors=True)
    broken = [o for o in outcomes if not o.sabotage and o.failures]
    caught = [o for o in outcomes if o.sabotage and not o.failures]
    return 1 if broken or caught else 0


def _server_version(url: str) -> str:
    import psycopg

    with psycopg.connect(url) as db:
        return str(db.execute("SHOW server_version").fetchone()[0])  # type: ignore[index]


if __name__ == "__main__":
    sys.exit(main())
