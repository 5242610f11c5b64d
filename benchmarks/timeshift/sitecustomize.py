"""For benchmarks only: time.time() plus the seconds written in the file $TINY_AGENT_BENCH_SHIFT.

benchmarks/policy_floor.py puts this folder on PYTHONPATH of the CLI processes it runs, so a chat can
pause for twenty minutes of the cache's time in a second of the machine's; the billing fake reads the
same file. Nothing outside benchmarks/ imports it.
"""

import os
import time

_path = os.environ.get("TINY_AGENT_BENCH_SHIFT")
if _path:
    _real = time.time

    def _shifted() -> float:
        try:
            with open(_path) as f:
                return _real() + float(f.read() or 0)
        except (OSError, ValueError):
            return _real()

    time.time = _shifted
