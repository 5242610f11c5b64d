"""One MCP server's client, held open by a task on the run's event loop (an anyio blocking portal).

A tool call waits in the loop thread's portal for its answer, for at most the server's timeout;
a server that died is noticed at the call that found it gone (with the last line it wrote on
stderr), and its tools then answer that it is not running.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import logging
import os
import tempfile
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, TextIO

import anyio
from anyio.from_thread import BlockingPortal

from tiny_agent.errors import ConfigError
from tiny_agent.redaction import redact
from tiny_agent.tools.mcp.content import result_text
from tiny_agent.tools.mcp.server import START_TIMEOUT, McpServer
from tiny_agent.tools.toolbox import Tool, ToolFailure

__all__ = ["Connection", "McpTool"]

logger = logging.getLogger(__name__)

_STOP_TIMEOUT = 10.0
"""Seconds a server has to stop when the run closes (the SDK then kills it)."""
HTTP_TIMEOUT, HTTP_READ_TIMEOUT = 30.0, 300.0
"""Connect, write and pool, then read seconds of an HTTP server's client (the SDK's defaults)."""


@dataclass(frozen=True)
class McpTool(Tool):
    original: str = ""
    """The server's own name for the tool."""


class Connection:
    """One server's client, held open by a task on the portal's loop until ``close``."""

    def __init__(self, server: McpServer, portal: BlockingPortal, cwd: str) -> None:
        self.server, self.portal, self.cwd = server, portal, cwd
        self.name = ""
        self.own_name: str | None = None
        self.listed: list[Any] = []
        self.made: list[McpTool] = []
        self.gone: str | None = None
        """Why the server cannot be called any more (it died), once it cannot."""
        self._client: Any = None
        self._task: concurrent.futures.Future[None] | None = None
        self._stop: anyio.Event | None = None
        # Appended to by the server whatever this process reads: both share one file offset.
        self._errlog: TextIO = tempfile.TemporaryFile("a+", encoding="utf-8", errors="replace")  # noqa: SIM115
        self._refused: str | None = None
        """The HTTP status of the last response an HTTP server refused with (the SDK only says it failed)."""

    @property
    def label(self) -> str:
        return f"MCP server {self.name or self.server.shown}"

    def open(self) -> None:
        where = self.server.origin or self.server.shown
        ready: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._stop = self.portal.call(anyio.Event)
        self._task = self.portal.start_task_soon(self._hold, ready, self._stop)
        # One deadline for the start, the handshake and the listing: the time the message names.
        deadline = time.monotonic() + START_TIMEOUT
        try:
            self._client = ready.result(timeout=START_TIMEOUT)
            self.own_name = _server_name(self._client)
            self.listed = list(self.portal.call(self._list, deadline))
        except TimeoutError as exc:
            self._abandon()
            problem = f"the MCP server did not start within {START_TIMEOUT:g}s"
            raise ConfigError(f"{where}: {problem}{self._last_words()}") from exc
        except Exception as exc:
            self._abandon()
            problem = f"the MCP server could not be started: {_reason(exc)}"
            if self._refused is not None:
                problem += f" (HTTP {self._refused}{_HINTS.get(self._refused[:3], '')})"
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
        import httpx2
        from mcp import Client, StdioServerParameters
        from mcp.client.stdio import stdio_client
        from mcp.client.streamable_http import streamable_http_client

        server = self.server
        async with contextlib.AsyncExitStack() as stack:
            if server.url is not None:
                # The SDK's own timeouts: a server may hold a response stream open for minutes.
                timeout = httpx2.Timeout(HTTP_TIMEOUT, read=HTTP_READ_TIMEOUT)

                async def note_refusal(response: Any) -> None:
                    if response.status_code >= 400:
                        self._refused = f"{response.status_code} {response.reason_phrase}".strip()

                hooks = {"response": [note_refusal]}
                client = httpx2.AsyncClient(headers=dict(server.headers), timeout=timeout, event_hooks=hooks)
                http = await stack.enter_async_context(client)
                transport = streamable_http_client(server.url, http_client=http)
            else:
                command, *args = server.command
                params = StdioServerParameters(
                    command=command,
                    args=args,
                    env=dict(server.env) or None,
                    cwd=self.cwd,
                    encoding_error_handler="replace",  # a byte that is not UTF-8 must not end the session
                )
                transport = stdio_client(params, errlog=self._errlog)
            yield await stack.enter_async_context(Client(transport, cache=None))

    def _abandon(self) -> None:
        """Cancel the task holding a server that missed its start: a stop would wait on a handshake
        that never ends (the SDK still terminates the process as the task unwinds)."""
        if self._task is not None and not self._task.done():
            self._task.cancel()

    async def _list(self, deadline: float) -> list[Any]:
        with anyio.fail_after(max(0.0, deadline - time.monotonic())):
            tools: list[Any] = []
            cursor = None
            while True:
                page = await self._client.list_tools(cursor=cursor)
                tools.extend(page.tools)
                cursor = page.next_cursor
                if cursor is None:
                    return tools

    def tool(self, name: str, listed: Any) -> McpTool:
        original = str(listed.name)
        schema = dict(listed.input_schema or {"type": "object"})

        def run(arguments: dict[str, Any]) -> str:
            return self.call(original, arguments)

        made = McpTool(name, str(listed.description or ""), schema, run, source=self.name, original=original)
        self.made.append(made)
        return made

    def call(self, tool: str, arguments: dict[str, Any]) -> str:
        if self.gone is not None:
            raise ToolFailure(f"{self.label} is not running ({self.gone}); its tools cannot be called in this run")
        timeout = self.server.timeout
        said = self._said()
        if self._task is not None and self._task.done():  # it stopped since the last call
            self.gone = f"it stopped after its last call{self._last_words()}"
            raise ToolFailure(f"{self.label} is not running ({self.gone}); its tools cannot be called in this run")
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
        except (
            Exception,
            concurrent.futures.CancelledError,
        ):  # a server that died or will not stop: the SDK has killed it by now
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


_HINTS = {
    "401": ": it wants credentials; give them in a header, TINY_AGENT_MCP_HEADER_<NAME>=VALUE or the server's "
    "headers in tiny-agent.toml",
    "403": ": the credentials given are not allowed there",
    "404": ": nothing at that path; check the URL (often it ends in /mcp)",
}


def _reason(exc: BaseException) -> str:
    if isinstance(exc, ExceptionGroup):
        return "; ".join(_reason(e) for e in exc.exceptions)
    return redact(str(exc) or type(exc).__name__)
