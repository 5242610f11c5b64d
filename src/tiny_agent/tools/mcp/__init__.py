"""MCP servers as tool sources, through the official ``mcp`` SDK (version 2).

- ``connection``: one server's client, held open on the run's event loop (an anyio blocking portal).
- ``content``: what a server's tools look like to the model: their names, and their results as text.
- ``server``: ``McpServer``: how to reach a server (a command over stdio or a URL) and its limits.
- ``tools``: the run's servers' tools in the toolbox.
"""
