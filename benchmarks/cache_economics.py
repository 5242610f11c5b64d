"""What does each context policy cost on a long task? Priced by the billing simulator, side by side.

One scripted task (benchmarks/economics_task.py: 45 model turns, file reads of 1k-8k tokens,
listings, writes, tool errors, two pins, five probes) runs under every policy below. The model is
scripted, so every policy sees the same replies; only what the context engine sends differs. Each
request is priced by ``tiny_agent.providers.cache_sim`` under Anthropic's rules at Sonnet 4.6's
prices (genai-prices), and the usage the simulator bills is what the scripted provider reports
back, so the engine measures its context with the same counts the bill uses. Each tiny-agent
policy runs a second time on the OpenAI wire as GPT-5.6 (explicit breakpoints, 30-minute entries,
1.25x writes, 0.1x reads, GPT-5.6's prices): the "gpt-5.6" column.

    PYTHONPATH=src python benchmarks/cache_economics.py     # writes benchmarks/results/cache_economics.json

No network; a few seconds. To add a policy, add one line to ``POLICIES`` (see ``agent_policy``).
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from economics_task import (
    MODEL_SECONDS,
    OUTPUT_TOKENS_PER_SECOND,
    PHASES,
    PINS,
    PROBES,
    PROTECTED,
    TOOL_SECONDS,
    TURNS,
    Clock,
    Step,
    make_workspace,
    summary_text,
)

from tiny_agent.agent.loop import DEFAULT_SYSTEM, Agent, AgentConfig, CompactionEvent, Event, TurnEvent
from tiny_agent.context.engine import Context, ContextConfig
from tiny_agent.context.shrink.compaction import SUMMARY_OPENING
from tiny_agent.providers.cache_sim import SimCall, Simulator, total
from tiny_agent.providers.prefix import block_tokens, without_marks
from tiny_agent.providers.pricing import context_window_of
from tiny_agent.testing import ScriptedProvider
from tiny_agent.tools.toolbox import Tool, Toolbox
from tiny_agent.tools.workspace import Workspace
from tiny_agent.types import Message, ModelResponse, Prompt, TextBlock, ToolUseBlock, Wire

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "cache_economics.json"
MODEL = "claude-sonnet-4-6"
WINDOW = context_window_of(MODEL, "anthropic") or 200_000


@dataclass(frozen=True)
class Column:
    """A wire and model every policy is priced on, by the simulator of that wire's rules."""

    wire: Wire
    model: str

    @property
    def window(self) -> int:
        return context_window_of(self.model, self.wire) or 200_000


SONNET = Column("anthropic", MODEL)
GPT56 = Column("openai", "gpt-5.6")

SEED_SUMMARY_SYSTEM = (
    "Summarize this conversation history into one paragraph. Keep tool calls, file paths, and any facts "
    "the next turn might need. No preamble."
)
SUMMARY_MARKERS = (SUMMARY_OPENING, SEED_SUMMARY_SYSTEM[:60])
"""How the scripted model recognises a summary request: its instructions, in the last user turn or
the system prompt. Whatever else the request looks like (the engine may send the whole window)."""


def is_summary_request(body: dict[str, Any]) -> bool:
    system = json.dumps(body.get("system", ""))
    last = body["messages"][-1]
    content = last["content"] if isinstance(last["content"], str) else json.dumps(last["content"])
    return any(m in system or (last["role"] == "user" and m in content) for m in SUMMARY_MARKERS)


# -- the scripted model ---------------------------------------------------------------------------


@dataclass
class Run:
    """One policy's run: the clock, the simulator, and what was observed at each model call."""

    column: Column = SONNET
    clock: Clock = field(default_factory=Clock)
    sim: Simulator = field(init=False)
    steps: list[Step] = field(default_factory=lambda: [s for p in PHASES for s in p.steps])
    turn: int = 0
    probes: dict[str, str] = field(default_factory=dict)
    """Probe name -> "present", "recovered" (after reading its file again) or "lost"."""
    rereads: int = 0
    first_seen: dict[str, int] = field(default_factory=dict)
    """Probe name -> the first turn whose request carried the fact."""
    pinned_requests: int = 0
    turn_requests: int = 0
    compactions: int = 0
    diagnosed: list[str | None] = field(default_factory=list)
    """The engine's own diagnosis of each call, in call order (tiny-agent policies only)."""
    estimate_errors: list[float] = field(default_factory=list)
    """After each compaction: (engine's size estimate - the next request's billed input) / billed input."""

    def __post_init__(self) -> None:
        self.sim = Simulator(self.column.wire, self.column.model)

    def __call__(self, body: dict[str, Any]) -> ModelResponse:
        """The scripted model: a summary for a summary request, else the next scripted turn."""
        if is_summary_request(body):
            reply, label = Message.assistant(summary_text(self.turn + 1)), "summary"
        else:
            self.turn += 1
            if self.turn > len(self.steps):
                raise RuntimeError(
                    "the script ran out of turns: was a summary request not recognised? see is_summary_request"
                )
            reply, label = self._turn_reply(self.steps[self.turn - 1]), "turn"
            dump = json.dumps(body, ensure_ascii=False)
            self.pinned_requests += all(pin in dump for pin in PINS)
            self.turn_requests += 1
            for probe in PROBES:
                present = probe.fact in dump
                if present:
                    self.first_seen.setdefault(probe.name, self.turn)
                if probe.turn != self.turn or (probe.name in self.probes and self.probes[probe.name] != "rereading"):
                    continue
                if present:
                    self.probes[probe.name] = "recovered" if probe.name in self.probes else "present"
                elif probe.source and probe.source in dump and probe.name not in self.probes:
                    # The fact is gone but the file is named: read it again, then take this turn.
                    self.probes[probe.name] = "rereading"
                    self.turn -= 1
                    self.rereads += 1
                    reply, label = Message("assistant", (ToolUseBlock(f"toolu_reread_{self.rereads}", "read_file",
                                                                      {"path": probe.source}),)), "turn"  # fmt: skip
                    break
                else:
                    self.probes[probe.name] = "lost"
        output = sum(block_tokens(b.to_dict()) for b in reply.content)
        call = self.sim.send(self.clock.now, body, output, label)
        self.clock.advance(MODEL_SECONDS + output / OUTPUT_TOKENS_PER_SECOND)
        return ModelResponse(reply, call.usage(), "tool_use" if reply.tool_uses else "end_turn", self.column.model)

    def _turn_reply(self, step: Step) -> Message:
        text = (TextBlock(step.text),) if step.text else ()
        calls = tuple(ToolUseBlock(f"toolu_{self.turn:03d}_{i}", n, a) for i, (n, a) in enumerate(step.calls))
        return Message("assistant", text + calls)

    def toolbox(self, root: Path) -> Toolbox:
        """The real workspace tools, each advancing the clock by its simulated duration."""
        workspace = Workspace(root, protect=[PROTECTED], max_output_chars=60_000)

        def timed(tool: Tool) -> Tool:
            def fn(args: dict[str, Any]) -> str:
                self.clock.advance(TOOL_SECONDS[tool.name])
                return tool.fn(args)

            return Tool(tool.name, tool.description, tool.input_schema, fn)

        return Toolbox(timed(t) for t in workspace.tools(grammar=False))


@contextmanager
def workspace() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="economics-") as tmp:
        root = Path(tmp)
        make_workspace(root)
        yield root


class BenchProvider(ScriptedProvider):
    """The scripted provider on the run's wire, optionally without any cache marker."""

    def __init__(self, run: Run, *, cache_marks: bool = True) -> None:
        column = run.column
        super().__init__([run] * (4 * TURNS), wire=column.wire, model=column.model, context_window=column.window)
        self.cache_marks = cache_marks

    def assemble(self, prompt: Prompt, messages: Sequence[Sequence[dict[str, Any]]]) -> dict[str, Any]:
        # Here, not in ``render``: the engine's renderer assembles, and never calls ``render``.
        body = super().assemble(prompt, messages)
        return body if self.cache_marks else without_marks(body)


# -- policies -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Policy:
    name: str
    note: str
    drive: Callable[[Run, Path], None]
    """Runs the whole script (every phase) under this policy."""
    anthropic_only: bool = False
    """A transcription that writes Anthropic bodies itself (the seed): no GPT-5.6 column."""


def agent_policy(name: str, note: str, config: ContextConfig | None = None, *, cache_marks: bool = True) -> Policy:
    """tiny-agent's own Agent and Context with ``config``: the one-liner for a new lever."""

    def drive(run: Run, root: Path) -> None:
        provider = BenchProvider(run, cache_marks=cache_marks)
        toolbox = run.toolbox(root)
        # The engine's cache lifetimes run on the simulated clock, like the simulator's.
        context = Context(DEFAULT_SYSTEM, toolbox.specs, config=config, clock=lambda: run.clock.now)
        agent = Agent(provider, toolbox, config=AgentConfig(max_steps=4 * TURNS), context=context, pins=PINS)
        for phase in PHASES:
            run.clock.advance(phase.pause_before)
            result = agent.run(phase.request)
            if result.stop != "done":
                raise RuntimeError(f"{name}: phase stopped with {result.stop}: {result.message}")
            run.estimate_errors.extend(_estimate_errors(result.events))
        run.compactions = len(agent.context.compactions)
        run.diagnosed = [c.miss for c in agent.context.ledger.calls]

    return Policy(name, note, drive)


def _estimate_errors(events: list[Event]) -> Iterator[float]:
    estimate = None
    for event in events:
        if isinstance(event, CompactionEvent):
            estimate = event.compaction.tokens_after
        elif isinstance(event, TurnEvent) and estimate is not None:
            billed = event.call.usage.input_tokens or 1
            yield (estimate - billed) / billed
            estimate = None


def seed_policy() -> Policy:
    """The seed's v0.2 Context, transcribed: system-only cache mark, compress at 12,000 tokens keeping
    4 turns, the summary from a JSON dump by a separate call without tools. The seed has no pins: the
    constraints go in the first user message, as its author did."""

    def drive(run: Run, root: Path) -> None:
        toolbox = run.toolbox(root)
        tools = [
            {"name": t.name, "description": t.description, "input_schema": dict(t.input_schema)} for t in toolbox.specs
        ]
        system = [{"type": "text", "text": DEFAULT_SYSTEM, "cache_control": {"type": "ephemeral"}}]
        messages: list[dict[str, Any]] = []
        size = 0
        for n, phase in enumerate(PHASES):
            run.clock.advance(phase.pause_before)
            constraints = "\n".join(f"- {p}" for p in PINS)
            text = f"{phase.request}\n\nConstraints:\n{constraints}" if n == 0 else phase.request
            messages.append({"role": "user", "content": text})
            while True:
                if size >= 12_000 and len(messages) > 8:
                    messages, compressed = _seed_compress(run, messages)
                    run.compactions += compressed
                body = {"model": MODEL, "max_tokens": 1024, "system": system, "tools": tools, "messages": messages}
                response = run(body)
                size = (response.usage.input_tokens or 0) + (response.usage.output_tokens or 0)
                messages.append(response.message.to_dict())
                calls = response.message.tool_uses
                if not calls:
                    break
                messages.append({"role": "user", "content": [toolbox.run(c).to_dict() for c in calls]})

    note = "system prompt cached only; compress at 12,000 tokens, keep 4 turns, JSON dump"
    return Policy("seed v0.2", note, drive, anthropic_only=True)


def _seed_compress(run: Run, messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    def is_results(m: dict[str, Any]) -> bool:
        return (
            m["role"] == "user"
            and isinstance(m["content"], list)
            and any(b.get("type") == "tool_result" for b in m["content"])
        )

    cut = len(messages) - 4 * 2
    while cut > 0 and is_results(messages[cut]):
        cut -= 1
    if cut <= 0:
        return messages, 0
    old, recent = messages[:cut], messages[cut:]
    request = {
        "model": MODEL,
        "max_tokens": 512,
        "system": SEED_SUMMARY_SYSTEM,
        "messages": [{"role": "user", "content": json.dumps(old, separators=(",", ":"), ensure_ascii=False)}],
    }
    summary = run(request).message.text
    pad = [{"role": "assistant", "content": "Understood, continuing from here."}] if recent[0]["role"] == "user" else []
    return [{"role": "user", "content": f"[Summary of earlier conversation]\n{summary}"}, *pad, *recent], 1


PREVIOUS: dict[str, Any] = {"policy": "fraction", "summary": "transcript", "clear_after": None}
"""The engine before issue 9's levers: compact past a fraction of the window, summarise a flattened transcript."""

POLICIES: list[Policy] = [
    agent_policy(
        "naive",
        "full replay: no cache marks, no compaction",
        ContextConfig(compact_at=10**9, **PREVIOUS),
        cache_marks=False,
    ),
    seed_policy(),
    agent_policy("previous default", "rolling cache marks, compact at 80% of the window", ContextConfig(**PREVIOUS)),
    agent_policy(
        "previous default, 12k/4",
        "the same engine with the seed's thresholds (--compact-at 12000 --keep-turns 4)",
        ContextConfig(compact_at=12_000, keep_turns=4, **PREVIOUS),
    ),
    agent_policy(
        "summary reads the cache, 12k/4",
        "lever 1 alone: the summary is asked at the end of the window, a cache read",
        ContextConfig(compact_at=12_000, keep_turns=4, **{**PREVIOUS, "summary": "cached"}),
    ),
    agent_policy(
        "cost-aware compaction",
        "lever 2 alone: compact when the cache prices say it pays (transcript summary)",
        ContextConfig(**{**PREVIOUS, "policy": "cost"}),
    ),
    agent_policy(
        "tool-output clearing",
        "lever 3 alone: results older than 8 turns become stubs, in batches, when it pays",
        ContextConfig(**{**PREVIOUS, "clear_after": 8}),
    ),
    agent_policy(
        "levers, fraction policy",
        "cached summary and clearing, compacting only past 80% of the window",
        ContextConfig(policy="fraction"),
    ),
    agent_policy("new default", "ContextConfig(): every lever at its default (cost policy)", ContextConfig()),
]


# -- running and reporting ------------------------------------------------------------------------


def measure(policy: Policy, column: Column = SONNET) -> dict[str, Any]:
    run = Run(column)
    with workspace() as root:
        policy.drive(run, root)
    if run.turn != TURNS:
        raise RuntimeError(f"{policy.name}: ran {run.turn} of {TURNS} turns")
    calls = run.sim.calls
    summaries = [c for c in calls if c.label == "summary"]
    bill = total(calls)
    return {
        "policy": policy.name,
        "note": policy.note,
        "usd": round(bill.usd, 6),
        "tokens": _tokens(bill),
        "turns": run.turn,
        "requests": len(calls),
        "compactions": run.compactions,
        "summary_calls": len(summaries),
        "summary_usd": round(total(summaries).usd, 6) if summaries else 0.0,
        "summary_tokens": _tokens(total(summaries)) if summaries else None,
        "probes": run.probes,
        "probes_present": sum(v == "present" for v in run.probes.values()),
        "probes_answered": sum(v in ("present", "recovered") for v in run.probes.values()),
        "rereads": run.rereads,
        "pins_in_every_request": run.pinned_requests == run.turn_requests,
        "requests_with_all_pins": run.pinned_requests,
        "largest_request_tokens": max(c.input_tokens for c in calls),
        "estimate_error_after_compaction": [round(e, 4) for e in run.estimate_errors],
        "misses": dict(Counter(_cause(c.miss) for c in calls if c.miss)),
        "diagnosis": _diagnosis(calls, run.diagnosed),
        "task_seconds": round(run.clock.now, 1),
        "first_seen": run.first_seen,
        "calls": [
            [c.label, round(c.at, 1), c.input_tokens, c.cache_read, c.cache_write, c.output_tokens, c.miss]
            for c in calls
        ],
    }


ENGINE_CAUSES = {
    "ttl": ("the cache entry expired",),
    "lookback": ("lookback",),
    "below-minimum": ("below the minimum",),
    "no-breakpoint": ("no cache breakpoint",),
    "changed": ("system prompt changed", "tools changed", "pinned", "message #", "a compaction", "clearing", "model"),
}


def _diagnosis(calls: list[SimCall], diagnosed: list[str | None]) -> dict[str, Any] | None:
    """The engine's miss diagnosis against the simulator's: a miss the simulator billed should be named
    with the same cause. ``no-breakpoint`` misses are the policy's own choice (naive sends no marks)."""
    if len(diagnosed) != len(calls):
        return None
    billed = [(c.miss, ours) for c, ours in zip(calls, diagnosed, strict=True) if c.miss and c.label != "summary"]
    agree = sum(
        1
        for miss, ours in billed
        if ours is not None and ours.startswith(ENGINE_CAUSES.get(_cause(miss).split(":")[0], ("?",)))
    )
    return {"billed_misses": len(billed), "named_alike": agree, "pairs": [[m, o] for m, o in billed]}


def _cause(miss: str) -> str:
    """A miss's cause without the block path: ``changed:messages[3].content[0]`` -> ``changed:messages``."""
    return miss.split("[", 1)[0]


def _tokens(call: SimCall) -> dict[str, int]:
    return {
        "uncached": call.uncached,
        "cache_read": call.cache_read,
        "cache_write_5m": call.cache_write_5m,
        "cache_write_1h": call.cache_write_1h,
        "output": call.output_tokens,
    }


GPT56_KEYS = ("usd", "tokens", "compactions", "summary_usd", "probes_answered", "pins_in_every_request", "misses")


def _gpt56_column(policies: list[Policy], rows: list[dict[str, Any]]) -> None:
    """Each policy again as GPT-5.6 on the OpenAI wire, priced by the simulator's GPT-5.6 rules."""
    figures = {p.name: measure(p, GPT56) for p in policies if not p.anthropic_only}
    naive = figures["naive"]["usd"]
    for row in rows:
        found = figures.get(row["policy"])
        if found is not None:
            row["gpt-5.6"] = {k: found[k] for k in GPT56_KEYS} | {"ratio_to_naive": round(found["usd"] / naive, 4)}
            row["gpt-5.6"]["diagnosis"] = found["diagnosis"]


def table(rows: list[dict[str, Any]]) -> str:
    head = (
        f"{'policy':<26} {'USD':>8} {'x naive':>8} {'uncached':>9} {'read':>9} {'write':>8} {'output':>7} "
        f"{'compact':>7} {'summary $':>9} {'probes':>10} {'pins':>5}"
    )
    lines = [head, "-" * len(head)]
    for r in rows:
        t = r["tokens"]
        lines.append(
            f"{r['policy']:<26} {r['usd']:>8.3f} {r['ratio_to_naive']:>8.3f} {t['uncached']:>9,} {t['cache_read']:>9,} "
            f"{t['cache_write_5m'] + t['cache_write_1h']:>8,} {t['output']:>7,} {r['compactions']:>7} "
            f"{r['summary_usd']:>9.3f} {r['probes_answered']:>4}/{len(PROBES)} ({r['probes_present']}) "
            f"{'all' if r['pins_in_every_request'] else 'LOST':>5}"
        )
    lines.append(f"\nthe same policies as {GPT56.model} on the OpenAI wire (explicit breakpoints, 30m, 1.25x/0.1x):")
    for r in rows:
        g = r.get("gpt-5.6")
        if g:
            t = g["tokens"]
            lines.append(
                f"  {r['policy']:<26} {g['usd']:>8.3f} {g['ratio_to_naive']:>8.3f} {t['uncached']:>9,} "
                f"{t['cache_read']:>9,} {t['cache_write_5m'] + t['cache_write_1h']:>8,} "
                f"{g['compactions']:>3} compactions"
            )
    lines.append("\nmisses by cause (requests that read less than the cache held; see SimCall.miss):")
    for r in rows:
        causes = ", ".join(f"{cause} {n}" for cause, n in sorted(r["misses"].items())) or "none"
        lines.append(f"  {r['policy']:<26} {causes}")
    lines.append("\nthe engine's size estimate after each compaction, against the next request's billed input:")
    for r in rows:
        errors = r["estimate_error_after_compaction"]
        if errors:
            worst = max(errors, key=abs)
            lines.append(f"  {r['policy']:<26} {len(errors)} compactions, worst {worst:+.1%}")
    lines.append("\nthe engine's own diagnosis of each billed miss (the per-turn line) against the simulator's cause:")
    for r in rows:
        found = r["diagnosis"]
        if found:
            lines.append(f"  {r['policy']:<26} {found['named_alike']} of {found['billed_misses']} named alike")
    return "\n".join(lines)


_SCALAR_LIST = re.compile(r'\[\n((?:\s*(?:"[^"\n]*"|-?[\d.]+|null|true|false),?\n)+)\s*\]')


def _dump(data: dict[str, Any]) -> str:
    """Indented JSON with each list of scalars (a call row, a column list) on one line."""
    text = json.dumps(data, indent=2)
    return _SCALAR_LIST.sub(lambda m: "[" + " ".join(m.group(1).split()) + "]", text) + "\n"


# -- the keepalive: a user who pauses ----------------------------------------------------------------

KEEPALIVE_PAUSES = (180, 420, 1200)
"""Seconds the user is away between two questions: within the 5-minute lifetime, past it, far past it."""


def keepalive_rows() -> list[dict[str, Any]]:
    """Two questions with a pause between, with and without the keepalive, on a fake clock, through the
    Anthropic SDK against the billing fake (which bills by the same cache rules)."""
    from tiny_agent.agent.keepalive import Keepalive
    from tiny_agent.context.log import MemoryLog
    from tiny_agent.providers.registry import resolve_provider
    from tiny_agent.testing import BillingFake, Task

    clock = Clock()
    rows = []
    with tempfile.TemporaryDirectory(prefix="keepalive-") as tmp:
        root = Path(tmp)
        make_workspace(root)
        names = sorted(p.name for p in root.iterdir() if p.is_file())[:4]
        tasks = [
            Task(f"question {n}", [[("read_file", {"path": name})]], f"Answer {n}.") for n, name in enumerate(names)
        ]
        with BillingFake(tasks, clock=lambda: clock.now) as fake:
            for pause in KEEPALIVE_PAUSES:
                row: dict[str, Any] = {"pause_seconds": pause}
                for keep in (False, True):
                    route = f"p{pause}{'k' if keep else ''}"
                    env = {"ANTHROPIC_API_KEY": "sk-ant-economics-not-a-real-key"}
                    provider = resolve_provider(
                        "anthropic", model=MODEL, base_url=fake.url(route, "anthropic"), env=env
                    )
                    toolbox = Toolbox(Workspace(root).tools())
                    context = Context(DEFAULT_SYSTEM, toolbox.specs, log=MemoryLog(clock=lambda: clock.now),
                                      clock=lambda: clock.now)  # fmt: skip
                    agent = Agent(provider, toolbox, context=context)
                    warm = Keepalive(context, provider, clock=lambda: clock.now, thread=False) if keep else None
                    agent.run("Here is question 0")
                    end = clock.now + pause
                    while clock.now < end:
                        clock.advance(min(10.0, end - clock.now))
                        if warm is not None:
                            with warm.idle():
                                warm.tick()
                    agent.run("Here is question 1")
                    bills = fake.bills(route)
                    pings = [b for b in bills if b.body.get("max_tokens") == 1]
                    after = [b for b in bills if b.body.get("max_tokens") != 1][2]  # question 1's first request
                    row["with" if keep else "without"] = {
                        "usd": round(sum(b.call.usd for b in bills), 6),
                        "pings": len(pings),
                        "ping_usd": round(sum(b.call.usd for b in pings), 6),
                        "after_pause": [after.call.cache_read, after.call.cache_write],
                    }
                    clock.advance(3600)  # the next scenario starts with every entry expired
                row["saved_usd"] = round(row["without"]["usd"] - row["with"]["usd"], 6)
                rows.append(row)
    return rows


def keepalive_table(rows: list[dict[str, Any]]) -> str:
    lines = ["\nthe keepalive: two questions with a pause between (after_pause = read/write of the request after it):"]
    for r in rows:
        w, k = r["without"], r["with"]
        lines.append(
            f"  pause {r['pause_seconds'] // 60:>2} min: without ${w['usd']:.4f} (read/write {w['after_pause']}), "
            f"with ${k['usd']:.4f} ({k['pings']} pings ${k['ping_usd']:.4f}, read/write {k['after_pause']})"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--only", action="append", default=[], help="run naive and the policies whose name has this")
    args = parser.parse_args()
    started = time.monotonic()
    chosen = [p for p in POLICIES if p.name == "naive" or not args.only or any(o in p.name for o in args.only)]
    rows = [measure(p) for p in chosen]
    naive = next(r["usd"] for r in rows if r["policy"] == "naive")
    for r in rows:
        r["ratio_to_naive"] = round(r["usd"] / naive, 4)
    _gpt56_column(chosen, rows)
    summary = {
        "model": MODEL,
        "rules": "Anthropic: breakpoints, 20-block lookback, 1,024-token minimum, 5m TTL; 1.25x write, 0.1x read",
        "gpt-5.6_rules": "OpenAI GPT-5.6: breakpoints on content parts, 4 written, read at the latest 80 only "
        "(no lookback), 1,024-token minimum, 30m TTL; 1.25x write, 0.1x read",
        "turns": TURNS,
        "probes": [
            {"name": p.name, "kind": p.kind, "first_seen": rows[0]["first_seen"].get(p.name), "needed_at": p.turn}
            for p in PROBES
        ],
        "calls_columns": ["label", "at_seconds", "input_tokens", "cache_read", "cache_write", "output_tokens", "miss"],
        "pins": list(PINS),
        "seconds": round(time.monotonic() - started, 1),
        "machine": f"{platform.machine()}, {platform.system()}, python {platform.python_version()}",
        "date": time.strftime("%Y-%m-%d"),
        "command": "PYTHONPATH=src python benchmarks/cache_economics.py",
    }
    keep = keepalive_rows()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(_dump({"summary": summary, "rows": rows, "keepalive": keep}))
    print(table(rows))
    print(keepalive_table(keep))
    where = args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out
    print(f"\n{TURNS} model turns, {len(PROBES)} probes, {MODEL} list prices; {summary['seconds']} s; wrote {where}")


if __name__ == "__main__":
    main()
