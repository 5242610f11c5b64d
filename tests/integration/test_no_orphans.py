"""No llama-server outlives what started it: stop(), a failing block, a failed start, a killed parent."""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tiny_agent.errors import LocalServerError
from tiny_agent.providers.local.llama_server import LlamaServer, healthy
from tiny_agent.providers.local.provider import LocalProvider

from .conftest import pid_gone

pytestmark = pytest.mark.integration

SMALL_CTX = 512
"""These servers never answer a prompt; a small context makes them start faster."""


def wait_gone(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if pid_gone(pid):
            return True
        time.sleep(0.1)
    return pid_gone(pid)


def kill_if_llama_server(pid: int) -> None:
    """Clean up after a failed test, without ever hitting a recycled pid that is not ours."""
    with contextlib.suppress(OSError):
        if b"llama-server" in Path(f"/proc/{pid}/cmdline").read_bytes():
            os.kill(pid, signal.SIGKILL)


def test_stop_ends_the_server_process(model_path: Path) -> None:
    server = LlamaServer(model_path, ctx_size=SMALL_CTX).start()
    assert server.process is not None
    pid, base_url, log_path = server.process.pid, server.base_url, server.log_path
    try:
        assert not pid_gone(pid)
        assert healthy(base_url)
    finally:
        server.stop()
    assert pid_gone(pid), f"llama-server {pid} still runs after stop()"
    assert server.process is None
    assert not healthy(base_url)
    assert log_path is not None and not log_path.exists()
    server.stop()  # a second stop is harmless


def test_local_provider_block_that_raises_still_stops_its_server(model_path: Path) -> None:
    pid = 0
    base_url = ""
    with (
        pytest.raises(RuntimeError, match="boom"),
        LocalProvider(model_path=model_path, use_warm=False, ctx_size=SMALL_CTX) as provider,
    ):
        server = provider._server  # the server this provider started (no public handle exists)
        assert server is not None and server.process is not None
        pid, base_url = server.process.pid, provider.base_url
        assert not pid_gone(pid)
        assert healthy(base_url)
        raise RuntimeError("boom")
    try:
        assert pid, "the provider started no server"
        assert pid_gone(pid), f"llama-server {pid} outlived the LocalProvider block"
        assert not healthy(base_url)
    finally:
        kill_if_llama_server(pid)


def test_failed_start_leaves_no_process(model_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[subprocess.Popen[bytes]] = []
    real_popen = subprocess.Popen

    def recording_popen(*args: Any, **kwargs: Any) -> subprocess.Popen[bytes]:
        proc: subprocess.Popen[bytes] = real_popen(*args, **kwargs)
        started.append(proc)
        return proc

    monkeypatch.setattr(subprocess, "Popen", recording_popen)  # the module LlamaServer.start() calls
    server = LlamaServer(model_path, ctx_size=SMALL_CTX)
    with pytest.raises(LocalServerError, match="did not become healthy"):
        server.start(timeout=0.0)  # gives up at once: start() must stop what it launched
    assert len(started) == 1
    assert server.process is None
    assert pid_gone(started[0].pid), "a start that timed out left llama-server running"


def test_server_that_cannot_load_its_model_fails_to_start(tmp_path: Path) -> None:
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"GGUF" + b"\0" * 64)
    server = LlamaServer(broken, ctx_size=SMALL_CTX)
    with pytest.raises(LocalServerError, match="exited with code"):
        server.start(timeout=60.0)
    assert server.process is None


CHILD = """
import sys, time
from pathlib import Path
from tiny_agent.providers.local.llama_server import LlamaServer

server = LlamaServer(Path(sys.argv[1]), ctx_size=int(sys.argv[2]), tie_to_parent=True).start()
print(server.process.pid, server.base_url, server.log_path, flush=True)
time.sleep(300)
"""


def test_server_dies_when_its_parent_is_killed(model_path: Path, tmp_path: Path) -> None:
    """PR_SET_PDEATHSIG: a SIGKILLed parent cannot stop its server, the kernel does it for it."""
    stderr = (tmp_path / "child.err").open("wb")
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(model_path), str(SMALL_CTX)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=stderr,
    )
    server_pid = 0
    log_path: Path | None = None
    try:
        assert child.stdout is not None
        ready, _, _ = select.select([child.stdout], [], [], 120.0)
        line = child.stdout.readline().decode() if ready else ""
        assert line, f"the child printed no server pid: {(tmp_path / 'child.err').read_text()[-2000:]}"
        pid_text, base_url, log_text = line.split()
        server_pid, log_path = int(pid_text), Path(log_text)
        assert not pid_gone(server_pid)
        assert healthy(base_url)

        child.send_signal(signal.SIGKILL)
        child.wait(timeout=10)
        assert wait_gone(server_pid, 10.0), f"llama-server {server_pid} outlived its SIGKILLed parent"
        assert not healthy(base_url)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(timeout=10)
        stderr.close()
        if server_pid:
            kill_if_llama_server(server_pid)
        if log_path is not None:
            log_path.unlink(missing_ok=True)  # a killed parent cannot remove its server's log


def test_server_started_from_a_thread_outlives_the_thread(model_path: Path) -> None:
    started: list[LlamaServer] = []
    worker = threading.Thread(target=lambda: started.append(LlamaServer(model_path, ctx_size=SMALL_CTX).start()))
    worker.start()
    worker.join(timeout=120)
    assert started, "the worker thread did not start a server"
    server = started[0]
    assert server.process is not None
    pid, base_url = server.process.pid, server.base_url
    try:
        time.sleep(1.0)  # the thread has ended; give a parent-death signal time to land
        assert not pid_gone(pid), "llama-server died with the thread that started it"
        assert healthy(base_url)
    finally:
        server.stop()
        kill_if_llama_server(pid)
