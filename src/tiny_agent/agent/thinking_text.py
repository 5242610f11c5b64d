"""A reply's reasoning as text, for people: what chat shows dimmed and ``--json`` carries."""

from __future__ import annotations

from tiny_agent.types import Message, ReasoningBlock, RedactedThinkingBlock, ThinkingBlock

__all__ = ["folded", "reasoning_text"]


def reasoning_text(message: Message) -> str:
    """The thinking, reasoning_content and summaries of ``message``, in order; opaque blocks named."""
    parts: list[str] = []
    for block in message.content:
        if isinstance(block, ThinkingBlock):
            parts.append(block.thinking or "[thinking omitted]")
        elif isinstance(block, RedactedThinkingBlock):
            parts.append("[redacted thinking]")
        elif isinstance(block, ReasoningBlock):
            summary = block.item.get("summary") if block.item else None
            texts = [s.get("text", "") for s in summary if isinstance(s, dict)] if isinstance(summary, list) else []
            parts.append(block.text or " ".join(texts) or "[encrypted reasoning]")
    return "\n".join(parts)


def folded(text: str, width: int = 100) -> str:
    """``text`` on one line, cut at ``width`` characters, with its full length."""
    line = " ".join(text.split())
    return line if len(line) <= width else f"{line[: width - 1]}… ({len(text):,} chars)"
