"""A run's tools: the workspace's, the caller's Python tools and the MCP servers', with the hooks around them.

Their order is the cached prefix's first layer, so it is fixed: the workspace tools, the Python
tools in the order given, then each MCP server's tools sorted by server and name (a server that
lists them in another order on another day changes nothing). The session records the tool
definitions (a ``config`` entry) and which server each tool goes to (the ``mcp`` run setting,
never a server's environment or headers); a list that changed since the session last ran is a
recorded change, and the user is told which tools changed before the first call misses the cache.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from tiny_agent.context.diagnosis import tool_changes
from tiny_agent.context.engine import Context
from tiny_agent.errors import ConfigError
from tiny_agent.tools.hooks import Hook, HookedToolbox, Hooks
from tiny_agent.tools.mcp.tools import McpServer, McpServers
from tiny_agent.tools.toolbox import Tool, Toolbox

__all__ = ["MCP_SETTING", "Toolset"]

MCP_SETTING = "mcp"
"""The run setting that records each MCP server: how it is reached and its tools."""


@dataclass
class Toolset:
    toolbox: Toolbox
    servers: McpServers | None
    hooks: Hooks | None
    notes: list[str]

    @staticmethod
    def open(
        stack: contextlib.ExitStack,
        builtin: Sequence[Tool],
        tools: Sequence[Tool],
        mcp: Sequence[McpServer],
        hooks: Sequence[Hook],
        *,
        cwd: str,
        report: Callable[[str], None] | None,
    ) -> Toolset:
        """Start the MCP servers (stopped when ``stack`` closes) and put every tool in one toolbox."""
        notes: list[str] = []
        servers = None
        own = [*builtin, *tools]
        if mcp:
            servers = McpServers(mcp, cwd=cwd)
            stack.callback(servers.close)
            found = servers.start(taken=[t.name for t in own])
            own.extend(_usable(found, notes))
        runner = Hooks(hooks, cwd=cwd, report=report) if hooks else None
        try:
            toolbox = HookedToolbox(own, runner) if runner is not None else Toolbox(own)
        except ValueError as exc:  # two tools of one name
            raise ConfigError(f"{exc}: give each Python tool its own name") from exc
        return Toolset(toolbox, servers, runner, notes)

    def record(self, context: Context, *, resumed: bool) -> None:
        """The tools and the servers into the session; on a resume, what changed said in a note."""
        before = context.tools
        context.tools = self.toolbox.specs
        changes = tool_changes(before, self.toolbox.specs) if resumed else []
        if changes:
            self.notes.append(
                f"the tools changed since this session last ran ({'; '.join(changes)}): the next request "
                "will not read what the last run cached"
            )
        listing = self.servers.listing() if self.servers is not None else {}
        if listing or MCP_SETTING in context.run_settings:
            context.record_run(**{MCP_SETTING: listing})
        context.hooks = self.hooks

    def describe(self) -> list[str]:
        """One line per MCP server: its name, how it is reached, how many tools."""
        if self.servers is None:
            return []
        return [
            f"mcp {name} · {entry['source']} · {len(entry['tools'])} tool(s)"
            for name, entry in self.servers.listing().items()
        ]


def _usable(tools: Sequence[Tool], notes: list[str]) -> list[Tool]:
    """The servers' tools whose input schema is a JSON schema (the others are left out, with a note)."""
    out = []
    for tool in tools:
        try:
            Draft202012Validator.check_schema(tool.input_schema)
        except SchemaError as exc:
            problem = f"its input schema is not a JSON schema ({exc.message})"
            notes.append(f"MCP server {tool.source}: tool {tool.name} left out: {problem}")
            continue
        out.append(tool)
    return out
