"""How to reach an MCP server: a command over stdio or a URL over streamable HTTP, and its limits."""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tiny_agent.errors import ConfigError
from tiny_agent.redaction import display_url, redact

__all__ = ["DEFAULT_MCP_TIMEOUT", "HEADER_ENV", "START_TIMEOUT", "McpServer", "headers_from_env"]

DEFAULT_MCP_TIMEOUT = 60.0
"""Seconds a tool call may take before it is abandoned and the model told so."""
START_TIMEOUT = 30.0
"""Seconds a server has to start and list its tools."""
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
        if isinstance(self.command, str):
            raise ConfigError(
                f"{where}an MCP server's command is a sequence of words, like ('python', 'server.py'), not one "
                f"string: {self.command!r}; McpServer.stdio({self.command!r}) splits a command line"
            )
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
