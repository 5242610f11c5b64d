"""An MCP server for the tests, written with the official SDK's ``MCPServer``.

    python tests/mcp_servers/server.py [--name kit] [--order forward|reverse] [--variant louder] [--port N]

Over stdio, or streamable HTTP on 127.0.0.1 with ``--port``. ``--order reverse`` registers (so
lists) its tools in the other order; ``--variant`` rewords ``echo``'s description: two runs can
then see the same tools reordered, or one of them changed.
"""

from __future__ import annotations

import argparse
import base64
import os
import signal
from pathlib import Path

import anyio
import mcp_types as types
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.utilities.types import Image

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def echo(text: str) -> str:
    return f"echo: {text}"


def fail(reason: str) -> str:
    """Fails, saying why."""
    raise ToolError(f"refused: {reason}")


async def hang() -> str:
    """Never answers."""
    if MARKER:
        Path(MARKER).write_text("called")
    await anyio.sleep(3600)
    return "too late"


def die() -> str:
    """Kills the server it runs in."""
    os.kill(os.getpid(), signal.SIGKILL)
    return "never"


def secret() -> str:
    """The token the server was given in its environment."""
    return f"the token is {os.environ.get('KIT_TOKEN', 'not set')}"


def whoami(ctx: Context) -> str:
    """The Authorization header of the request (over HTTP)."""
    headers = ctx.headers or {}
    return f"authorization: {headers.get('authorization', 'none')}"


def picture() -> Image:
    """A 1x1 PNG."""
    return Image(data=PNG, format="png")


def document() -> list[types.ContentBlock]:
    """An embedded text resource and a link to another."""
    return [
        types.EmbeddedResource(
            type="resource",
            resource=types.TextResourceContents(uri="file:///notes.txt", mime_type="text/plain", text="buy milk"),
        ),
        types.ResourceLink(
            type="resource_link", uri="file:///big.bin", name="big", mime_type="application/zip", size=2048
        ),
    ]


def read_file(path: str) -> str:
    """A tool whose name the workspace's tools already have."""
    return f"the server's read_file of {path}"


MARKER = os.environ.get("KIT_MARKER", "")
"""A file ``hang`` writes when it is called (a test waits for it before interrupting the call)."""

TOOLS = [echo, fail, hang, die, secret, whoami, picture, document, read_file]


def build(name: str, order: str, variant: str) -> MCPServer:
    server = MCPServer(name, log_level="WARNING")
    for fn in TOOLS if order == "forward" else list(reversed(TOOLS)):
        description = None
        if fn is echo:
            description = "Echo the text back." if not variant else f"Echo the text back, {variant}."
        server.tool(description=description)(fn)
    return server


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--name", default="kit")
    parser.add_argument("--order", default="forward", choices=["forward", "reverse"])
    parser.add_argument("--variant", default="")
    parser.add_argument("--port", type=int)
    args = parser.parse_args()
    server = build(args.name, args.order, args.variant)
    if args.port:
        server.run("streamable-http", host="127.0.0.1", port=args.port)
    else:
        server.run("stdio")
