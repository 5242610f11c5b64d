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

import contextlib
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from anyio.from_thread import BlockingPortal, start_blocking_portal

from tiny_agent.redaction import register_secret
from tiny_agent.tools.mcp.connection import Connection
from tiny_agent.tools.mcp.content import exposed_names
from tiny_agent.tools.mcp.server import DEFAULT_MCP_TIMEOUT, HEADER_ENV, START_TIMEOUT, McpServer, headers_from_env
from tiny_agent.tools.toolbox import Tool

__all__ = ["DEFAULT_MCP_TIMEOUT", "HEADER_ENV", "START_TIMEOUT", "McpServer", "McpServers", "headers_from_env"]


class McpServers:
    """The MCP servers of one run: started by ``start``, stopped by ``close``."""

    def __init__(self, servers: Sequence[McpServer], *, cwd: str | Path) -> None:
        self.servers = tuple(servers)
        self.cwd = str(cwd)
        self._stack = contextlib.ExitStack()
        self._portal: BlockingPortal | None = None
        self._connections: dict[str, Connection] = {}
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
                register_secret(value.split()[-1] if value.split() else None)  # the token of "Bearer <token>"
        self._portal = portal = self._stack.enter_context(start_blocking_portal())
        # After the servers are stopped (callbacks run last in, first out): a call still waiting
        # (the run was interrupted during it) is cancelled, not waited for.
        self._stack.callback(_cancel_the_rest, portal)
        for spec in self.servers:
            connection = Connection(spec, self._portal, self.cwd)
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


def _cancel_the_rest(portal: BlockingPortal) -> None:
    with contextlib.suppress(RuntimeError):  # already stopped
        portal.call(portal.stop, True)


def _unique(name: str, taken: Mapping[str, object]) -> str:
    base = "".join(c if c.isalnum() or c in "_-" else "_" for c in name) or "mcp"
    candidate, number = base, 1
    while candidate in taken:
        number += 1
        candidate = f"{base}_{number}"
    return candidate
