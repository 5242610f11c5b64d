"""What a per-call miss line says of its place, read back: the character it names, and the
simulator's break it ends with, so a line can be matched to ``lint``'s finding and the view's break."""

from __future__ import annotations

import re

__all__ = ["diagnosed_break", "diagnosed_character"]

_AT_CHARACTER = re.compile(r" at character (\d+)")
_POSITION = re.compile(r" \[([a-z-]+) at (\S+?)(?:, character (\d+))?\]$")


def diagnosed_character(miss: str | None) -> int | None:
    """The character a miss line names (``... at character 28: ...``), if it names one."""
    found = _AT_CHARACTER.search(miss or "")
    return int(found.group(1)) if found else None


def diagnosed_break(miss: str | None) -> tuple[str, str, int | None] | None:
    """(rule, path, character) of the simulator's break a miss line ends with (``context.byte_cause``:
    `` [RULE at PATH]`` or `` [RULE at PATH, character N]``), as ``lint`` and the view name it; None
    for a line without one (a cause not in the bytes, or one diagnosed from fingerprints)."""
    found = _POSITION.search(miss or "")
    if found is None:
        return None
    return found.group(1), found.group(2), int(found.group(3)) if found.group(3) else None
