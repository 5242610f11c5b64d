"""The dates, times and ids that lint's ``volatile-in-prefix`` finds in a cached prefix: values that
change per request, so the bytes, and the cache, differ every time."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from tiny_agent.providers.prefix import PrefixBlock

__all__ = ["FIX_VOLATILE", "volatile_values"]

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
_SKIP_KEYS = frozenset(
    {"id", "tool_use_id", "tool_call_id", "type", "cache_control", "role", "signature", "encrypted_content"}
)
"""Ids, markers, and what a provider signed or encrypted: sent back byte for byte, never moved."""
_OPAQUE_BLOCKS = frozenset({"redacted_thinking"})
FIX_VOLATILE = (
    "move it after the last cache breakpoint (into the newest user message) or drop it: a prefix cache only "
    "hits on identical bytes, so a value that changes per request makes every request a full-price miss"
)


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


def volatile_values(blocks: list[PrefixBlock], last_mark: int) -> list[tuple[str, str, str, str]]:
    """(path, severity, message, excerpt) of the first date, time or id in each string of the cached
    prefix: a warning in tools and system, a hint in the history up to ``last_mark``."""
    scoped: list[tuple[PrefixBlock, str]] = []
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
                out.append((path, severity, message, _excerpt(text, match)))
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
