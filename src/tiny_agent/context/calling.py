"""One model call on the record, and the previous request it is compared with.

A ``call`` entry is committed before the send (so a crash mid-call leaves a call with unknown
usage, never a silent gap), then the response and its ``call_done`` (usage, cost, time, the
diagnosed cache miss) together, or a ``call_failed``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import time
from typing import TYPE_CHECKING

from tiny_agent.context.cache import fingerprint, shared_layers
from tiny_agent.context.config import EMPTY_REPLY
from tiny_agent.context.diagnosis import Before, diagnose, rules_for
from tiny_agent.context.legality import drop_empty_text
from tiny_agent.context.log import new_entry
from tiny_agent.context.state import State, render_prompt
from tiny_agent.context.tokens import CallRecord, prompt_chars
from tiny_agent.providers.base import Provider
from tiny_agent.types import Message, ModelResponse, OnProviderEvent, Prompt, TextBlock

if TYPE_CHECKING:
    from tiny_agent.context.engine import Context

__all__ = ["call", "previous_request"]

log = logging.getLogger(__name__)


def call(
    ctx: Context,
    provider: Provider,
    prompt: Prompt,
    purpose: str,
    *,
    stream: bool = False,
    on_event: OnProviderEvent | None = None,
) -> ModelResponse:
    state = ctx.state
    if state.last_done is not None and state.last_done[1].response_id:
        prompt = dataclasses.replace(prompt, previous_response_id=state.last_done[1].response_id)
    prompt, body = ctx.legal(provider, prompt)
    before = previous_request(ctx)
    prints = fingerprint(prompt)
    chars = prompt_chars(prompt)
    server = str(getattr(provider, "cache_home", "") or "")
    extra = {"server": server} if server else {}
    shared = None if before is None else shared_layers(before.fingerprint, prompt, _messages(before))[1]
    (opened,) = ctx.append(
        [
            new_entry(
                "call",
                purpose=purpose,
                model=provider.model,
                chars=chars,
                fingerprint=prints,
                changes=list(state.changes),
                shared_messages=shared,
                **extra,
            )
        ]
    )
    ctx.remember(prompt)
    started = time.monotonic()
    try:
        response = provider.stream(body, on_event=on_event) if stream else provider.send(body, on_event=on_event)
    except BaseException as exc:
        reason = "interrupted" if isinstance(exc, KeyboardInterrupt) else str(exc) or type(exc).__name__
        with contextlib.suppress(Exception):
            ctx.append([new_entry("call_failed", call=opened.seq, error=reason)])
        raise
    seconds = time.monotonic() - started
    rules, ttl = rules_for(provider, str(getattr(provider, "cache_ttl", "5m")))
    marked = provider.wire != "anthropic" or "cache_control" in json.dumps(body)
    miss = diagnose(before, prompt, provider.model, response.usage, ctx.clock(), rules, ttl, marked, server)
    record = CallRecord(
        response.usage,
        provider.price(response.usage),
        seconds,
        response.model,
        response.prefill_ms,
        purpose,
        response.stop_reason,
        miss,
        response_id=response.response_id,
        provider_miss=response.provider_miss,
    )
    if purpose == "turn" and before is not None and "compaction" in before.changes:
        _log_estimate_error(ctx, response)
    done = new_entry("call_done", call=opened.seq, **record.to_body())
    if purpose == "turn":
        message = drop_empty_text(response.message)
        content = message.content or (TextBlock(EMPTY_REPLY),)
        reply = new_entry("response", content=[b.to_dict() for b in content], call=opened.seq)
        ctx.append([reply, done])
    else:
        ctx.append([done])
    return response


def previous_request(ctx: Context) -> Before | None:
    """The previous request, for the miss diagnosis: its fingerprint and size from the log, its
    text from memory (or, after a resume, re-rendered from the log as it stood then)."""
    state = ctx.state
    if state.last_done is None:
        return None
    opened, record = state.last_done
    prompt = ctx.remembered()
    if prompt is None and opened.purpose == "turn":
        prompt = render_prompt(State.of(e for e in ctx.entries if e.seq < opened.seq))
    answered = record.at or opened.at  # the entry is written when the reply arrives: its lifetime starts there
    return Before(
        answered, opened.model, opened.fingerprint, record.usage.input_tokens, prompt, state.changes, opened.server
    )


def _messages(before: Before) -> tuple[Message, ...] | None:
    return before.prompt.messages if before.prompt is not None else None


def _log_estimate_error(ctx: Context, response: ModelResponse) -> None:
    """The first turn after a compaction: how far the engine's estimate of the new window was."""
    measured = response.usage.input_tokens
    if not measured or not ctx.state.compactions:
        return
    estimate = ctx.state.compactions[-1].tokens_after or 0
    error = 100 * (estimate - measured) / measured
    log.debug("size estimate after compaction: %s tokens, measured %s (%+.1f%%)", estimate, measured, error)
