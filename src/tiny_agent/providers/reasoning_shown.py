"""A reply's reasoning as people see it: its text, or the placeholder that says what it was when it
has none to show. One source for the streamed ``ThinkingDelta`` and the turn's folded line
(``reasoning_text``), so a thinking line can go above the answer even when nothing of it is readable."""

from __future__ import annotations

from tiny_agent.types import Block, Message, ReasoningBlock, RedactedThinkingBlock, ThinkingBlock

__all__ = ["ENCRYPTED", "OMITTED", "REDACTED", "reasoning_text", "shown_reasoning"]

OMITTED = "[thinking omitted]"
"""A thinking block with no text (``display: omitted``): only its signature came back."""
REDACTED = "[redacted thinking]"
ENCRYPTED = "[encrypted reasoning]"
"""A Responses reasoning item without a summary: only its encrypted content came back."""


def shown_reasoning(block: Block) -> str | None:
    """``block``'s reasoning text, or its placeholder; None for a block that holds no reasoning."""
    if isinstance(block, ThinkingBlock):
        return block.thinking or OMITTED
    if isinstance(block, RedactedThinkingBlock):
        return REDACTED
    if isinstance(block, ReasoningBlock):
        summary = block.item.get("summary") if block.item else None
        texts = [s.get("text", "") for s in summary if isinstance(s, dict)] if isinstance(summary, list) else []
        return block.text or " ".join(texts) or ENCRYPTED
    return None


def reasoning_text(message: Message) -> str:
    """The thinking, reasoning_content and summaries of ``message``, in order, one a line; opaque
    blocks by their placeholder; "" when it holds no reasoning."""
    return "\n".join(shown for block in message.content if (shown := shown_reasoning(block)) is not None)
