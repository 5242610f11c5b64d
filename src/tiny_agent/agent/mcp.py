"""MCP servers' tools in the toolbox, through the official ``mcp`` SDK (version 2).

The SDK is async (anyio) and the agent loop is not: the run's servers share one event loop in a
background thread (an anyio blocking portal), and a tool call waits there for its answer. Each
server is started once per run, over stdio (``McpServer(command=...)``, run in the workspace
folder) or streamable HTTP (``McpServer(url=...)``), and its tools are listed once, then: the list
is part of every request's cached prefix, so it is sorted (by server, then name) and not fetched
again during the run, whatever the server announces.

A call that fails comes back to the model as an error result: the tool's own error, a call that
took longer than the server's ``timeout`` (abandoned; the server may still be working on it), a
server that died (with the last line it wrote on stderr; its tools then answer that it is gone).
Values given to a server (``env``, ``headers``) are registered as secrets: they are hidden
wherever keys are (the screen, logs, stored errors, the tools' results) and never recorded.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import logging
import os
import shlex
import tempfile
from collections.abc import AsyncIterator, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import anyio
from anyio.from_thread import BlockingPortal, start_blocking_portal

from tiny_agent.agent.mcp_content import exposed_names, result_text
from tiny_agent.agent.tools import Tool, ToolFailure
from tiny_agent.errors import ConfigError
from tiny_agent.redaction import display_url, redact, register_secret

__all__ = ["DEFAULT_MCP_TIMEOUT", "HEADER_ENV", "START_TIMEOUT", "McpServer", "McpServers", "headers_from_env"]

logger = logging.getLogger(__name__)

DEFAULT_MCP_TIMEOUT = 60.0
"""Seconds a tool call may take before it is abandoned and the model told so."""
START_TIMEOUT = 30.0
"""Seconds a server has to start and list its tools."""
_STOP_TIMEOUT = 10.0
HEADER_ENV = "TINY_AGENT_MCP_HEADER_"
"""``TINY_AGENT_MCP_HEADER_X_API_KEY=...`` sends ``X-Api-Key: ...`` to the servers of ``--mcp-url``."""


def headers_from_env(env: Mapping[str, str]) -> dict[str, str]:
    """The HTTP headers ``HEADER_ENV`` variables give: the rest of the name, ``_`` as ``-``, is the header."""
    return {
        "-".join(part.capitalize() for part in key[len(HEADER_ENV) :].split("_")): value
        for key, value in sorted(env.items())
        if key.startswith(HEADER_ENV) and len(key) > len(HEADER_ENV)
    }


@dataclass(frozen=True, kw_only=True)
class McpServer:
    """How to reach one MCP server: a ``command`` run over stdio, or a streamable HTTP ``url``."""

    name: str | None = None
    """What its tools are grouped and prefixed by; None: the name the server gives itself."""
    command: tuple[str, ...] = ()
    url: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    """Added to the few variables the SDK passes on (PATH, HOME, ...); never stored."""
    headers: Mapping[str, str] = field(default_factory=dict)
    """Sent with every HTTP request; never stored."""
    timeout: float = DEFAULT_MCP_TIMEOUT
    """Seconds per tool call."""
    origin: str = ""
    """Where it was configured (a flag, a file's key), for messages."""

    def __post_init__(self) -> None:
        where = f"{self.origin}: " if self.origin else ""
        if bool(self.command) == bool(self.url):
            raise ConfigError(f"{where}an MCP server needs a command or a url (one of them)")
        if self.url is not None and not self.url.startswith(("http://", "https://")):
            raise ConfigError(f"{where}an MCP server's url must start with http:// or https://, not {self.url!r}")
        if not self.timeout > 0:
            raise ConfigError(f"{where}an MCP server's timeout must be more than 0 seconds, not {self.timeout}")

    @staticmethod
    def stdio(command_line: str, **kwargs: Any) -> McpServer:
        """A server run from one command line (split as a shell would, without running a shell)."""
        try:
            words = tuple(shlex.split(command_line))
        except ValueError as exc:
            raise ConfigError(f"--mcp {command_line!r}: {exc}") from exc
        if not words:
            raise ConfigError("--mcp needs a command, e.g. --mcp 'python my_server.py'")
        return McpServer(command=words, **kwargs)

    @property
    def shown(self) -> str:
        """How it is reached, safe to show and store: the command (secrets hidden) or the URL without credentials."""
        if self.url is not None:
            return display_url(self.url)
        return redact(shlex.join(self.command))

    @property
    def default_name(self) -> str:
        """A name from the command (its script, else its program) or the URL's host."""
        if self.url is not None:
            return (display_url(self.url).split("://", 1)[-1].split("/", 1)[0].split(":", 1)[0]) or "mcp"
        scripts = [w for w in self.command[1:] if w.endswith((".py", ".js", ".mjs", ".ts"))]
        return Path(scripts[0] if scripts else self.command[0]).stem or "mcp"


class McpServers:
    """The MCP servers of one run: started by ``start``, stopped by ``close``."""

    def __init__(self, servers: Sequence[McpServer], *, cwd: str | Path) -> None:
        self.servers = tuple(servers)
        self.cwd = str(cwd)
        self._stack = contextlib.ExitStack()
        self._portal: BlockingPortal | None = None
        self._connections: dict[str, _Connection] = {}
        self.tools: tuple[Tool, ...] = ()
        """Every server's tools, sorted by server and name (the order of the cached prefix)."""

    def start(self, taken: Collection[str] = ()) -> tuple[Tool, ...]:
        """Start every server and list its tools; ``taken``: names of the run's other tools (a
        server's tool of the same name is prefixed). Raises ConfigError naming a server that fails."""
        if not self.servers:
            return ()
        for server in self.servers:
            for value in (*server.env.values(), *server.headers.values()):
                register_secret(value)
        self._portal = self._stack.enter_context(start_blocking_portal())
        for spec in self.servers:
            connection = _Connection(spec, self._portal, self.cwd)
            self._stack.callback(connection.close)
            connection.open()
            name = _unique(spec.name or connection.own_name or spec.default_name, self._connections)
            connection.name = name
            self._connections[name] = connection
        listings = {name: [t.name for t in c.listed] for name, c in sorted(self._connections.items())}
        names = exposed_names(taken, listings)
        tools = []
        for name, connection in sorted(self._connections.items()):
            for listed in connection.listed:
                tools.append(connection.tool(names[(name, listed.name)], listed))
        self.tools = tuple(sorted(tools, key=lambda t: (t.source, t.name)))
        return self.tools

    def listing(self) -> dict[str, dict[str, Any]]:
        """What the session records of each server: how it is reached and its tools (the model's
        name -> the server's). Never its environment or headers."""
        out: dict[str, dict[str, Any]] = {}
        for name, connection in sorted(self._connections.items()):
            exposed = {t.name: t.original for t in connection.made}
            out[name] = {"source": connection.server.shown, "tools": dict(sorted(exposed.items()))}
        return out

    def close(self) -> None:
        self._stack.close()


def _unique(name: str, taken: Mapping[str, object]) -> str:
    base = "".join(c if c.isalnum() or c in "_-" else "_" for c in name) or "mcp"
    candidate, number = base, 1
    while candidate in taken:
        number += 1
        candidate = f"{base}_{number}"
    return candidate


@dataclass(frozen=True)
class _McpTool(Tool):
    original: str = ""
    """The server's own name for the tool."""


class _Connection:
    """One server's client, held open by a task on the portal's loop until ``close``."""

    def __init__(self, server: McpServer, portal: BlockingPortal, cwd: str) -> None:
        self.server, self.portal, self.cwd = server, portal, cwd
        self.name = ""
        self.own_name: str | None = None
        self.listed: list[Any] = []
        self.made: list[_McpTool] = []
        self.gone: str | None = None
        """Why the server cannot be called any more (it died), once it cannot."""
        self._client: Any = None
        self._task: concurrent.futures.Future[None] | None = None
        self._stop: anyio.Event | None = None
        # Appended to by the server whatever this process reads: both share one file offset.
        self._errlog: TextIO = tempfile.TemporaryFile("a+", encoding="utf-8", errors="replace")  # noqa: SIM115

    @property
    def label(self) -> str:
        return f"MCP server {self.name or self.server.shown}"

    def open(self) -> None:
        where = self.server.origin or self.server.shown
        ready: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._stop = self.portal.call(anyio.Event)
        self._task = self.portal.start_task_soon(self._hold, ready, self._stop)
        try:
            self._client = ready.result(timeout=START_TIMEOUT)
            self.own_name = _server_name(self._client)
            self.listed = list(self.portal.call(self._list))
        except concurrent.futures.TimeoutError as exc:
            problem = f"the MCP server did not start within {START_TIMEOUT:g}s"
            raise ConfigError(f"{where}: {problem}{self._last_words()}") from exc
        except Exception as exc:
            problem = f"the MCP server could not be started: {_reason(exc)}"
            raise ConfigError(f"{where}: {problem}{self._last_words()}") from exc

    async def _hold(self, ready: concurrent.futures.Future[Any], stop: anyio.Event) -> None:
        try:
            async with self._connected() as client:
                ready.set_result(client)
                await stop.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc if isinstance(exc, Exception) else RuntimeError(str(exc)))
            raise

    @contextlib.asynccontextmanager
    async def _connected(self) -> AsyncIterator[Any]:
        from mcp import Client, StdioServerParameters
        from mcp.client.stdio import stdio_client
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        server = self.server
        async with contextlib.AsyncExitStack() as stack:
            if server.url is not None:
                http = await stack.enter_async_context(create_mcp_http_client(headers=dict(server.headers)))
                transport = streamable_http_client(server.url, http_client=http)
            else:
                command, *args = server.command
                params = StdioServerParameters(command=command, args=args, env=dict(server.env) or None, cwd=self.cwd)
                transport = stdio_client(params, errlog=self._errlog)
            yield await stack.enter_async_context(Client(transport, cache=None))

    async def _list(self) -> list[Any]:
        with anyio.fail_after(START_TIMEOUT):
            tools: list[Any] = []
            cursor = None
            while True:
                page = await self._client.list_tools(cursor=cursor)
                tools.extend(page.tools)
                cursor = page.next_cursor
                if cursor is None:
                    return tools

    def tool(self, name: str, listed: Any) -> _McpTool:
        original = str(listed.name)
        schema = dict(listed.input_schema or {"type": "object"})

        def run(arguments: dict[str, Any]) -> str:
            return self.call(original, arguments)

        made = _McpTool(name, str(listed.description or ""), schema, run, source=self.name, original=original)
        self.made.append(made)
        return made

    def call(self, tool: str, arguments: dict[str, Any]) -> str:
        if self.gone is not None:
            raise ToolFailure(f"{self.label} is not running ({self.gone}); its tools cannot be called in this run")
        timeout = self.server.timeout
        said = self._said()
        try:
            result = self.portal.call(self._call, tool, arguments, timeout)
        except TimeoutError as exc:
            raise ToolFailure(
                f"{self.label} did not answer {tool} within {timeout:g}s; the call was abandoned "
                "(the server may still be working on it)"
            ) from exc
        except Exception as exc:
            if (self._task is not None and self._task.done()) or _closed(exc):
                words = self._last_words(said)
                self.gone = f"it stopped during a call of {tool}{words}"
                raise ToolFailure(f"{self.label} stopped during the call{words}") from exc
            raise ToolFailure(f"{self.label}: {tool} failed: {_reason(exc)}") from exc
        text = redact(result_text(result.content, result.structured_content))
        if result.is_error:
            raise ToolFailure(text or f"{tool} failed (the server gave no reason)")
        return text

    async def _call(self, tool: str, arguments: dict[str, Any], timeout: float) -> Any:
        with anyio.fail_after(timeout):
            return await self._client.call_tool(tool, arguments)

    def _said(self) -> int:
        """How much the server has written on stderr so far."""
        try:
            return os.fstat(self._errlog.fileno()).st_size
        except (OSError, ValueError):
            return 0

    def _last_words(self, since: int = 0) -> str:
        """The last line the server wrote on stderr (after ``since``), if any: usually why it stopped."""
        try:
            self._errlog.seek(max(since, self._said() - 4000))
            lines = [line.strip() for line in self._errlog.read().splitlines() if line.strip()]
        except (OSError, ValueError):
            return ""
        return f" (its last words on stderr: {redact(lines[-1])[:200]})" if lines else ""

    def close(self) -> None:
        try:
            if self._stop is not None and self._task is not None and not self._task.done():
                self.portal.call(self._stop.set)
                self._task.result(timeout=_STOP_TIMEOUT)
        except Exception:  # a server that died or will not stop: the SDK has killed it by now
            logger.debug("%s did not stop cleanly", self.label, exc_info=True)
        finally:
            self._errlog.close()


def _server_name(client: Any) -> str | None:
    info = getattr(client, "server_info", None)
    name = getattr(info, "name", None)
    return str(name) if name else None


def _closed(exc: BaseException) -> bool:
    """Whether the connection to the server is gone (the SDK's "Connection closed", a broken stream)."""
    from mcp_types import CONNECTION_CLOSED

    code = getattr(getattr(exc, "error", None), "code", None)
    broken = anyio.ClosedResourceError | anyio.BrokenResourceError | EOFError
    return code == CONNECTION_CLOSED or isinstance(exc, broken)


def _reason(exc: BaseException) -> str:
    if isinstance(exc, ExceptionGroup):
        return "; ".join(_reason(e) for e in exc.exceptions)
    return redact(str(exc) or type(exc).__name__)
