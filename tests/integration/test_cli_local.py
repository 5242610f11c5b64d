"""The CLI on the embedded model, as a user runs it: per-turn lines, cache reads, a warm server, no orphans."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import httpx2
import pytest

from .conftest import pid_gone, require_local_model

pytestmark = pytest.mark.integration

TURN = re.compile(r"\[turn (\d+) · in=([\d,]+) \(cache_read=([\d,?]+) cache_write=([\d,?]+)\) out=([\d,?]+)")
CLI = [sys.executable, "-m", "tiny_agent"]


def llama_pids() -> set[int]:
    pids = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if b"llama-server" in (entry / "cmdline").read_bytes() and not pid_gone(int(entry.name)):
                    pids.add(int(entry.name))
            except OSError:
                continue
    return pids


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    require_local_model()
    clean = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "OPENAI_BASE_URL"}
    clean["XDG_STATE_HOME"] = str(tmp_path / "state")  # a warm server of this test only
    return clean


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "notes.txt").write_text("Buy milk. Call Ana at 5pm.\n")
    (root / "dev.mjs").write_text("// entry point\n")
    return root


def run(env: dict[str, str], workspace: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    args = [*CLI, "--workspace", str(workspace), "--max-steps", "3", "--max-tokens", "48", *extra]
    return subprocess.run(
        [*args, "List the files in this workspace."], env=env, capture_output=True, text=True, timeout=300
    )


def assert_only_the_owner_has_the_key(env: dict[str, str], pid: int) -> None:
    state = Path(env["XDG_STATE_HOME"]) / "tiny-agent" / "llama-server.json"
    assert stat.S_IMODE(state.stat().st_mode) == 0o600
    assert stat.S_IMODE(state.parent.stat().st_mode) == 0o700
    recorded = json.loads(state.read_text())
    key, url = recorded["api_key"], f"http://127.0.0.1:{recorded['port']}"
    assert recorded["pid"] == pid and len(key) >= 40
    assert key.encode() not in Path(f"/proc/{pid}/cmdline").read_bytes()
    assert httpx2.get(f"{url}/props", timeout=10).status_code == 401
    assert httpx2.get(f"{url}/props", headers={"Authorization": f"Bearer {key}"}, timeout=10).status_code == 200


def turns(stderr: str) -> list[tuple[int, int, int]]:
    """(turn, input tokens, cache read tokens) of each per-turn line."""
    rows = []
    for m in TURN.finditer(stderr):
        rows.append((int(m[1]), int(m[2].replace(",", "")), int(m[3].replace(",", ""))))
    return rows


def test_a_run_prints_per_turn_lines_and_leaves_no_server(env: dict[str, str], workspace: Path) -> None:
    before = llama_pids()
    done = run(env, workspace, "--protect", "dev.mjs")
    assert done.returncode in (0, 3, 4), done.stderr  # done, step limit, or cut: the model is tiny
    rows = turns(done.stderr)
    assert rows and rows[0][0] == 1, done.stderr
    assert "[local · SmolLM2-135M-Instruct" in done.stderr
    assert re.search(r"prefill \d+\.\d+s", done.stderr), "the server's prefill time is shown"
    for (_, _, read), (_, prev_in, _) in zip(rows[1:], rows, strict=False):
        assert read > 0.5 * prev_in, f"later turns read the previous prefix from the KV cache: {rows}"
    assert (workspace / "dev.mjs").read_text() == "// entry point\n"
    assert llama_pids() <= before, "the server started for the run is gone"


def test_a_warm_server_serves_the_next_run_from_its_cache(env: dict[str, str], workspace: Path) -> None:
    before = llama_pids()
    started = subprocess.run([*CLI, "local", "start"], env=env, capture_output=True, text=True, timeout=180)
    assert started.returncode == 0, started.stderr
    pid = int(re.search(r"pid (\d+)", started.stdout)[1])  # type: ignore[index]
    try:
        assert_only_the_owner_has_the_key(env, pid)
        status = subprocess.run([*CLI, "local", "status"], env=env, capture_output=True, text=True, timeout=30)
        assert (status.returncode, f"pid {pid}" in status.stdout) == (0, True)
        first = run(env, workspace)
        second = run(env, workspace)
        assert first.returncode in (0, 3, 4) and second.returncode in (0, 3, 4), second.stderr
        assert pid in llama_pids(), "the runs used the warm server and left it running"
        turn_one = turns(second.stderr)[0]
        assert turn_one[2] > 0.5 * turn_one[1], f"the second run's first turn reads the system prompt: {turn_one}"
    finally:
        stopped = subprocess.run([*CLI, "local", "stop"], env=env, capture_output=True, text=True, timeout=60)
    assert stopped.returncode == 0 and f"stopped pid {pid}" in stopped.stdout
    assert pid_gone(pid)
    status = subprocess.run([*CLI, "local", "status"], env=env, capture_output=True, text=True, timeout=30)
    assert (status.returncode, status.stdout.strip()) == (3, "not running")
    assert llama_pids() <= before
