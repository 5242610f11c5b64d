"""What MCP servers cost a run: the time to start one, the time a call takes through the bridge, and the
dollars a tool list that changes between two runs of a session costs at the prompt cache.

1. Start: ``McpServers.start`` on the test server (tests/mcp_servers/server.py, the SDK's ``MCPServer``)
   over stdio and over streamable HTTP on 127.0.0.1 (the HTTP server already listening); medians.
2. Calls: ``Toolbox.run`` of the server's ``echo`` through the anyio portal, against the same
   function as a Python tool (``tiny_agent.tool``); medians of many calls.
3. Cache: a session of the real CLI against the billing fake (Anthropic's rules, claude-sonnet-4-6)
   reads a file (a prefix of about 6,000 tokens) with the server's tools offered, then is resumed with the server
   listing its tools in the other order, or with one tool reworded. What the resumed run's calls
   are billed for each, from the fake's bills.

    PYTHONPATH=src .venv/bin/python benchmarks/mcp_tools.py     # writes benchmarks/results/mcp_tools.json
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import sys
import tempfile
import time
from contextlib import redirect_stderr, redirect_stdout
from io import StringIO
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.mcp_servers.kit import http_server, stdio  # noqa: E402
from tests.mcp_servers.server import echo  # noqa: E402
from tests.recorded import ENV, MODELS  # noqa: E402

from tiny_agent import McpServer, Toolbox, tool  # noqa: E402
from tiny_agent.cli.app import main  # noqa: E402
from tiny_agent.testing import BillingFake, Task  # noqa: E402
from tiny_agent.tools.mcp.tools import McpServers  # noqa: E402
from tiny_agent.types import ToolUseBlock  # noqa: E402

RESULTS = Path(__file__).parent / "results" / "mcp_tools.json"
STARTS = 5
CALLS = 200


def timed_start(server: McpServer) -> tuple[float, McpServers]:
    servers = McpServers([server], cwd=ROOT)
    started = time.perf_counter()
    servers.start()
    return time.perf_counter() - started, servers


def call_times(toolbox: Toolbox, name: str) -> list[float]:
    out = []
    for i in range(CALLS):
        started = time.perf_counter()
        result = toolbox.run(ToolUseBlock(f"t{i}", name, {"text": "hello"}))
        out.append(time.perf_counter() - started)
        assert not result.is_error, result.content
    return out


def ms(values: list[float]) -> dict[str, float]:
    return {"median_ms": round(1000 * statistics.median(values), 2), "max_ms": round(1000 * max(values), 2)}


def starts_and_calls(server: McpServer) -> tuple[dict[str, Any], dict[str, float]]:
    """``STARTS`` starts of ``server`` (each stopped but the last), then ``CALLS`` calls on the last."""
    seconds = []
    for _ in range(STARTS):
        took, servers = timed_start(server)
        seconds.append(took)
        if len(seconds) < STARTS:
            servers.close()
    try:
        calls = ms(call_times(Toolbox(servers.tools), "echo"))
    finally:
        servers.close()
    return {"median_s": round(statistics.median(seconds), 3), "runs_s": [round(s, 3) for s in seconds]}, calls


def bridge() -> dict[str, Any]:
    out: dict[str, Any] = {}
    out["stdio_start"], out["stdio_call"] = starts_and_calls(McpServer(command=tuple(stdio().split())))
    with http_server() as url:
        out["http_start"], out["http_call"] = starts_and_calls(McpServer(url=url))
    out["python_tool_call"] = ms(call_times(Toolbox([tool(echo)]), "echo"))
    return out


def resumed_cost(variant: tuple[str, ...], label: str) -> dict[str, Any]:
    """A first run, then a resume whose server lists its tools as ``variant`` says; the resume's bills."""
    notes = "a line of the project's notes, read so that the cached prefix is worth something\n" * 400
    tasks = [
        Task("read the notes", [[("read_file", {"path": "notes.txt"})], [("echo", {"text": "one"})]], "Read."),
        Task("echo again", [[("echo", {"text": "two"})]], "Again."),
    ]
    with tempfile.TemporaryDirectory() as folder, BillingFake(tasks) as fake:
        work = Path(folder) / "ws"
        work.mkdir()
        (work / "notes.txt").write_text(notes)
        flags = ["--provider", "anthropic", "--model", MODELS["anthropic"], "--no-stream", "-q"]
        flags += ["--base-url", fake.url(label, "anthropic"), "--store", str(Path(folder) / "s.db")]
        flags += ["--workspace", str(work), "--no-config"]
        with redirect_stdout(StringIO()), redirect_stderr(StringIO()):
            assert main([*flags, "--mcp", stdio(), "read the notes"]) == 0
            first = len(fake.bills(label))
            assert main([*flags, "--mcp", stdio(*variant), "-c", "echo again"]) == 0
        bills = fake.bills(label)[first:]
    calls = [b.call for b in bills]
    return {
        "server": " ".join(variant) or "the same order",
        "calls": len(calls),
        "cache_read_tokens": sum(c.cache_read for c in calls),
        "cache_write_tokens": sum(c.cache_write for c in calls),
        "cost_usd": round(sum(c.usd for c in calls), 5),
        "server_miss": [c.miss for c in calls],
    }


def main_() -> None:
    os.environ.update(ENV)
    os.environ.setdefault("XDG_CONFIG_HOME", tempfile.mkdtemp())
    measured = bridge()
    cache = [
        resumed_cost((), "same"),
        resumed_cost(("--order", "reverse"), "reordered"),
        resumed_cost(("--variant", "louder"), "changed"),
    ]
    result = {
        "what": "MCP servers through tiny-agent: start and call times through the anyio portal (the test server, "
        "tests/mcp_servers/server.py), and what the resumed run of a session is billed when the server lists the same "
        "tools, reorders them, or rewords one (the CLI against the billing fake, Anthropic's cache rules)",
        "command": "PYTHONPATH=src .venv/bin/python benchmarks/mcp_tools.py",
        "date": time.strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores (shared), CPython {platform.python_version()}",
        "model": MODELS["anthropic"],
        "bridge": measured,
        "resumed_run": cache,
    }
    RESULTS.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main_()
