"""A reply's reasoning folded onto one line, for people: what chat shows dimmed (the text itself is
``providers.reasoning_shown.reasoning_text``)."""

from __future__ import annotations

__all__ = ["folded"]


def folded(text: str, width: int = 100) -> str:
    """``text`` on one line of at most ``width`` characters: cut, with its full length, where longer."""
    line = " ".join(text.split())
    if len(line) <= width:
        return line
    length = f"… ({len(text):,} chars)"
    return f"{line[: max(1, width - len(length))]}{length}"
