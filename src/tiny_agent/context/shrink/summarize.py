"""Making the window smaller by compaction: a summary replaces the older turns (clearing old tool
output is ``context.clearing``). It only appends an entry; the log keeps every original.

The summary call reads the cache: it sends the window exactly as the turns do (same tools,
``tool_choice``, system and cache marks) with the summary request appended as the last user turn,
so the whole conversation is a cache read. Changing ``tool_choice`` or the tools would invalidate
the cached messages on Anthropic, so the model is asked not to call a tool rather than forbidden to
(unless the provider says forbidding leaves the prompt alone: the local model's JSON tool mode).
If it calls one anyway, it is asked once more; then the flattened transcript is summarised instead
(the fallback, which also covers a window too big to send whole).
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Sequence
from typing import Any, Literal, Protocol

from tiny_agent.context.cache import plan_cache
from tiny_agent.context.config import ContextConfig
from tiny_agent.context.entries import CompactionMark, TypedEntry
from tiny_agent.context.render import Rendered
from tiny_agent.context.shrink.compaction import (
    CACHED_SUMMARY_INSTRUCTIONS,
    SUMMARY_INSTRUCTIONS,
    Compaction,
    CompactionHooks,
    CompactionStart,
    Summarizer,
    WorkRecord,
    choose_cut,
    flatten,
)
from tiny_agent.context.shrink.policy import Cycle, best_threshold, decision_prices
from tiny_agent.context.state import State
from tiny_agent.context.tokens import TokenLedger
from tiny_agent.errors import CompactionError, IllegalRequestError
from tiny_agent.providers.base import Provider
from tiny_agent.providers.pricing import TokenPrices
from tiny_agent.types import CachePlan, Entry, Message, ModelResponse, Prompt, TextBlock

__all__ = [
    "Shrinkable",
    "TranscriptSummarizer",
    "cached_summary",
    "cold",
    "compact",
    "cost_threshold",
    "maybe_compact",
    "transcript_summarizer",
]


class Shrinkable(Protocol):
    """What compaction and clearing need from the engine (``Context`` is one)."""

    clock: Callable[[], float]
    failed_at: int | None
    decided: bool
    hooks: CompactionHooks | None

    @property
    def state(self) -> State: ...

    @property
    def config(self) -> ContextConfig: ...

    @property
    def ledger(self) -> TokenLedger: ...

    def append(self, values: Sequence[TypedEntry]) -> list[Entry]: ...

    def system_blocks(self) -> tuple[str, ...]: ...

    @property
    def tools(self) -> tuple[Any, ...]: ...

    def prompt(
        self, *, tool_choice: Literal["auto", "none"] = "auto", compaction: Compaction | None = None
    ) -> Prompt: ...

    def call(self, provider: Provider, prompt: Prompt, purpose: str) -> ModelResponse: ...

    def context_tokens(self, provider: Provider | None = None, prompt: Prompt | None = None) -> int: ...

    def context_window(self, provider: Provider | None = None) -> int: ...

    def legal(self, prompt: Prompt, provider: Provider, *, sending: bool = True) -> Rendered: ...

    def threshold(self, provider: Provider | None = None) -> int: ...


NO_TOOLS_AGAIN = "Reply with the summary as plain text. Do not call any tool."


def maybe_compact(ctx: Shrinkable, provider: Provider) -> Compaction | None:
    """Compact when the policy says so (see ``Context.maybe_compact``)."""
    tokens = ctx.context_tokens(provider)
    config = ctx.config
    threshold = ctx.threshold(provider)
    if config.policy == "cost" and tokens <= threshold:
        fit = cost_threshold(ctx, provider, threshold, tokens)
        if fit is None:
            return None
        threshold = fit
    elif tokens <= threshold:
        return None
    if ctx.failed_at is not None and tokens < ctx.failed_at * 1.1:
        return None
    try:
        # A summary must replace more than it costs, or every turn would compact again.
        done = compact(
            ctx,
            None,
            keep_turns=None,
            provider=provider,
            min_tokens=2 * config.summary_max_tokens,
            tokens_before=tokens,
            fit=threshold,
        )
    except CompactionError:
        ctx.failed_at = tokens
        raise
    ctx.failed_at = None
    return done


def compact(
    ctx: Shrinkable,
    summarizer: Summarizer | None,
    *,
    keep_turns: int | None,
    provider: Provider | None,
    min_tokens: int,
    tokens_before: int | None,
    manual: bool = False,
    fit: int | None = None,
) -> Compaction | None:
    """See ``Context.compact``; ``manual``: asked for, not the policy's doing (the mark says so);
    ``fit``: the threshold whose half the kept turns must fit in (default the config's)."""
    state = ctx.state
    base = state.base
    recent = state.messages[base:]
    cut = choose_cut(recent, keep_turns) if keep_turns else _fitting_cut(ctx, recent, fit or ctx.threshold(provider))
    if cut is None or ctx.ledger.estimate(recent[:cut]) < min_tokens:
        return None
    before = tokens_before if tokens_before is not None else ctx.context_tokens(provider)
    transcript = flatten(recent[:cut])
    if state.compactions:
        transcript = f"{state.compactions[-1].text()}\n\n{transcript}"
    kept = sum(1 for m in recent[cut:] if m.role == "assistant")
    start = CompactionStart(
        "manual" if manual else "auto", before, cut, ctx.context_window(provider), ctx.threshold(provider)
    )
    extra = ctx.hooks.before_compaction(start) if ctx.hooks is not None else ""
    if extra and isinstance(summarizer, TranscriptSummarizer):
        summarizer = TranscriptSummarizer(summarizer.ctx, summarizer.provider, extra)
    consulted, ctx.decided = ctx.decided, ctx.decided and not manual  # its calls are not the policy's
    try:
        if summarizer is not None:
            prose = summarizer(transcript)
        elif provider is None:
            raise CompactionError("compact needs a summarizer or a provider")
        else:
            prose = _provider_summary(ctx, provider, transcript, kept, before, extra)
    except CompactionError:
        raise
    except Exception as exc:
        raise CompactionError(f"the summary call failed, history left unchanged: {exc}") from exc
    finally:
        ctx.decided = consulted
    if not prose or not prose.strip():
        raise CompactionError("the summary call returned no text, history left unchanged")
    record = WorkRecord.from_messages(state.messages[: base + cut], state.pins).render()
    candidate = Compaction(base + cut, prose, record, before)
    prompt = ctx.prompt(compaction=candidate)
    counted = _counted(ctx, provider, prompt)
    after = counted if counted is not None else ctx.context_tokens(provider, prompt)
    if after >= before:
        raise CompactionError(
            f"the summary ({after:,} tokens with the kept turns) is not smaller than what it replaces "
            f"({before:,}); history left unchanged"
        )
    how = "custom" if summarizer is not None and not isinstance(summarizer, TranscriptSummarizer) else "provider"
    if isinstance(summarizer, TranscriptSummarizer):
        how = "transcript"
    mark = CompactionMark(
        state.starts[base + cut], base + cut, prose, record, before, after, counted=counted is not None
    )
    if manual:
        mark = dataclasses.replace(mark, manual=True, keep_turns=keep_turns, summarizer=how)
    ctx.append([mark])
    if ctx.hooks is not None:
        ctx.hooks.after_compaction(start, state.compactions[-1])
    return state.compactions[-1]


def _counted(ctx: Shrinkable, provider: Provider | None, prompt: Prompt) -> int | None:
    """The provider's own count of the window after a compaction, where it is free (``free_count``):
    once here, not every turn, so the estimates of the turns after it start from a measurement."""
    if provider is None or not provider.profile.free_count or provider.profile.counts_tokens:
        return None
    with contextlib.suppress(IllegalRequestError):  # not sendable as it stands: counted as it stands
        prompt = ctx.legal(prompt, provider, sending=False).prompt
    return provider.count_tokens(prompt)


def _fitting_cut(ctx: Shrinkable, recent: Sequence[Message], threshold: int) -> int | None:
    """The cut keeping the most turns (up to ``keep_turns``) whose kept part fits in half ``threshold``."""
    fixed = ctx.ledger.estimate_prompt(Prompt(ctx.system_blocks(), ctx.tools, ()))
    budget = threshold // 2 - fixed - ctx.config.summary_max_tokens
    cut = None
    turns = sum(1 for m in recent if m.role == "assistant")
    # Keeping as many turns as there are, or more, leaves nothing to compact: start below that.
    for keep in range(min(ctx.config.keep_turns, turns - 1), 0, -1):
        cut = choose_cut(recent, keep)
        if cut is not None and ctx.ledger.estimate(recent[cut:]) <= budget:
            return cut
    return cut  # even one turn is over budget: keep just that one


def _provider_summary(
    ctx: Shrinkable, provider: Provider, transcript: str, keep: int, tokens: int, extra: str = ""
) -> str:
    """The summary from ``provider``: read from the cache when the config says so and the window fits."""
    config = ctx.config
    fits = tokens + config.summary_max_tokens < ctx.context_window(provider)
    if config.summary == "cached" and fits and not cold(ctx, provider):
        text = cached_summary(ctx, provider, keep, extra)
        if text is not None:
            return text
    return TranscriptSummarizer(ctx, provider, extra)(transcript)


def _with_extra(instructions: str, extra: str) -> str:
    """The summary's instructions with what hooks added (``CompactionHooks.before_compaction``)."""
    return f"{instructions}\n\n{extra}" if extra else instructions


class TranscriptSummarizer:
    """A summarizer that calls ``provider`` with the context's own system and tools first, so the
    summary call reads the same cached prefix as the turns around it. ``extra``: added to its instructions."""

    def __init__(self, ctx: Shrinkable, provider: Provider, extra: str = "") -> None:
        self.ctx, self.provider, self.extra = ctx, provider, extra

    def __call__(self, transcript: str) -> str:
        ctx = self.ctx
        text = f"{_with_extra(SUMMARY_INSTRUCTIONS, self.extra)}\n\n<transcript>\n{transcript}\n</transcript>"
        prompt = Prompt(
            ctx.system_blocks(),
            ctx.tools,
            (Message.user(text),),
            CachePlan(),
            tool_choice="none",
            max_tokens=ctx.config.summary_max_tokens,
        )
        return ctx.call(self.provider, prompt, "compaction").message.text


def transcript_summarizer(ctx: Shrinkable, provider: Provider) -> Summarizer:
    """The engine's own summarizer over a flattened transcript (see ``TranscriptSummarizer``)."""
    return TranscriptSummarizer(ctx, provider)


def cached_summary(ctx: Shrinkable, provider: Provider, keep: int, extra: str = "") -> str | None:
    """Ask for the summary at the end of the window as the previous request sent it (a cache read);
    None if the model insisted on calling a tool twice.

    The newest turn is left out: it is kept verbatim whatever the summary says, and the request that
    ends before it is byte for byte the one the cache holds, so only the instructions are new input.
    """
    instructions = _with_extra(CACHED_SUMMARY_INSTRUCTIONS.format(keep=keep), extra)
    window = ctx.prompt()
    newest = max((i for i, m in enumerate(window.messages) if m.role == "assistant"), default=0)
    if newest > 0:
        window = dataclasses.replace(window, messages=window.messages[:newest])
    if provider.profile.tool_choice_keeps_prefix:
        window = dataclasses.replace(window, tool_choice="none")
    for attempt in range(2):
        text = instructions if attempt == 0 else f"{instructions} {NO_TOOLS_AGAIN}"
        prompt = _with_user_text(window, text, ctx.config.summary_max_tokens)
        reply = ctx.call(provider, prompt, "compaction").message
        if not reply.tool_uses and reply.text.strip():
            return reply.text
    return None


def _with_user_text(prompt: Prompt, text: str, max_tokens: int) -> Prompt:
    messages = list(prompt.messages)
    if messages and messages[-1].role == "user":
        messages[-1] = Message("user", (*messages[-1].content, TextBlock(text)))
    else:
        messages.append(Message.user(text))
    return dataclasses.replace(prompt, messages=tuple(messages), cache=plan_cache(messages), max_tokens=max_tokens)


def cost_threshold(ctx: Shrinkable, provider: Provider, ceiling: int, tokens: int) -> int | None:
    """The threshold to compact at now under the cost policy, or None while waiting pays.

    That threshold is the one whose compaction cycle costs least per turn at the provider's prices
    (``policy.best_threshold``), from the growth and the summaries seen so far, never above
    ``ceiling`` (``compact_at`` stays a hard limit). It is due once the window holds as much a
    compaction there would remove as it removes in a steady cycle: so a turn that brought far more
    than the others is summarised as soon as it is no longer kept, not carried until the window
    reaches the threshold. While the cache is cold (the last request is older than its lifetime),
    the summary call would write the whole window instead of reading it: the policy waits."""
    planned = _planned(ctx, provider, ceiling)
    if planned is None:
        return None
    threshold, cycle, fixed, opening = planned
    prices = decision_prices(provider.profile)
    state, ledger = ctx.state, ctx.ledger
    start = cycle.start(threshold)
    steady = threshold - start
    window = state.messages[state.base :]
    cut = _fitting_cut(ctx, window, threshold)
    if threshold >= ceiling or steady <= 0 or cut is None:
        return None
    removable = tokens - fixed - opening - ledger.estimate(window[cut:])
    if removable < steady and cold(ctx, provider):
        return threshold if _cold_pays(prices, cycle, start, steady, tokens, removable) else None
    return threshold if removable >= steady else None


def planned_threshold(ctx: Shrinkable, provider: Provider) -> int:
    """The threshold the active policy compacts at (what a call records and the plot draws): the
    config's ceiling; under "cost", the cheapest cycle's threshold at the provider's prices below it."""
    ceiling = ctx.threshold(provider)
    if ctx.config.policy != "cost":
        return ceiling
    planned = _planned(ctx, provider, ceiling)
    return min(ceiling, planned[0]) if planned is not None else ceiling


def _planned(ctx: Shrinkable, provider: Provider, ceiling: int) -> tuple[int, Cycle, int, int] | None:
    """The cost policy's threshold and the cycle it was chosen for (with the fixed part and the opening
    a compaction leaves); None before the first turn, whose growth is unknown."""
    config, state, ledger = ctx.config, ctx.state, ctx.ledger
    recent = state.messages[max(state.base, 1) :]  # the first request (the task) is no turn's growth
    turns = sum(1 for m in recent if m.role == "assistant")
    if not turns:
        return None
    summaries = sorted(c.usage.output_tokens or 0 for c in ledger.calls if c.purpose == "compaction")
    summary = summaries[len(summaries) // 2] if summaries else config.summary_max_tokens // 4
    fixed = ledger.estimate_prompt(Prompt(ctx.system_blocks(), ctx.tools, ()))
    if state.compactions:
        opening = ledger.estimate([Message.user(state.compactions[-1].text())], remember=False)
    else:
        record = WorkRecord.from_messages(state.messages, state.pins).render()
        opening = summary + ledger.estimate([Message.user(record)], remember=False)
    cycle = Cycle(
        growth=ledger.estimate(recent) / turns,
        fixed=fixed,
        summary=summary,
        record=opening,
        instructions=ledger.estimate([Message.user(CACHED_SUMMARY_INSTRUCTIONS)], remember=False),
        keep_turns=config.keep_turns,
        reserve=config.summary_max_tokens,
    )
    prices = decision_prices(provider.profile)
    # Under twice the minimum cacheable length, the half a compaction keeps is below it: every request
    # until the window grows past it again is sent uncached, which the cycle's arithmetic does not see.
    return best_threshold(prices, cycle, ceiling, floor=2 * provider.profile.cache.min_tokens), cycle, fixed, opening


def _cold_pays(prices: TokenPrices, cycle: Cycle, start: float, steady: float, tokens: int, removable: float) -> bool:
    """Whether compacting now, with the cache cold, beats waiting until the compaction is due.

    The next request rewrites the whole window anyway, and the summary is then asked from the
    transcript at the input price, so a compaction now costs the transcript and the summary, less the
    part of the rewrite it saves. Waiting costs the read of what it would have removed on every turn
    until it is due, and a share of the warm compaction then (the share of the cycle it would skip)."""
    now = prices.input * (cycle.fixed + removable) + prices.output * cycle.summary + prices.write * (start - tokens)
    warm = prices.read * tokens + prices.write * (cycle.instructions + start - cycle.growth)
    warm += prices.output * cycle.summary
    turns = (steady - removable) / cycle.growth
    return now < prices.read * removable * turns + warm * removable / steady


def cold(ctx: Shrinkable, provider: Provider) -> bool:
    """Whether the cache entry the last request left has expired (its lifetime is over)."""
    last = ctx.state.last_call
    return last is not None and ctx.clock() - last.at > provider.profile.lifetime
