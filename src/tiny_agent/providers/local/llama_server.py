"""Start, find and stop llama.cpp's own server (``llama-server``) on loopback.

The process itself (its flags, its key, its lifetime) is ``llama_process``; this module adds the
warm server (``tiny-agent local start``), which outlives runs. Its pid, port and key sit in a state
file only its owner can read: created 0600 in a 0700 folder, never with the umask's default mode.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import platformdirs

from tiny_agent.errors import LocalServerError
from tiny_agent.providers.local.llama_process import (
    DEFAULT_CTX_SIZE,
    EMBEDDED_MODEL_FILE,
    EMBEDDED_MODEL_NAME,
    LlamaServer,
    auth_headers,
    check_model,
    find_binary,
    find_default_model,
    healthy,
    model_name,
    new_api_key,
    props,
)

__all__ = [
    "DEFAULT_CTX_SIZE",
    "EMBEDDED_MODEL_FILE",
    "EMBEDDED_MODEL_NAME",
    "LlamaServer",
    "WarmServer",
    "auth_headers",
    "check_model",
    "find_binary",
    "find_default_model",
    "healthy",
    "model_name",
    "new_api_key",
    "props",
    "read_warm_server",
    "start_warm_server",
    "state_file",
    "stop_warm_server",
    "write_private",
]

log = logging.getLogger(__name__)


# -- a warm server that outlives runs ------------------------------------------------------------


def state_file() -> Path:
    return Path(platformdirs.user_state_dir("tiny-agent")) / "llama-server.json"


@dataclass(frozen=True)
class WarmServer:
    pid: int
    port: int
    model: str
    api_key: str = field(default="", repr=False)
    """Empty for a server started by an older tiny-agent, which had no key: it is not used."""

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def _recorded() -> WarmServer | None:
    """The server the state file names, if that process is still a llama-server; else the file goes."""
    path = state_file()
    try:
        data = json.loads(path.read_text())
        server = WarmServer(int(data["pid"]), int(data["port"]), str(data["model"]), str(data.get("api_key", "")))
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
    if server is not None and not server.api_key:
        log.warning("the warm server (pid %d) has no API key; restart it: tiny-agent local stop", server.pid)
        return None
    return server if server is not None and healthy(server.base_url) else None


def start_warm_server(model: Path, ctx_size: int = DEFAULT_CTX_SIZE) -> WarmServer:
    """Start a server that outlives this process, or return the one already running. One left by an
    older tiny-agent, without a key, is replaced."""
    existing = _recorded()
    if existing is not None and not existing.api_key:
        stop_warm_server()
    elif existing is not None:
        if healthy(existing.base_url):
            return existing
        raise LocalServerError(
            f"a warm server (pid {existing.pid}) runs but does not answer; try: tiny-agent local stop"
        )
    server = LlamaServer(model, ctx_size=ctx_size, tie_to_parent=False)
    process = server.spawn()
    warm = WarmServer(process.pid, server.port, str(model), server.api_key)
    path = state_file()
    try:
        write_private(path, json.dumps(asdict(warm)))  # before the wait, so an interrupted start can be stopped
        server.wait_healthy()
    except BaseException:
        server.stop()
        path.unlink(missing_ok=True)
        raise
    return warm


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to a file only its owner can read (0600), in a folder only its owner can enter
    (0700). The file is born with its mode and moved into place, so no reader ever sees it open."""
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(path.parent, 0o700)  # a folder made earlier may carry the umask's mode
        temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        temporary.unlink(missing_ok=True)
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(temporary, path)
    except OSError as exc:
        raise LocalServerError(f"cannot write {path}: {exc.strerror or exc}") from exc


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
