"""``lint``: find what will cost money or fail in a request body before anything is spent.

A cache miss never throws; it only shows up on the invoice. These checks read a request body (either
wire, detected from its shape) and name each hazard with a rule id, a severity, a JSON path, a short
excerpt and how to fix it:

- ``illegal-order`` (error): the provider would answer 400 (orphan tool results, roles, trailing
  assistant turn), from ``context.legality``;
- ``too-many-breakpoints`` / ``ttl-order`` (error): more than 4 ``cache_control`` markers, or a 1h
  marker after a 5m one (Anthropic);
- ``volatile-in-prefix``: a date, time, timestamp, UUID, long hex or random id, or Unix epoch inside
  the cached prefix. A warning in tools and system, which are re-sent every turn; only ``info`` in
  messages, where it is usually history written once (it only hurts when re-rendered each turn);
- ``below-minimum`` (warning): the marked prefix is shorter than the model's minimum, so nothing is
  cached; ``no-breakpoint`` (warning): an Anthropic body long enough to cache, with no marker;
- across several bodies given in order (files, a JSON list or JSONL): ``tools-reordered``,
  ``tools-changed`` and ``system-changed`` (warnings): the prefix of every later request is rewritten.
  A single body cannot show an unstable tool order: nothing in one request says what the last one sent.

A body is clean when it has no error or warning (``info`` findings are hints).
Token counts use the billing simulator's estimator (``providers.prefix.block_tokens``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Literal

from tiny_agent.providers.base import Wire
from tiny_agent.providers.cache_rules import MAX_BREAKPOINTS, Ttl, min_cacheable_tokens
from tiny_agent.providers.prefix import PrefixBlock, block_tokens, breakpoints, ttls_in_order
from tiny_agent.providers.wire import WireFormat, wire_of
from tiny_agent.providers.wire import detect_wire as _detect

__all__ = ["Finding", "Severity", "detect_wire", "is_clean", "lint_bodies", "lint_body", "lint_files", "load_bodies"]

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
_SKIP_KEYS = frozenset({"id", "tool_use_id", "tool_call_id", "type", "cache_control", "role"})
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
    findings = _legality(body, fmt)
    blocks = fmt.prefix_blocks(body, block_tokens)
    # A wire whose marks are optional (OpenAI's) is not held to the breakpoint rules.
    marks = breakpoints(body, blocks) if fmt.marks_required else []
    findings.extend(_volatile(blocks, max((i for i, _ in marks), default=-1)))
    if fmt.marks_required:
        findings.extend(_breakpoints(blocks, marks, model, fmt))
    return findings


def lint_bodies(
    bodies: Sequence[Mapping[str, Any]],
    wire: Wire | None = None,
    model: str | None = None,
    sources: Sequence[str] | None = None,
) -> list[Finding]:
    """Each body's findings, then what changes between consecutive bodies (sent in this order)."""
    findings: list[Finding] = []
    for i, body in enumerate(bodies):
        source = sources[i] if sources else None
        findings.extend(replace(f, request=i, source=source) for f in lint_body(body, wire, model))
    for i in range(1, len(bodies)):
        source = sources[i] if sources else None
        findings.extend(replace(f, request=i, source=source) for f in _changes(bodies[i - 1], bodies[i]))
    return findings


def load_bodies(path: str | Path) -> list[tuple[str, dict[str, Any]]]:
    """(source, body) pairs from a JSON file (one body or a list of them) or a JSONL file (one per line)."""
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        lines = [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip()]
        return [(f"{path}:{n}", json.loads(line)) for n, line in lines]
    data = json.loads(text)
    items = data if isinstance(data, list) else [data]
    return [(f"{path}[{i}]" if isinstance(data, list) else str(path), item) for i, item in enumerate(items)]


def lint_files(paths: Iterable[str | Path], wire: Wire | None = None, model: str | None = None) -> list[Finding]:
    """Lint the bodies of several files as one sequence of requests, in the order given."""
    pairs = [pair for path in paths for pair in load_bodies(path)]
    return lint_bodies([b for _, b in pairs], wire, model, [s for s, _ in pairs])


def _legality(body: Mapping[str, Any], wire: WireFormat) -> list[Finding]:
    # The marker count is reported by its own rule, with paths.
    problems = wire.check(body, None)
    offset = wire.conversation_start(body)
    out = []
    for problem in problems:
        found = re.search(r"messages\[(\d+)\]|message (\d+)", problem)
        path = "messages"
        if found:
            path = f"messages[{found.group(1)}]" if found.group(1) else f"messages[{int(found.group(2)) + offset}]"
        fix = "repair the history: every tool call answered right after it, roles alternating, a user turn last"
        out.append(Finding("illegal-order", "error", path, problem, "", fix))
    return out


def _strings(data: Any, path: str) -> Iterator[tuple[str, str]]:
    """(path, text) of every string inside ``data``, ids and markers skipped."""
    if isinstance(data, str):
        yield path, data
    elif isinstance(data, Mapping):
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


def _changes(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[Finding]:
    out = []
    old = [t.get("name") or t.get("function", {}).get("name") for t in before.get("tools") or []]
    new = [t.get("name") or t.get("function", {}).get("name") for t in after.get("tools") or []]
    if old != new and sorted(map(str, old)) == sorted(map(str, new)):
        fix = "register tools in one fixed order (the order is part of the cached prefix)"
        out.append(Finding("tools-reordered", "warning", "tools", "same tools, other order", f"{old} -> {new}", fix))
    elif set(old) != set(new):
        added, removed = sorted(map(str, set(new) - set(old))), sorted(map(str, set(old) - set(new)))
        message = f"tools added {added}, removed {removed}: the whole prefix is written again"
        fix = "send the same tools every request; restrict them with tool_choice or allowed tools instead"
        out.append(Finding("tools-changed", "warning", "tools", message, "", fix))
    a, b = _system_text(before), _system_text(after)
    if a != b:
        at = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
        excerpt = f"{a[max(0, at - 20) : at + 30]!r} -> {b[max(0, at - 20) : at + 30]!r}"
        message = f"the system prompt changed at character {at}: the cache misses from there on"
        fix = "keep the system prompt byte-identical between requests; put what changes in the newest message"
        out.append(Finding("system-changed", "warning", "system", message, excerpt, fix))
    return out


def _system_text(body: Mapping[str, Any]) -> str:
    system = body.get("system")
    if isinstance(system, str):
        return system
    if isinstance(system, list):
        return "\n".join(str(b.get("text", "")) for b in system)
    parts = [m.get("content") for m in body.get("messages") or [] if m.get("role") in _SYSTEM_ROLES]
    return "\n".join(p if isinstance(p, str) else json.dumps(p) for p in parts)
