"""The transcript a summary is asked from when the window itself is not sent (the fallback after a
model that would only call tools, a window too big to send whole, custom summarizers), fitted to
the summary request's window.

What the summary must carry on is never cut: the newest summary, which opens the transcript with its
record (the task, the constraints, the files), the requests and the calls; the pinned constraints
also ride in the system prompt. Only tool results give way, and only as much as the window needs:
the request is measured with every result whole, then with none, and the results may take what the
window leaves between the two, at the size guard's margin (``compaction.result_limits`` says which
result keeps how much: the newest the longest).
"""

from __future__ import annotations

from collections.abc import Sequence

from tiny_agent.context.shrink.compaction import SUMMARY_INSTRUCTIONS, flatten
from tiny_agent.context.shrink.shrinkable import Shrinkable
from tiny_agent.context.size_guard import ESTIMATE_MARGIN
from tiny_agent.context.tokens import prompt_chars
from tiny_agent.providers.base import Provider
from tiny_agent.types import CachePlan, Message, Prompt, ToolResultBlock

__all__ = ["fitted_transcript", "transcript_prompt", "with_extra"]


def with_extra(instructions: str, extra: str) -> str:
    """The summary's instructions with what hooks added (``CompactionHooks.before_compaction``)."""
    return f"{instructions}\n\n{extra}" if extra else instructions


def transcript_prompt(ctx: Shrinkable, transcript: str, extra: str = "") -> Prompt:
    """The summary request over ``transcript``: the context's own system and tools first, so it reads
    the same cached prefix as the turns around it; tools forbidden."""
    text = f"{with_extra(SUMMARY_INSTRUCTIONS, extra)}\n\n<transcript>\n{transcript}\n</transcript>"
    return Prompt(
        ctx.system_blocks(),
        ctx.tools,
        (Message.user(text),),
        CachePlan(),
        tool_choice="none",
        max_tokens=ctx.config.summary_max_tokens,
    )


def fitted_transcript(
    ctx: Shrinkable, provider: Provider | None, messages: Sequence[Message], reply: int, extra: str = ""
) -> str:
    """The transcript of ``messages``, opened by the newest summary whole, with as much of their
    tool results as fits in ``provider``'s window beside the summary call's ``reply`` (its max_tokens)."""
    state = ctx.state
    earlier = f"{state.compactions[-1].text()}\n\n" if state.compactions else ""
    whole = earlier + flatten(messages)
    ledger = ctx.ledger
    ratio = min(ledger.chars_per_token, ledger.ratios.get("compaction", ledger.chars_per_token))
    # What the whole request may measure (``prompt_chars``) for the size guard's estimate to pass.
    room = ((ctx.context_window(provider) - reply) / (1 + ESTIMATE_MARGIN) - 1) * ratio
    measured = prompt_chars(transcript_prompt(ctx, whole, extra))
    results = sum(len(b.content) for m in messages for b in m.content if isinstance(b, ToolResultBlock))
    if measured <= room or not results:
        return whole
    fixed = prompt_chars(transcript_prompt(ctx, earlier + flatten(messages, 0), extra))
    scale = max(1.0, (measured - fixed) / results)  # measured characters per character of a result
    allowed = int((room - fixed) / scale)
    for _ in range(3):  # the scale is an average: a cut that still measures too much gives way again
        fitted = earlier + flatten(messages, max(0, allowed))
        over = prompt_chars(transcript_prompt(ctx, fitted, extra)) - room
        if over <= 0 or allowed <= 0:
            break
        allowed -= int(over) + 1
    return fitted
