"""The two sides of a replay, recorded and replayed: every call's figures and the totals."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tiny_agent.context.entries import Decision

__all__ = [
    "NOTE",
    "SETTINGS",
    "TOTALS",
    "CallFigures",
    "Figures",
    "Policy",
    "Replay",
    "decision_text",
    "paired_rows",
    "replay_lines",
    "sweep_lines",
]


SETTINGS = ("cache_ttl", "cache_marks", "provider", "model", "summary_tokens")  # a Policy's fields beside config
TOTALS = ("input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens", "reasoning_tokens")
"""The figures a side totals over its calls (``Figures.totals``)."""


@dataclass(frozen=True)
class Policy:
    """What to replay under; None keeps what the session recorded."""

    config: Mapping[str, Any] = field(default_factory=dict)
    """``ContextConfig`` fields: compact_at, keep_turns, policy, clear_after, ..."""
    cache_ttl: str | None = None
    provider: str | None = None
    model: str | None = None
    summary_tokens: int | None = None
    """The length of a summary the recording does not have; None: the recorded summaries' median
    (without any, ``whatif.recorded.ASSUMED_SUMMARY_TOKENS``)."""
    api: str | None = None
    """OpenAI's API ("responses", "chat"); None: as recorded, else the model's default."""
    cache_marks: str | None = None
    """A recorded session's (``whatif.bodies``): "own" (tiny-agent's placement), "none"; None: the program's."""

    def describe(self) -> str:
        """``compact-at=12000 keep-turns=2``, as the flags are written; "as recorded" for none."""
        values = {**self.config, **{k: getattr(self, k) for k in SETTINGS}}
        parts = [f"{k.replace('_', '-')}={flag_value(v)}" for k, v in values.items() if k in self.config or v]
        return " ".join(parts) or "as recorded"


def flag_value(value: Any) -> str:
    if value is None:
        return "never"
    if isinstance(value, float) and value.is_integer() and value > 1:
        return str(int(value))
    return str(value)


@dataclass(frozen=True)
class CallFigures:
    purpose: str
    at: float
    input_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int | None
    """None where the provider reported none (DeepSeek, Moonshot: their caches bill no writes)."""
    output_tokens: int
    cost_usd: float | None
    estimated: bool = False
    """Some of these figures are the engine's estimate, not a recorded measurement."""
    pins_present: bool = True
    fingerprint: Mapping[str, Any] = field(default_factory=dict)
    call: int | None = None
    """The recorded call's id (the seq of its call entry) this row is, or None for a call the
    recording did not make; rows are paired by it."""
    window: int | None = None
    """The context window the call was sent into (replayed side): a request over it overflows."""
    reasoning_tokens: int = 0
    """Of ``output_tokens``, the thinking (the recorded call's: a replay re-sends the recorded replies)."""

    @property
    def overflows(self) -> bool:
        return self.window is not None and self.input_tokens > self.window

    def to_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in self.__dict__.items() if k != "fingerprint"}
        return {**out, "overflows": self.overflows}


@dataclass(frozen=True)
class Figures:
    """One side of the comparison: every call, and the totals."""

    per_call: tuple[CallFigures, ...]
    compactions: int
    provider: str
    model: str
    decisions: tuple[Decision, ...] = ()
    """What the policy decided, where it acted (the recording's read from its log, guessed for a
    session from before decisions were written; the replay's from its own)."""
    unfinished: tuple[int, ...] = ()
    """Calls in flight when the session ended (a call entry with no reply or failure after it), by id."""
    described: str = ""
    """The policy the side ran under, its settings written as flags (``policy=cost compact-at=0.8``)."""

    def total(self, name: str) -> int | None:
        """The sum of a figure over the calls; None unless every call has it (never a 0 for "unknown"),
        as the run span's totals (``observe.telemetry``): a session that moved to DeepSeek partway has
        its Claude calls' writes and none of DeepSeek's, and their sum would read as the whole."""
        values = [getattr(c, name) for c in self.per_call]
        return None if None in values else sum(int(v) for v in values)

    def totals(self) -> dict[str, int | None]:
        """Every figure of ``TOTALS``, totalled (``total``)."""
        return {name: self.total(name) for name in TOTALS}

    @property
    def cost_usd(self) -> float | None:
        known = [c.cost_usd for c in self.per_call if c.cost_usd is not None]
        return sum(known) if known else (0.0 if not self.per_call else None)

    @property
    def estimated(self) -> bool:
        return any(c.estimated for c in self.per_call)

    @property
    def every_pin_in_every_request(self) -> bool:
        return all(c.pins_present for c in self.per_call)

    def to_dict(self) -> dict[str, Any]:
        return {
            "provider": self.provider,
            "model": self.model,
            "cost_usd": self.cost_usd,
            "calls": len(self.per_call),
            **self.totals(),
            "compactions": self.compactions,
            "estimated": self.estimated,
            "every_pin_in_every_request": self.every_pin_in_every_request,
            "decisions": [_decision(d) for d in self.decisions],
            "unfinished_calls": list(self.unfinished),
            "overflows": [i for i, c in enumerate(self.per_call, 1) if c.overflows],
            "per_call": [c.to_dict() for c in self.per_call],
        }


def _decision(d: Decision) -> dict[str, Any]:
    keys = ("policy", "action", "tokens", "threshold", "ceiling", "messages", "summarizer", "failed_at", "error")
    return {k: getattr(d, k) for k in keys}


def decision_text(decisions: tuple[Decision, ...]) -> str:
    """``2 compaction(s) (cost at 14,210 and 13,980 tokens, thresholds 13,500 and 13,200), 1 failed``."""
    done = [d for d in decisions if d.action == "compact" and d.failed_at is None]
    failed = sum(1 for d in decisions if d.failed_at is not None)
    cleared = sum(1 for d in decisions if d.action == "clear")
    parts: list[str] = []
    if done:
        at = " and ".join(f"{d.tokens:,}" for d in done[:4]) + (" ..." if len(done) > 4 else "")
        chosen = list(dict.fromkeys(d.threshold for d in done if d.threshold is not None))[:4]
        named = "threshold" if len(chosen) == 1 else "thresholds"
        ats = f", {named} {' and '.join(f'{t:,}' for t in chosen)}" if chosen else ""
        policies = "/".join(sorted({d.policy for d in done}))
        parts.append(f"{len(done)} compaction(s) ({policies} at {at} tokens{ats})")
    if failed:
        parts.append(f"{failed} failed")
    if cleared:
        parts.append(f"{cleared} clearing(s)")
    return ", ".join(parts) or "none"


@dataclass(frozen=True)
class Replay:
    policy: Policy
    recorded: Figures
    replayed: Figures

    def to_dict(self) -> dict[str, Any]:
        return {
            "policy": self.policy.describe(),
            "note": "the responses are the recorded ones: a model shown another window might have answered differently",
            "recorded": self.recorded.to_dict(),
            "replayed": self.replayed.to_dict(),
        }


NOTE = (
    "nothing was sent: the responses are the recorded ones (a model shown another window might have "
    "answered differently); * = estimated"
)


def _n(value: int | None) -> str:
    return "?" if value is None else f"{value:,}"


def _usd(value: float | None) -> str:
    return "$?" if value is None else f"${value:.4f}"


def _row(c: CallFigures | None) -> str:
    if c is None:
        return f"{'-':>36}"
    mark = "*" if c.estimated else " "
    usage = f"{_n(c.input_tokens)}/{_n(c.cache_read_tokens)}/{_n(c.cache_write_tokens)}/{_n(c.output_tokens)}"
    return f"{c.purpose[:10]:<10} {usage:>25}{mark} {_usd(c.cost_usd):>9}"


def _total(f: Figures) -> str:
    usage = (
        f"in={_n(f.total('input_tokens'))} (read={_n(f.total('cache_read_tokens'))} "
        f"write={_n(f.total('cache_write_tokens'))}) out={_n(f.total('output_tokens'))}"
        + (f" (thinking {_n(thought)})" if (thought := f.total("reasoning_tokens")) else "")
    )
    mark = " (estimated)" if f.estimated else ""
    return f"{len(f.per_call)} calls, {f.compactions} compactions, {usage}, {_usd(f.cost_usd)}{mark}"


def replay_lines(replay: Replay, *, per_call: bool = True) -> list[str]:
    """A replay for people: recorded and replayed side by side, per call and in total."""
    rec, rep = replay.recorded, replay.replayed
    changed = replay.policy.describe()
    under = rep.described or changed
    if changed != "as recorded":
        under = f"{under} (changed: {changed})" if rep.described else changed
    elif rep.described:
        under = f"{under} (the recorded policy)"
    lines = [
        f"replay under {under}: recorded on {rec.provider} · {rec.model}, replayed on {rep.provider} · {rep.model}",
        NOTE,
    ]
    if per_call:
        head = f"{'purpose':<10} {'in/read/write/out':>25}  {'cost':>9}"
        lines.append(f"{'#':>4}  recorded: {head}   replayed: {head}")
        for left, right in paired_rows(rec.per_call, rep.per_call):
            number = f"{left.call}" if left is not None and left.call is not None else ""
            flag = "  OVERFLOW" if right is not None and right.overflows else ""
            lines.append(f"{number:>4}  {_row(left)}             {_row(right)}{flag}")
    for call in rec.unfinished:
        lines.append(f"call {call} was in flight when the session ended (no reply recorded): not replayed")
    over = [c for c in rep.per_call if c.overflows]
    if over:
        worst = max(over, key=lambda c: c.input_tokens)
        lines.append(
            f"OVERFLOW: {len(over)} replayed request(s) exceed the {worst.window:,}-token window (the largest "
            f"{worst.input_tokens:,} tokens): the provider would refuse them; compact earlier (--compact-at)"
        )
    lines.append(f"recorded: {_total(rec)}")
    lines.append(f"replayed: {_total(rep)}")
    if rec.decisions or rep.decisions:
        lines.append(f"decisions recorded: {decision_text(rec.decisions)}; replayed: {decision_text(rep.decisions)}")
    pins = "yes" if rep.every_pin_in_every_request else "NO"
    lines.append(f"every pin in every replayed request: {pins}")
    if rec.cost_usd and rep.cost_usd is not None:
        change = 100 * (rep.cost_usd - rec.cost_usd) / rec.cost_usd
        lines.append(f"replayed / recorded cost: {rep.cost_usd / rec.cost_usd:.3f} ({change:+.1f}%)")
    for side, name in ((rec, "recorded"), (rep, "replayed")):
        if side.cost_usd is None:
            model = f"{side.provider} · {side.model}"
            lines.append(f"$? = no known price for {model} (genai-prices has none): the {name} cost is unknown")
    return lines


def paired_rows(
    recorded: Sequence[CallFigures], replayed: Sequence[CallFigures]
) -> list[tuple[CallFigures | None, CallFigures | None]]:
    """The two sides row by row, a recorded call beside the replayed call of the same id; a call only
    one side made (a compaction the other policy did not do) on a row of its own, in order."""
    replayed_ids = {c.call for c in replayed if c.call is not None}
    recorded_ids = {c.call for c in recorded if c.call is not None}
    rows: list[tuple[CallFigures | None, CallFigures | None]] = []
    i = j = 0
    while i < len(recorded) or j < len(replayed):
        left = recorded[i] if i < len(recorded) else None
        right = replayed[j] if j < len(replayed) else None
        if left is not None and right is not None and left.call is not None and left.call == right.call:
            rows.append((left, right))
            i, j = i + 1, j + 1
        elif left is not None and (left.call not in replayed_ids or right is None):
            rows.append((left, None))
            i += 1
        elif right is not None and (right.call not in recorded_ids or left is None):
            rows.append((None, right))
            j += 1
        else:  # both wait for a call the other side has later: not in the same order; take the left
            rows.append((left, None))
            i += 1
    return rows


def sweep_lines(replays: list[Replay]) -> list[str]:
    """Every combination of a sweep, its totals, the cheapest marked."""
    if not replays:
        return []
    costs = [r.replayed.cost_usd for r in replays]
    known = [c for c in costs if c is not None]
    cheapest = min(known) if known else None
    rec = replays[0].recorded
    lines = [NOTE, f"  recorded {'':<38} {_total(rec)}"]
    for replay, cost in zip(replays, costs, strict=True):
        mark = "*" if cost is not None and cost == cheapest else " "
        lines.append(f"{mark} {replay.policy.describe():<47} {_total(replay.replayed)}")
    lines.append("* the cheapest under the recorded responses")
    return lines
