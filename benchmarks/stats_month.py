"""How fast ``stats --by day`` and ``--by month`` (ccusage's tables) answer over a month of work:
2,500 sessions of 20 calls, 50,000 calls spread over 30 days, built as ``stats_speed.py`` builds its
store (every entry through ``SQLiteStore.append``).

    PYTHONPATH=src .venv/bin/python benchmarks/stats_month.py     # writes benchmarks/results/stats_month.json

The build takes a minute or more; the timed parts are ``usage_table`` and the whole command (a new
process: interpreter start and imports included; the text form also computes the summary above
the table, the whole of ``stats``; ``--format csv|json`` writes the table alone).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from stats_speed import build, command_seconds

from tiny_agent.observe.usage import usage_lines, usage_table
from tiny_agent.store.sqlite import SQLiteStore

RESULTS = Path(__file__).parent / "results" / "stats_month.json"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=2_500)
    parser.add_argument("--calls", type=int, default=20, help="calls per session")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--no-write", action="store_true", help="do not write the results file")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "month.db"
        built = build(path, args.sessions, args.calls)
        timings: dict[str, list[float]] = {}
        rows: dict[str, int] = {}
        with SQLiteStore(path) as store:
            for by in ("day", "month", "block"):
                times = []
                for _ in range(args.repeats):
                    began = time.perf_counter()
                    table = usage_table(store, by, timezone="UTC", breakdown=by == "month")  # type: ignore[arg-type]
                    usage_lines(table)
                    times.append(time.perf_counter() - began)
                timings[f"usage_table_{by}"] = times
                rows[by] = len(table.rows)
                calls = table.total.calls
        command = [command_seconds(path, "--by", "day") for _ in range(3)]
        monthly = [command_seconds(path, "--by", "month", "--breakdown") for _ in range(3)]
        csv_daily = [command_seconds(path, "--by", "day", "--format", "csv") for _ in range(3)]
        json_monthly = [command_seconds(path, "--by", "month", "--format", "json") for _ in range(3)]
    report = {
        "command": "PYTHONPATH=src .venv/bin/python benchmarks/stats_month.py",
        "date": time.strftime("%Y-%m-%d"),
        "machine": f"{platform.system()} {platform.machine()}, Python {platform.python_version()}",
        "sessions": args.sessions,
        "calls": calls,
        "build_seconds": round(built, 1),
        "rows": rows,
        "median_seconds": {k: round(statistics.median(v), 3) for k, v in timings.items()},
        "command_seconds": {
            "stats --by day": round(statistics.median(command), 3),
            "stats --by month --breakdown": round(statistics.median(monthly), 3),
            "stats --by day --format csv": round(statistics.median(csv_daily), 3),
            "stats --by month --format json": round(statistics.median(json_monthly), 3),
        },
        "limit_seconds": 2.0,
    }
    print(json.dumps(report, indent=2))
    if not args.no_write:
        RESULTS.parent.mkdir(exist_ok=True)
        RESULTS.write_text(json.dumps(report, indent=2) + "\n")
        print(f"wrote {RESULTS}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
