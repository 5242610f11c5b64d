"""Making the window smaller by compaction: a summary replaces the older turns (clearing old tool
output is ``context.clearing``). It only appends an entry; the log keeps every original.

The summary call reads the cache: it sends the window exactly as the turns do (same tools,
``tool_choice``, system and cache marks) with the summary request appended as the last user turn,
so the whole conversation is a cache read. Changing ``tool_choice`` or the tools would invalidate
the cached messages on Anthropic, so the model is asked not to call a tool rather than forbidden to
(unless the provider says forbidding leaves the prompt alone: the local model's JSON tool mode).
If it calls one anyway, it is asked once more; then the flattened transcript is summarised instead
(the fallback, which also covers a window too big to send whole; ``shrink.transcript`` fits it to
the window without cutting the earlier summary).
"""

from __future__ import annotations

import contextlib
import dataclasses

from tiny_agent.context.entries import CompactionMark, Decision
from tiny_agent.context.shrink import thinking
from tiny_agent.context.shrink.compaction import (
    Compaction,
    CompactionStart,
    Summarizer,
    WorkRecord,
    choose_cut,
)
from tiny_agent.context.shrink.policy import cold, decision_prices, fitting_cut
from tiny_agent.context.shrink.registry import policy_named
from tiny_agent.context.shrink.shrinkable import Shrinkable
from tiny_agent.context.shrink.summary_call import (
    TranscriptSummarizer,
    cached_summary,
    summary_tokens,
    transcript_summarizer,
)
from tiny_agent.context.shrink.transcript import fitted_transcript
from tiny_agent.errors import CompactionError, IllegalRequestError
from tiny_agent.providers.base import Provider
from tiny_agent.types import Prompt

__all__ = [
    "Shrinkable",
    "TranscriptSummarizer",
    "cached_summary",
    "compact",
    "maybe_compact",
    "transcript_summarizer",
]


def maybe_compact(ctx: Shrinkable, provider: Provider) -> Compaction | None:
    """Compact when the policy says so (see ``Context.maybe_compact``); the decision joins the log."""
    tokens = ctx.context_tokens(provider)
    config = ctx.config
    ceiling = ctx.threshold(provider)
    policy = policy_named(config.policy)
    priced = policy.priced and tokens <= ceiling
    threshold = ceiling if tokens > ceiling else policy.due(ctx, provider, ceiling, tokens)
    if threshold is None:
        return None
    failed_at = ctx.state.failed_at
    if failed_at is not None and tokens < failed_at * 1.1:
        return None
    prices = decision_prices(provider.profile) if priced else None
    seen = Decision(
        policy.name,
        "compact",
        tokens,
        threshold,
        ceiling,
        ctx.context_window(provider),
        config.keep_turns,
        {k: getattr(prices, k) for k in PRICE_CLASSES} if prices is not None else {},
    )
    # A summary must replace more than it costs, or every turn would compact again.
    return compact(ctx, None, keep_turns=None, provider=provider, min_tokens=2 * config.summary_max_tokens, seen=seen)


PRICE_CLASSES = ("input", "read", "write", "output")
"""The token classes whose prices a decision records."""


def compact(
    ctx: Shrinkable,
    summarizer: Summarizer | None,
    *,
    keep_turns: int | None,
    provider: Provider | None,
    min_tokens: int,
    tokens_before: int | None = None,
    seen: Decision | None = None,
) -> Compaction | None:
    """See ``Context.compact``; ``seen``: the policy's decision to compact (None: asked for, the
    mark says so), whose threshold the kept turns must fit in half of. The decision, with its cut,
    its summarizer and how it ended, is written to the log before the mark, or alone if it failed."""
    state = ctx.state
    base = state.base
    recent = state.messages[base:]
    fit = seen.threshold if seen is not None and seen.threshold else ctx.threshold(provider)
    cut = choose_cut(recent, keep_turns) if keep_turns else fitting_cut(ctx, recent, fit)
    if cut is None or ctx.ledger.estimate(recent[:cut]) < min_tokens:
        return None
    before = seen.tokens if seen is not None else tokens_before
    before = before if before is not None else ctx.context_tokens(provider)
    decision = seen or Decision(
        "manual",
        "compact",
        before,
        ctx.threshold(provider),
        ctx.threshold(provider),
        ctx.context_window(provider),
        keep_turns or ctx.config.keep_turns,
    )
    decision = dataclasses.replace(decision, tokens=before, cut=state.starts[base + cut], messages=base + cut)
    tried: list[str] = []
    try:
        return _compact(ctx, summarizer, provider, decision, tried)
    except CompactionError as exc:
        how = tried[-1] if tried else ""
        ctx.append([dataclasses.replace(decision, summarizer=how, failed_at=before, error=str(exc))])
        raise


def _compact(
    ctx: Shrinkable, summarizer: Summarizer | None, provider: Provider | None, decision: Decision, tried: list[str]
) -> Compaction:
    """The summary, the mark and the hooks around them, for a cut already chosen (``decision.cut``)."""
    state = ctx.state
    base, manual, before = state.base, decision.policy == "manual", decision.tokens
    recent = state.messages[base : decision.messages]
    kept = sum(1 for m in state.messages[decision.messages :] if m.role == "assistant")
    start = CompactionStart(
        "manual" if manual else "auto", before, len(recent), ctx.context_window(provider), ctx.threshold(provider)
    )
    extra = ctx.hooks.before_compaction(start) if ctx.hooks is not None else ""
    if extra and isinstance(summarizer, TranscriptSummarizer):
        summarizer = TranscriptSummarizer(summarizer.ctx, summarizer.provider, extra)
    sends = summarizer.provider if isinstance(summarizer, TranscriptSummarizer) else provider
    transcript = fitted_transcript(ctx, sends, recent, summary_tokens(ctx, sends), extra)
    consulted, ctx.decided = ctx.decided, ctx.decided and not manual  # its calls are not the policy's
    try:
        prose = _summary(ctx, summarizer, provider, transcript, (kept, before, extra), tried)
    finally:
        ctx.decided = consulted
    if not prose or not prose.strip():
        raise CompactionError("the summary call returned no text, history left unchanged")
    how_thinking = thinking.strategy(provider.profile if provider is not None else None)
    kept_turns = ""
    if how_thinking == thinking.FOLD:  # the next request starts a new assistant turn: no bound block left
        kept_turns = f"\n<kept_turns>\n{thinking.fold_text(state.messages[decision.messages :])}\n</kept_turns>"
        end = len(state.messages)
        seq = state.starts[end] if end < len(state.starts) else state.starts[-1] + 1
        decision = dataclasses.replace(decision, cut=seq, messages=end)
    record = WorkRecord.from_messages(state.messages[: decision.messages], state.pins).render() + kept_turns
    candidate = Compaction(decision.messages, prose, record, before, strategy=how_thinking)
    prompt = ctx.prompt(compaction=candidate)
    counted = _counted(ctx, provider, prompt)
    after = counted if counted is not None else ctx.context_tokens(provider, prompt)
    if after >= before:
        raise CompactionError(
            f"the summary ({after:,} tokens with the kept turns) is not smaller than what it replaces "
            f"({before:,}); history left unchanged"
        )
    assert decision.cut is not None
    mark = CompactionMark(
        decision.cut,
        decision.messages,
        prose,
        record,
        before,
        after,
        counted=counted is not None,
        strategy=how_thinking,
    )
    if manual:
        how = "custom" if summarizer is not None else "provider"
        how = "transcript" if isinstance(summarizer, TranscriptSummarizer) else how
        mark = dataclasses.replace(mark, manual=True, keep_turns=decision.keep_turns, summarizer=how)
    ctx.append([dataclasses.replace(decision, summarizer=tried[-1]), mark])
    if ctx.hooks is not None:
        ctx.hooks.after_compaction(start, state.compactions[-1])
    return state.compactions[-1]


def _summary(
    ctx: Shrinkable,
    summarizer: Summarizer | None,
    provider: Provider | None,
    transcript: str,
    window: tuple[int, int, str],
    tried: list[str],
) -> str:
    """The summary's prose; ``window``: the turns kept, the tokens before, what hooks added."""
    try:
        if summarizer is not None:
            tried.append("transcript" if isinstance(summarizer, TranscriptSummarizer) else "custom")
            prose = summarizer(transcript)
        elif provider is None:
            raise CompactionError("compact needs a summarizer or a provider")
        else:
            prose = _provider_summary(ctx, provider, transcript, window, tried)
    except CompactionError:
        raise
    except Exception as exc:
        raise CompactionError(f"the summary call failed, history left unchanged: {exc}") from exc
    if not prose or not prose.strip():
        raise CompactionError("the summary call returned no text, history left unchanged")
    return prose


def _counted(ctx: Shrinkable, provider: Provider | None, prompt: Prompt) -> int | None:
    """The provider's own count of the window after a compaction, where it is free (``free_count``):
    once here, not every turn, so the estimates of the turns after it start from a measurement."""
    if provider is None or not provider.profile.free_count or provider.profile.counts_tokens:
        return None
    with contextlib.suppress(IllegalRequestError):  # not sendable as it stands: counted as it stands
        prompt = ctx.legal(prompt, provider, sending=False).prompt
    return provider.count_tokens(prompt)


def _provider_summary(
    ctx: Shrinkable, provider: Provider, transcript: str, window: tuple[int, int, str], tried: list[str]
) -> str:
    """The summary from ``provider``: read from the cache when the config says so and the window fits."""
    config = ctx.config
    keep, tokens, extra = window
    fits = tokens + summary_tokens(ctx, provider) < ctx.context_window(provider)
    if config.summary == "cached" and fits and not cold(ctx, provider):
        tried.append("cached")
        text = cached_summary(ctx, provider, keep, extra)
        if text is not None:
            return text
    tried.append("transcript")
    return TranscriptSummarizer(ctx, provider, extra)(transcript)
