"""The summary calls: over the flattened transcript (``TranscriptSummarizer``), or at the end of the
window as the previous request sent it (``cached_summary``, a cache read).

Each is sent the summary's room and, on a thinking model, the reasoning's (``summary_tokens``): the
reasoning counts inside ``max_tokens``, so with the summary's alone the thinking could fill it and
leave no text. A reply cut at that limit with no text says so, and what to change, rather than "no text".
"""

from __future__ import annotations

import dataclasses

from tiny_agent.context.cache import plan_cache
from tiny_agent.context.shrink.compaction import CACHED_SUMMARY_INSTRUCTIONS, Summarizer
from tiny_agent.context.shrink.shrinkable import Shrinkable
from tiny_agent.context.shrink.transcript import transcript_prompt, with_extra
from tiny_agent.errors import CompactionError, ConfigError
from tiny_agent.providers.base import Provider
from tiny_agent.providers.profile import ProviderProfile
from tiny_agent.providers.thinking import MIN_BUDGET, Thinking, is_on
from tiny_agent.providers.thinking_check import checked
from tiny_agent.providers.thinking_sent import reasoning_room
from tiny_agent.types import (
    Message,
    ModelResponse,
    Prompt,
    ReasoningBlock,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
)

__all__ = ["NO_TOOLS_AGAIN", "TranscriptSummarizer", "cached_summary", "summary_tokens", "transcript_summarizer"]

_REASONING = (ThinkingBlock, RedactedThinkingBlock, ReasoningBlock)
NO_TOOLS_AGAIN = "Reply with the summary as plain text. Do not call any tool."
_MORE_ROOM = "raise ContextConfig.summary_max_tokens (set in Python: no flag or tiny-agent.toml key sets it)"


def summary_tokens(ctx: Shrinkable, provider: Provider | None) -> int:
    """The ``max_tokens`` of a summary call: the summary's room, and the reasoning's on a thinking
    model (its reasoning counts inside ``max_tokens``)."""
    if provider is None:
        return ctx.config.summary_max_tokens
    profile = provider.profile
    return ctx.config.summary_max_tokens + reasoning_room(profile.thinking, profile.thinking_caps)


def _text(reply: ModelResponse, ctx: Shrinkable, provider: Provider) -> str:
    """The summary's text; a reply cut at its output limit before any text is a ``CompactionError``
    that names the limit (and the thinking, where that is what filled it) and what would lift it."""
    text = reply.message.text
    if reply.stop_reason == "max_tokens" and not text.strip() and not reply.message.tool_uses:
        own, room = ctx.config.summary_max_tokens, summary_tokens(ctx, provider)
        split = f": {own:,} for the summary, {room - own:,} for the thinking" if room > own else ""
        thought = any(isinstance(b, _REASONING) for b in reply.message.content)
        what = "while the model was still thinking" if thought else "before any text"
        less = _less_thinking(provider.profile) if thought else []
        levers = _MORE_ROOM + (f", or let the model think less ({', or '.join(less)})" if less else "")
        raise CompactionError(
            f"the summary call was cut at its output limit (max_tokens {room:,}{split}) {what}, "
            f"history left unchanged; {levers}"
        )
    return text


def _less_thinking(profile: ProviderProfile) -> list[str]:
    """The settings that would have the model think less in a summary call, as flags, each one the model
    takes: a budget, where its thinking has none (the call then holds the budget beside the summary's
    room), and the least effort."""
    thinking, caps = profile.thinking, profile.thinking_caps
    ways = []
    if caps.manual and thinking.mode != "enabled" and is_on(thinking, caps):
        bounded = dataclasses.replace(thinking, mode="enabled", budget=MIN_BUDGET)
        ways += ["--thinking N bounds it"] if _takes(bounded, profile) else []
    least = caps.efforts[0] if caps.efforts else None
    if least is not None and thinking.effort != least and _takes(dataclasses.replace(thinking, effort=least), profile):
        ways.append(f"--effort {least}")
    return ways


def _takes(thinking: Thinking, profile: ProviderProfile) -> bool:
    try:
        checked(thinking, profile.thinking_caps, profile.model)
    except ConfigError:
        return False
    return True


class TranscriptSummarizer:
    """A summarizer that calls ``provider`` with the context's own system and tools first, so the
    summary call reads the same cached prefix as the turns around it. ``extra``: added to its instructions."""

    def __init__(self, ctx: Shrinkable, provider: Provider, extra: str = "") -> None:
        self.ctx, self.provider, self.extra = ctx, provider, extra

    def __call__(self, transcript: str) -> str:
        room = summary_tokens(self.ctx, self.provider)
        prompt = dataclasses.replace(transcript_prompt(self.ctx, transcript, self.extra), max_tokens=room)
        return _text(self.ctx.call(self.provider, prompt, "compaction"), self.ctx, self.provider)


def transcript_summarizer(ctx: Shrinkable, provider: Provider) -> Summarizer:
    """The engine's own summarizer over a flattened transcript (see ``TranscriptSummarizer``)."""
    return TranscriptSummarizer(ctx, provider)


def cached_summary(ctx: Shrinkable, provider: Provider, keep: int, extra: str = "") -> str | None:
    """Ask for the summary at the end of the window as the previous request sent it (a cache read);
    None if the model insisted on calling a tool twice.

    The newest turn is left out: it is kept verbatim whatever the summary says, and the request that
    ends before it is byte for byte the one the cache holds, so only the instructions are new input.
    """
    instructions = with_extra(CACHED_SUMMARY_INSTRUCTIONS.format(keep=keep), extra)
    window = ctx.prompt()
    newest = max((i for i, m in enumerate(window.messages) if m.role == "assistant"), default=0)
    if newest > 0:
        window = dataclasses.replace(window, messages=window.messages[:newest])
    if provider.profile.tool_choice_keeps_prefix:
        window = dataclasses.replace(window, tool_choice="none")
    room = summary_tokens(ctx, provider)
    for attempt in range(2):
        text = instructions if attempt == 0 else f"{instructions} {NO_TOOLS_AGAIN}"
        prompt = _with_user_text(window, text, room)
        reply = ctx.call(provider, prompt, "compaction")
        answer = _text(reply, ctx, provider)  # a cut is not a tool call: asking again would be cut the same way
        if not reply.message.tool_uses and answer.strip():
            return answer
    return None


def _with_user_text(prompt: Prompt, text: str, max_tokens: int) -> Prompt:
    messages = list(prompt.messages)
    if messages and messages[-1].role == "user":
        messages[-1] = Message("user", (*messages[-1].content, TextBlock(text)))
    else:
        messages.append(Message.user(text))
    return dataclasses.replace(prompt, messages=tuple(messages), cache=plan_cache(messages), max_tokens=max_tokens)
