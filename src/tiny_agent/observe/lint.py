"""``lint``: find what will cost money or fail in a request body before anything is spent.

A miss never throws; it shows on the invoice. Each hazard gets a rule id, severity, path, excerpt, fix:

- in one body: ``illegal-order`` (a 400, from ``context.legality``), ``too-many-breakpoints``,
  ``ttl-order``, ``breakpoint-on-uncacheable`` (errors); ``volatile-in-prefix`` (a date, time, id
  in the cached prefix: a warning in tools and system, a hint in history), ``below-minimum``,
  ``no-breakpoint``, ``wire-mismatch`` (another wire's body than ``wire``) (warnings);
- between consecutive bodies (files, a JSON list, JSONL, stdin, a session): every cause the later
  would not read what the earlier cached, with its place, from ``providers.cache_breaks`` (the one
  finder the view uses too); over the sequence, a thinking block sent after another prefix than it
  first was (``thinking-rebound``). docs/lint.md lists every rule with what it means.
A body is clean with no error or warning (``info`` is a hint); tokens: ``prefix.block_tokens``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Literal

from tiny_agent.observe.lint_breaks import REASONING_FIXES, fix_for, sequence_findings
from tiny_agent.observe.lint_inputs import load_bodies, load_timed
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

_VOLATILE: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("an ISO timestamp", re.compile(r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?")),
    ("a UUID", re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")),
    ("a date", re.compile(r"\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}/\d{1,2}/\d{2,4}\b")),
    (
        "a date",
        re.compile(
            r"\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]*\.? \d{1,2}(?:st|nd|rd|th)?,? \d{4}\b"
            r"|\b\d{1,2} (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]* \d{4}\b"
        ),
    ),
    ("a time of day", re.compile(r"\b\d{1,2}:\d{2}:\d{2}\b|\b\d{1,2}:\d{2} ?(?:[AaPp][Mm]|UTC|GMT)\b")),
    ("a Unix epoch time", re.compile(r"(?<![\d.])1[5-9]\d{8}(?:\d{3})?(?![\d.])")),
    ("a long hex id", re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{16,}\b")),
    ("a random id", re.compile(r"(?<![\w-])[A-Za-z0-9_-]{20,}(?![\w-])")),
)
_DIGIT_RUN = re.compile(r"\d+")
_SYSTEM_ROLES = ("system", "developer")
_SKIP_KEYS = frozenset(
    {"id", "tool_use_id", "tool_call_id", "type", "cache_control", "role", "signature", "encrypted_content"}
)
"""Ids, markers, and what a provider signed or encrypted: sent back byte for byte, never moved."""
_OPAQUE_BLOCKS = frozenset({"redacted_thinking"})
_FIX_VOLATILE = (
    "move it after the last cache breakpoint (into the newest user message) or drop it: a prefix cache only "
    "hits on identical bytes, so a value that changes per request makes every request a full-price miss"
)


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
    findings.extend(_volatile(blocks, max((i for i, _ in marks), default=-1)))
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
) -> list[Finding]:
    """Each body's findings, then what changes between consecutive bodies (sent in this order).
    ``times``: when each body's answer came (a stored session's), so an expired entry is found too."""
    findings: list[Finding] = []
    for i, body in enumerate(bodies):
        source = sources[i] if sources else None
        findings.extend(replace(f, request=i, source=source) for f in lint_body(body, wire, model))
    last: dict[str, tuple[Mapping[str, Any], float | None]] = {}
    sequences: dict[str, Sequenced] = {}
    for i, body in enumerate(bodies):
        source, own = sources[i] if sources else None, wire or detect_wire(body)
        at = times[i] if times else None
        changes = _changes(last[own][0], body, own, model, _idle(last[own][1], at)) if own in last else []
        # each wire's bodies against that wire's earlier ones: the other is another cache, another API
        rules = sequences.setdefault(own, reasoning_sequence(own))
        moved = sequence_findings(rules, body, model or str(body.get("model") or ""))
        changes += [Finding(rule, "error", path, message, "", fix) for rule, path, message, fix in moved]
        findings.extend(replace(f, request=i, source=source) for f in changes)
        last[own] = (body, at)
    return findings


def _idle(before: float | None, now: float | None) -> float | None:
    return now - before if before is not None and now is not None else None


def lint_session(store: Store, session_id: str, wire: Wire | None = None, model: str | None = None) -> list[Finding]:
    """Lint a stored session's requests, each re-rendered from its log as it was sent, in order."""
    from tiny_agent.observe.view.data import SessionView

    info = store.get(session_id)
    timed = SessionView.of(info, store.entries(info.id)).timed_bodies()
    return lint_bodies([b for _, b, _ in timed], wire, model, [s for s, _, _ in timed], [t for _, _, t in timed])


def lint_files(paths: Iterable[str | Path], wire: Wire | None = None, model: str | None = None) -> list[Finding]:
    """Lint the bodies of several files as one sequence of requests, in the order given (an exported
    session's with the times of its answers)."""
    timed = [found for path in paths for found in load_timed(path)]
    return lint_bodies([b for _, b, _ in timed], wire, model, [s for s, _, _ in timed], [t for _, _, t in timed])


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


def _strings(data: Any, path: str) -> Iterator[tuple[str, str]]:
    """(path, text) of every string inside ``data``, ids and markers skipped."""
    if isinstance(data, str):
        yield path, data
    elif isinstance(data, Mapping) and data.get("type") not in _OPAQUE_BLOCKS:
        for key, value in data.items():
            if key not in _SKIP_KEYS:
                yield from _strings(value, f"{path}.{key}")
    elif isinstance(data, list):
        for i, value in enumerate(data):
            yield from _strings(value, f"{path}[{i}]")


def _volatile(blocks: list[PrefixBlock], last_mark: int) -> list[Finding]:
    scoped: list[tuple[PrefixBlock, Severity]] = []
    for i, block in enumerate(blocks):
        if block.layer in ("system", "tools"):
            scoped.append((block, "warning"))
        elif i <= last_mark and block.data.get("type") != "tool_use":
            scoped.append((block, "info"))
    out = []
    for block, severity in scoped:
        for path, text in _strings(block.data, block.path):
            for what, pattern in _VOLATILE:
                match = next((m for m in pattern.finditer(text) if _counts(what, m.group())), None)
                if match is None:
                    continue
                where = "the tools" if path.startswith("tools") else "the cached prefix"
                message = f"{what} ({match.group()!r}) in {where}"
                out.append(Finding("volatile-in-prefix", severity, path, message, _excerpt(text, match), _FIX_VOLATILE))
                break  # one finding per string: the first hazard is enough to act on
    return out


def _counts(what: str, value: str) -> bool:
    """A random id is told from a long identifier (``getHTTPResponseCode2024``, ``max_retries_per_host``)
    by its digits scattered in at least three places among upper and lower case letters."""
    if what != "a random id":
        return True
    return len(_DIGIT_RUN.findall(value)) >= 3 and any(c.isupper() for c in value) and any(c.islower() for c in value)


def _excerpt(text: str, match: re.Match[str], width: int = 30) -> str:
    start, end = max(0, match.start() - width), min(len(text), match.end() + width)
    return ("..." if start else "") + text[start:end].replace("\n", " ") + ("..." if end < len(text) else "")


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
