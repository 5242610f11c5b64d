"""A small MCP server (the official SDK's ``MCPServer``): the team's glossary, over stdio.

    tiny-agent --mcp "python examples/mcp/glossary_server.py" "What does the glossary say prefill is?"

Each typed function is a tool; its docstring is the description the model reads.
"""

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

GLOSSARY = {
    "prefill": "the time a model server takes to read the prompt before the first token of the reply",
    "cache hit": "a request whose prefix the provider already holds, billed at a tenth of the input price",
    "compaction": "replacing older turns by a summary so the conversation fits the window again",
    "pin": "a constraint kept in the system prompt of every request, compaction or not",
}

server = MCPServer("glossary")


@server.tool()
def define(term: str) -> str:
    """What a term means, from the team's glossary."""
    meaning = GLOSSARY.get(term.strip().lower())
    if meaning is None:
        raise ToolError(f"{term!r} is not in the glossary; the terms are: {', '.join(sorted(GLOSSARY))}")
    return f"{term}: {meaning}"


@server.tool()
def terms() -> str:
    """Every term the glossary defines."""
    return ", ".join(sorted(GLOSSARY))


if __name__ == "__main__":
    server.run("stdio")
