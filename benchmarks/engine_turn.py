"""What one turn costs the engine, against one ``json.dumps`` of the body it sends.

A stored session (SQLite) with N messages is resumed; each measured turn does what the agent loop
does: commit a tool result, decide on clearing and compaction, render the request once (body,
check, size, fingerprint), commit the ``call`` entry, "send" it to a provider that answers at once,
commit the reply and its record, and measure the context. The engine's work is the turn's time
minus the send; it is compared with ``json.dumps`` of the body the turn sent, which any client pays
at least once (the SDK serialises the body itself).

The session never compacts or clears during the measurement (``policy="fraction"`` with a threshold
out of reach, ``clear_after=None``), so the window really holds N messages; tool results are about
500 characters. Each figure is the median of the measured turns, after warm-up turns.

    PYTHONPATH=src .venv/bin/python benchmarks/engine_turn.py [--turns 15]

writes benchmarks/results/engine_turn.json.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tiny_agent.agent.loop import DEFAULT_SYSTEM
from tiny_agent.context.config import ContextConfig
from tiny_agent.context.entries import Response, ToolResult, TypedEntry, UserInput
from tiny_agent.context.session import Session
from tiny_agent.providers.anthropic.adapter import AnthropicProvider
from tiny_agent.providers.openai.adapter import OpenAICompatProvider
from tiny_agent.providers.profile import ProviderProfile
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.tools.workspace import Workspace
from tiny_agent.types import (
    Message,
    ModelResponse,
    OnProviderEvent,
    Prompt,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
)

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "engine_turn.json"
SIZES = (10, 100, 1_000, 5_000)
RESULT_CHARS = 500
CONFIG = ContextConfig(policy="fraction", compact_at=10**9, clear_after=None, context_window=10**9)


class Instant:
    """A provider that answers at once, on a real adapter's render; it keeps the body it was sent."""

    def __init__(self, adapter: AnthropicProvider | OpenAICompatProvider) -> None:
        self.adapter = adapter
        self.bodies: list[dict[str, Any]] = []
        self.sent_seconds = 0.0
        self.turn = 0

    @property
    def profile(self) -> ProviderProfile:
        return self.adapter.profile

    def wire_messages(self, message: Message, names: dict[str, str]) -> list[dict[str, Any]]:
        return self.adapter.wire_messages(message, names)

    def assemble(self, prompt: Prompt, messages: Sequence[Sequence[dict[str, Any]]]) -> dict[str, Any]:
        return self.adapter.assemble(prompt, messages)

    def render(self, prompt: Prompt) -> dict[str, Any]:
        return self.adapter.render(prompt)

    def send(self, body: dict[str, Any], *, on_event: OnProviderEvent | None = None) -> ModelResponse:
        started = time.perf_counter()
        self.bodies.append(body)
        self.turn += 1
        call = ToolUseBlock(f"toolu_bench_{self.turn:06d}", "read_file", {"path": f"docs/file{self.turn}.md"})
        size = 150 * len(body["messages"])
        response = ModelResponse(Message("assistant", (call,)), Usage(size, 30, size - 200, 200), "tool_use", "m")
        self.sent_seconds += time.perf_counter() - started
        return response

    def stream(self, body: dict[str, Any], *, on_event: OnProviderEvent | None = None) -> ModelResponse:
        return self.send(body)

    def count_tokens(self, prompt: Prompt) -> int | None:
        return None


def history(messages: int) -> list[TypedEntry]:
    """A request, then model turns that each read a file and get about 500 characters back."""
    out: list[TypedEntry] = [UserInput((TextBlock("Read the docs one by one and summarise each."),))]
    for i in range((messages - 1) // 2):
        call = ToolUseBlock(f"toolu_{i:06d}", "read_file", {"path": f"docs/part{i}.md"})
        out.append(Response((call,)))
        out.append(ToolResult(ToolResultBlock(call.id, _text(i))))
    return out


def _text(i: int) -> str:
    line = f"Section {i}: the service reads its settings at start and keeps them; see part {i + 1}. "
    return (line * (RESULT_CHARS // len(line) + 1))[:RESULT_CHARS]


def measure(messages: int, turns: int, wire: str, folder: Path) -> dict[str, Any]:
    adapter: AnthropicProvider | OpenAICompatProvider
    if wire == "anthropic":
        adapter = AnthropicProvider(model="claude-sonnet-4-6", api_key="benchmark-only")
    else:
        adapter = OpenAICompatProvider(model="gpt-4o-mini", api_key="benchmark-only")
    tools = Workspace(folder).tools()
    with SQLiteStore(folder / f"{wire}-{messages}.db") as store:
        session = Session.start(store, tools=[t.spec for t in tools], system=DEFAULT_SYSTEM, config=CONFIG)
        entries = history(messages)
        for start in range(0, len(entries), 500):
            session.context.append(entries[start : start + 500])
        session.close()
        resumed = Session.resume(store, session.id)
        ctx = resumed.context
        provider = Instant(adapter)
        work: list[float] = []
        dumps: list[float] = []
        renders: list[int] = []
        sizes: list[int] = []
        for turn in range(turns + 3):
            renders_before = ctx.renderer.renders
            sent_before = provider.sent_seconds
            started = time.perf_counter()
            pending = ctx.pending_calls
            if pending:
                ctx.add_tool_result(ToolResultBlock(pending[0].id, _text(messages + turn)))
            ctx.maybe_clear(provider)
            ctx.maybe_compact(provider)
            ctx.complete(provider)
            ctx.context_tokens()
            elapsed = time.perf_counter() - started - (provider.sent_seconds - sent_before)
            body = provider.bodies[-1]
            timed = time.perf_counter()
            text = json.dumps(body)
            dumped = time.perf_counter() - timed
            if turn >= 3:  # warm-up: the first render after a resume serialises every message once
                work.append(elapsed)
                dumps.append(dumped)
                renders.append(ctx.renderer.renders - renders_before)
                sizes.append(len(text))
        resumed.close()
    engine, dump = statistics.median(work), statistics.median(dumps)
    return {
        "messages": messages,
        "wire": wire,
        "window_messages": len(ctx.window()),
        "body_chars": int(statistics.median(sizes)),
        "engine_ms": round(engine * 1000, 3),
        "json_dumps_ms": round(dump * 1000, 3),
        "ratio": round(engine / dump, 2),
        "renders_per_turn": sorted(set(renders)),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=15, help="measured turns per size (after 3 warm-up turns)")
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    args = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory(prefix="engine-turn-") as tmp:
        folder = Path(tmp)
        for wire in ("anthropic", "openai"):
            for size in (int(s) for s in args.sizes.split(",")):
                row = measure(size, args.turns, wire, folder)
                rows.append(row)
                print(
                    f"{wire:<9} {size:>5} messages: engine {row['engine_ms']:>8.3f} ms, "
                    f"json.dumps {row['json_dumps_ms']:>7.3f} ms ({row['body_chars']:,} chars): "
                    f"{row['ratio']:>5.2f}x, renders per turn {row['renders_per_turn']}"
                )
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(
        json.dumps(
            {
                "benchmark": "engine work per turn against one json.dumps of the body sent",
                "command": "PYTHONPATH=src .venv/bin/python benchmarks/engine_turn.py "
                + " ".join(argv or sys.argv[1:]),
                "python": platform.python_version(),
                "machine": platform.machine(),
                "config": {"policy": "fraction", "clear_after": None, "tool_result_chars": RESULT_CHARS},
                "rows": rows,
            },
            indent=2,
        )
        + "\n"
    )
    print(f"wrote {RESULTS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
