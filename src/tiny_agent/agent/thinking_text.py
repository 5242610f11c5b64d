"""A reply's reasoning as text, for people: what chat shows dimmed and ``--json`` carries."""

from __future__ import annotations

from tiny_agent.providers.reasoning_shown import shown_reasoning
from tiny_agent.types import Message

__all__ = ["folded", "reasoning_text"]


def reasoning_text(message: Message) -> str:
    """The thinking, reasoning_content and summaries of ``message``, in order; opaque blocks named."""
    return "\n".join(shown for block in message.content if (shown := shown_reasoning(block)) is not None)


def folded(text: str, width: int = 100) -> str:
    """``text`` on one line, cut at ``width`` characters, with its full length."""
    line = " ".join(text.split())
    return line if len(line) <= width else f"{line[: width - 1]}… ({len(text):,} chars)"
