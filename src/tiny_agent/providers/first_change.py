"""Where two texts, or two blocks of a request, first differ: the character the miss line, ``lint``
and the view name (in a block's text when both have one, else in its canonical JSON)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tiny_agent.providers.prefix import canonical

__all__ = ["first_change", "first_difference"]


def first_difference(a: str, b: str) -> int:
    """Index of the first character where two texts differ (the length of the shorter if one extends the other)."""
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i
    return min(len(a), len(b))


def first_change(was: Any, now: Any) -> tuple[int, str, str]:
    """(character, old text, new text): where two blocks first differ, in their text when both have
    one (as the miss line counts), else in their canonical JSON."""
    if isinstance(was, Mapping) and isinstance(now, Mapping):
        for key in ("text", "content"):
            if isinstance(was.get(key), str) and isinstance(now.get(key), str):
                return first_difference(was[key], now[key]), was[key], now[key]
    a, b = canonical(was), canonical(now)
    return first_difference(a, b), a, b
