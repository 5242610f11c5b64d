"""A reply's reasoning folded onto one line, for people: what chat shows dimmed (the text itself is
``providers.reasoning_shown.reasoning_text``)."""

from __future__ import annotations

__all__ = ["folded"]


def folded(text: str, width: int = 100) -> str:
    """``text`` on one line, cut at ``width`` characters, with its full length."""
    line = " ".join(text.split())
    return line if len(line) <= width else f"{line[: width - 1]}… ({len(text):,} chars)"
