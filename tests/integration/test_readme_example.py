"""The README's library example runs as printed, on the embedded model, and says what the README shows."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import require_local_model

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


def readme_example() -> str:
    match = re.search(r"^```python\n(.*?)^```", (ROOT / "README.md").read_text(), re.M | re.S)
    assert match, "README.md has no Python example"
    return match[1]


def test_the_readme_library_example_runs_as_printed(tmp_path: Path) -> None:
    require_local_model()
    shutil.copytree(ROOT / "examples" / "workspace", tmp_path / "examples" / "workspace")
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "OPENAI_BASE_URL"}
    env |= {"TINY_AGENT_STORE": str(tmp_path / "sessions.db"), "XDG_STATE_HOME": str(tmp_path / "state")}
    done = subprocess.run(
        [sys.executable, "-c", readme_example()], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, done.stderr
    assert re.search(r"^\[turn 1 · in=\d+ \(cache_read=0 cache_write=\?\)", done.stdout, re.M), done.stdout
    assert 'done {"port": 3000, "host": "127.0.0.1"} 0.0' in done.stdout
    assert re.search(r"^on Sonnet 4\.6 it would have cost \$0\.00\d\d$", done.stdout, re.M), done.stdout
