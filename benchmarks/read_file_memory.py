"""Peak memory and time of read_file on a large file: streamed (today) against whole-file (before).

Generates a text file (600 MB by default) in a temporary folder, then runs each case in a fresh
Python process and reports its peak resident memory (``ru_maxrss``), the peak of Python allocations
(``tracemalloc``) and the wall time of the call. A process that only imports tiny-agent gives the
baseline. Writes benchmarks/results/read_file_memory.json.

    PYTHONPATH=src python benchmarks/read_file_memory.py [--size-mb 600] [--no-before]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "read_file_memory.json"
LINE = ("0123456789abcdef" * 7)[:99] + "\n"
"""100 bytes per line."""

CHILD = """
import json, resource, sys, time, tracemalloc
from pathlib import Path
from tiny_agent.tools.workspace import Workspace
root, case, lines = sys.argv[1], sys.argv[2], int(sys.argv[3])

def whole_file(path):
    # read_file before streaming: load, decode and split the whole file, then cut
    text = Path(path).read_bytes().decode("utf-8")
    parts = text.split("\\n")
    kept = [line + "\\n" for line in parts[:-1]]
    return "".join(kept[:1])

ws = Workspace(root)
tracemalloc.start()
started = time.perf_counter()
if case == "baseline":
    out = ""
elif case == "before: whole file, max_lines=1":
    out = whole_file(ws.root / "big.txt")
elif case == "max_lines=1":
    out = ws.read_file("big.txt", max_lines=1)
elif case == "no limit (cut at max_output_chars)":
    out = ws.read_file("big.txt")
elif case == "last line (start_line=N, reads it all)":
    out = ws.read_file("big.txt", start_line=lines)
else:
    raise SystemExit(f"unknown case {case}")
seconds = time.perf_counter() - started
_, traced_peak = tracemalloc.get_traced_memory()
peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"seconds": seconds, "peak_rss_mib": peak_kib / 1024, "python_peak_mib": traced_peak / 2**20,
                  "answer_chars": len(out), "answer_end": out[-120:]}))
"""


def generate(path: Path, size_mb: int) -> int:
    lines = size_mb * 1024 * 1024 // len(LINE)
    block = LINE * 10_000
    with open(path, "w", encoding="utf-8") as file:
        for _ in range(lines // 10_000):
            file.write(block)
        file.write(LINE * (lines % 10_000))
    return lines


def run_case(root: Path, case: str, lines: int) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(root), case, str(lines)], env=env, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise SystemExit(f"{case}: {done.stderr.strip()}")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=600)
    parser.add_argument("--no-before", action="store_true", help="skip the whole-file read (needs ~5x the file in RAM)")
    args = parser.parse_args()
    cases = ["baseline", "max_lines=1", "no limit (cut at max_output_chars)", "last line (start_line=N, reads it all)"]
    if not args.no_before:
        cases.append("before: whole file, max_lines=1")
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        started = time.perf_counter()
        lines = generate(root / "big.txt", args.size_mb)
        print(f"generated {args.size_mb} MB, {lines:,} lines in {time.perf_counter() - started:.1f}s", flush=True)
        results = {}
        for case in cases:
            results[case] = run_case(root, case, lines)
            r = results[case]
            print(
                f"{case:42} {r['seconds']:7.3f}s  peak RSS {r['peak_rss_mib']:8.1f} MiB  "
                f"Python peak {r['python_peak_mib']:8.1f} MiB",
                flush=True,
            )
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    report = {
        "file": {"size_mb": args.size_mb, "lines": lines, "bytes_per_line": len(LINE)},
        "python": platform.python_version(),
        "machine": f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs",
        "cases": results,
    }
    RESULTS.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
