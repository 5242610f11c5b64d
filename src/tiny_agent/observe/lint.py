"""``lint``: find what will cost money or fail in a request body before anything is spent.

A miss never throws; it shows on the invoice. Each hazard gets a rule id, severity, path, excerpt, fix:

- in one body: ``illegal-order`` (a 400, from ``context.legality``), ``too-many-breakpoints``,
  ``ttl-order``, ``breakpoint-on-uncacheable`` (errors); ``volatile-in-prefix`` (a date, time, id
  in the cached prefix: a warning in tools and system, a hint in history), ``below-minimum``,
  ``no-breakpoint``, ``wire-mismatch`` (another wire's body than ``wire``) (warnings);
- between consecutive bodies (files, a JSON list, JSONL, stdin, a session), the earlier being the
  newest the API accepted: every cause the later would not read what the earlier cached, with its
  place, from ``providers.cache_breaks`` (the one finder the view uses too); a thinking block edited
  (``thinking-modified``), or sent after another prefix than it first was (``thinking-rebound``).
  docs/lint.md lists every rule with what it means.
A body is clean with no error or warning (``info`` is a hint); tokens: ``prefix.block_tokens``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Literal

from tiny_agent.observe.lint_breaks import REASONING_FIXES, fix_for, sequence_findings
from tiny_agent.observe.lint_inputs import load_bodies, load_timed
from tiny_agent.observe.lint_volatile import FIX_VOLATILE, volatile_values
from tiny_agent.providers.base import Wire
from tiny_agent.providers.cache_breaks import prefix_breaks, unmarkable
from tiny_agent.providers.cache_expiry import expired
from tiny_agent.providers.cache_rules import MAX_BREAKPOINTS, Ttl, min_cacheable_tokens
from tiny_agent.providers.prefix import PrefixBlock, block_tokens, breakpoints, ttls_in_order
from tiny_agent.providers.reasoning_check import RULES as REASONING_RULES
from tiny_agent.providers.reasoning_check import Sequenced, body_problems, reasoning_sequence
from tiny_agent.providers.wire import WireFormat, cache_rules, shown_wire, wire_of
from tiny_agent.providers.wire import detect_wire as _detect
from tiny_agent.store.base import Store

__all__ = [
    "Finding",
    "Severity",
    "detect_wire",
    "is_clean",
    "lint_bodies",
    "lint_body",
    "lint_files",
    "lint_session",
    "load_bodies",
]

Severity = Literal["error", "warning", "info"]


@dataclass(frozen=True)
class Finding:
    """One hazard in one request body."""

    rule: str
    severity: Severity
    path: str
    """JSON path inside the body, e.g. ``system[0].text``; ``$`` for the body as a whole."""
    message: str
    excerpt: str
    fix: str
    request: int | None = None
    """Index of the body among several linted together."""
    source: str | None = None
    """Where the body came from (``file`` or ``file:line``)."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def __str__(self) -> str:
        where = self.source or (f"request {self.request}" if self.request is not None else "")
        head = f"{where}: " if where else ""
        excerpt = f" [{self.excerpt}]" if self.excerpt else ""
        return f"{head}{self.path}: {self.severity} {self.rule}: {self.message}{excerpt}; fix: {self.fix}"


def is_clean(findings: Iterable[Finding]) -> bool:
    """True when no finding is an error or a warning."""
    return all(f.severity == "info" for f in findings)


def detect_wire(body: Mapping[str, Any]) -> Wire:
    """The name of the body's wire (Anthropic, OpenAI Chat Completions, ...), from its shape."""
    return _detect(body).name


def lint_body(body: Mapping[str, Any], wire: Wire | None = None, model: str | None = None) -> list[Finding]:
    """Every hazard found in one request body."""
    fmt = wire_of(wire) if wire else _detect(body)
    model = model or str(body.get("model") or "")
    findings = _legality(body, fmt, model)
    shown = shown_wire(body) if wire else None
    if shown is not None and shown is not fmt:  # linted by another wire's rules: what it finds is not the body's
        said, fix = f"the body has the {shown.name} wire's shape", f"drop --wire or give --wire {shown.name}"
        findings.append(Finding("wire-mismatch", "warning", "$", f"{said}, linted as {fmt.name}", "", fix))
    blocks = fmt.prefix_blocks(body, block_tokens)
    # A wire whose marks are optional (OpenAI's) is not held to the breakpoint rules.
    marks = breakpoints(body, blocks) if fmt.marks_required else []
    for path, severity, message, excerpt in volatile_values(blocks, max((i for i, _ in marks), default=-1)):
        level: Severity = "warning" if severity == "warning" else "info"
        findings.append(Finding("volatile-in-prefix", level, path, message, excerpt, FIX_VOLATILE))
    fix = "move the cache_control to the nearest text, image, tool_use or tool_result block before it"
    for block in unmarkable(blocks, fmt.name):
        what = f"a cache breakpoint on a {block.data.get('type') or 'block'} block, which may not carry one"
        findings.append(Finding("breakpoint-on-uncacheable", "error", block.path, what, "", fix))
    if fmt.marks_required:
        findings.extend(_breakpoints(blocks, marks, model, fmt))
    return findings


def lint_bodies(
    bodies: Sequence[Mapping[str, Any]],
    wire: Wire | None = None,
    model: str | None = None,
    sources: Sequence[str] | None = None,
    times: Sequence[float | None] | None = None,
    accepted: Sequence[bool] | None = None,
) -> list[Finding]:
    """Each body's findings and what changed since the body before it, in the order sent. ``times``: when
    each body's answer came (a stored session's), so an expired entry is found too; ``accepted``: whether
    the API took each (default: all). A refused body is linted and compared, but the next is compared
    with the newest accepted one, as the per-call miss line compares it (the refused one cached nothing)."""
    findings: list[Finding] = []
    last: dict[str, tuple[Mapping[str, Any], float | None]] = {}
    sequences: dict[str, Sequenced] = {}
    for i, body in enumerate(bodies):
        own, at, took = wire or detect_wire(body), times[i] if times else None, accepted[i] if accepted else True
        alone = lint_body(body, wire, model)
        changes = _changes(last[own][0], body, own, model, _idle(last[own][1], at)) if own in last else []
        # each wire's bodies against that wire's earlier ones: the other is another cache, another API
        rules = sequences.setdefault(own, reasoning_sequence(own))
        moved = sequence_findings(rules, body, model or str(body.get("model") or ""), took)
        # a thinking block edited is the thinking rule's error beside the cache's break (the break the
        # view and the miss line name too); one unsigned is told once
        unsigned = {found for f in alone if f.rule == "thinking-unsigned" for found in _PLACE.findall(f.message)}
        changes += [Finding(r, "error", path, said, "", fix) for r, path, said, fix in moved if path not in unsigned]
        findings.extend(replace(f, request=i, source=sources[i] if sources else None) for f in [*alone, *changes])
        if took:
            last[own] = (body, at)
    return findings


_PLACE = re.compile(r"messages\[\d+\]\.content\[\d+\]")


def _idle(before: float | None, now: float | None) -> float | None:
    return now - before if before is not None and now is not None else None


def lint_session(store: Store, session_id: str, wire: Wire | None = None, model: str | None = None) -> list[Finding]:
    """Lint a stored session's requests, each re-rendered from its log as it was sent, in order (a call
    with no answer was refused: no later body is compared with it)."""
    from tiny_agent.observe.view.data import SessionView

    info = store.get(session_id)
    timed = SessionView.of(info, store.entries(info.id)).timed_bodies()
    return _timed(wire, model, [(s, b, t, t is not None) for s, b, t in timed])


def lint_files(paths: Iterable[str | Path], wire: Wire | None = None, model: str | None = None) -> list[Finding]:
    """Lint the bodies of several files as one sequence of requests, in the order given (an exported
    session's with the times of its answers, and which of its calls were answered)."""
    return _timed(wire, model, [found for path in paths for found in load_timed(path)])


def _timed(
    wire: Wire | None, model: str | None, timed: Sequence[tuple[str, Mapping[str, Any], float | None, bool]]
) -> list[Finding]:
    sources, bodies = [s for s, _, _, _ in timed], [b for _, b, _, _ in timed]
    return lint_bodies(bodies, wire, model, sources, [t for _, _, t, _ in timed], [a for _, _, _, a in timed])


def _legality(body: Mapping[str, Any], wire: WireFormat, model: str) -> list[Finding]:
    # The marker count is reported by its own rule, with paths.
    problems = wire.check(body, None) + body_problems(wire.name, body, model)
    offset = wire.conversation_start(body)
    out = []
    for problem in problems:
        found = re.search(r"messages\[(\d+)\]|message (\d+)", problem)
        path = "messages"
        if found:
            path = f"messages[{found.group(1)}]" if found.group(1) else f"messages[{int(found.group(2)) + offset}]"
        rule = problem.split(":", 1)[0]
        if rule == "thinking-cache-control":
            continue  # breakpoint-on-uncacheable names the block itself
        if rule in REASONING_RULES:  # a thinking rule, by its own id
            where, fix = REASONING_FIXES.get(rule, (None, REASONING_RULES[rule]))
            out.append(Finding(rule, "error", where or path, problem.split(": ", 1)[1], "", fix))
            continue
        fix = "repair the history: every tool call answered right after it, roles alternating, a user turn last"
        out.append(Finding("illegal-order", "error", path, problem, "", fix))
    return out


def _breakpoints(
    blocks: list[PrefixBlock], marks: list[tuple[int, Ttl]], model: str, wire: WireFormat
) -> list[Finding]:
    out = []
    total = sum(b.tokens for b in blocks)
    minimum = min_cacheable_tokens(model, wire.name)
    if len(marks) > MAX_BREAKPOINTS:
        where = ", ".join(blocks[i].path for i, _ in marks)
        fix = f"keep at most {MAX_BREAKPOINTS}: tools, system, the newest one or two messages (the API rejects more)"
        fifth = blocks[marks[MAX_BREAKPOINTS][0]].path
        out.append(Finding("too-many-breakpoints", "error", fifth, f"{len(marks)} markers", where, fix))
    if not ttls_in_order(marks):
        fix = "put every ttl: 1h marker before the 5m ones (longer TTLs must come first)"
        ttls = ",".join(t for _, t in marks)
        out.append(Finding("ttl-order", "error", "$", "a 1h cache breakpoint after a 5m one", ttls, fix))
    if not marks and total >= minimum:
        message = f"no {wire.mark_field}: about {total:,} tokens billed in full on every request"
        fix = f"mark the last tool, the system prompt and the newest message with {wire.mark_field}"
        out.append(Finding("no-breakpoint", "warning", "$", message, "", fix))
    elif marks:
        last = marks[-1][0]
        cached = sum(b.tokens for b in blocks[: last + 1])
        if cached < minimum:
            who = model or "this model"
            message = f"the cached prefix is about {cached:,} tokens; {who} caches nothing under {minimum:,}"
            fix = "mark a later block (the newest message) or put more stable content before the marker"
            out.append(Finding("below-minimum", "warning", blocks[last].path, message, f"{cached} < {minimum}", fix))
    return out


def _changes(
    before: Mapping[str, Any], after: Mapping[str, Any], wire: Wire | None, model: str | None, idle: float | None
) -> list[Finding]:
    """Every cause the second body would not read what the first cached (``cache_breaks``); with
    nothing in the bytes and ``idle`` known, whether the entry expired (``cache_expiry``)."""
    wire = wire or detect_wire(after)
    rules = cache_rules(model or str(after.get("model") or ""), wire)
    breaks = prefix_breaks(before, after, wire, rules)
    gone = expired(before, idle, wire, rules) if idle is not None and not breaks else None
    return [
        Finding(b.rule, "warning", b.path, b.message, b.excerpt, fix_for(b.rule))
        for b in [*breaks, *filter(None, [gone])]
    ]
