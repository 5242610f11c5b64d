"""One model call on the record: render once, check, send, record.

A ``call`` entry is committed before the send (so a crash mid-call leaves a call with unknown
usage, never a silent gap), then the response and its ``call_done`` (usage, cost, time, the
diagnosed cache miss) together, or a ``call_failed``. The engine is reached through ``Recorder``,
the little it needs of it, so this module does not import the engine that uses it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import time
from collections.abc import Callable, Sequence
from typing import Protocol

from tiny_agent.context import size_guard
from tiny_agent.context.cache import message_chain, shared_messages
from tiny_agent.context.config import EMPTY_REPLY
from tiny_agent.context.diagnosis import Before, diagnose
from tiny_agent.context.entries import CallDone, CallFailed, CallOpened, FieldRefused, Response, TypedEntry
from tiny_agent.context.entry_codec import read
from tiny_agent.context.legality import drop_empty_text
from tiny_agent.context.render import Rendered
from tiny_agent.context.replayed import Unnamed, recorded_adapter, redrawn_request
from tiny_agent.context.state import OpenCall, State
from tiny_agent.context.tokens import CallRecord, TokenLedger, server_compaction
from tiny_agent.errors import TinyAgentError
from tiny_agent.providers.base import Provider
from tiny_agent.types import Entry, ModelResponse, OnProviderEvent, Prompt, TextBlock

__all__ = ["Recorder", "call", "on_the_wire", "previous_request"]

log = logging.getLogger(__name__)


class Recorder(Protocol):
    """What a call on the record needs from the engine."""

    clock: Callable[[], float]
    sending: Rendered | None
    """The request on the wire now."""
    decided: bool
    """Whether the policy was consulted since the last turn call."""
    last_rendered: tuple[int, Rendered] | None
    """The newest request this process got an answer to, with the seq of its ``call`` entry (the
    miss diagnosis quotes it)."""

    @property
    def state(self) -> State: ...

    @property
    def entries(self) -> Sequence[Entry]: ...

    @property
    def ledger(self) -> TokenLedger: ...

    def append(self, values: Sequence[TypedEntry]) -> list[Entry]: ...

    def legal(self, prompt: Prompt, provider: Provider, *, sending: bool = True, strict: bool = True) -> Rendered: ...

    def context_window(self, provider: Provider | None = None) -> int: ...

    def threshold(self, provider: Provider | None = None) -> int: ...

    def planned_threshold(self, provider: Provider) -> int: ...

    def replayed_prompt(self, before_seq: int, state: State | None = None) -> Prompt: ...


def call(
    engine: Recorder,
    provider: Provider,
    prompt: Prompt,
    purpose: str,
    *,
    stream: bool = False,
    on_event: OnProviderEvent | None = None,
) -> ModelResponse:
    state = engine.state
    profile = provider.profile
    prompt = on_the_wire(engine, prompt, provider)
    before = previous_request(engine, provider)  # first: a redraw from the log must not be the renderer's last
    rendered = _sendable(engine, prompt, provider)
    shared = shared_messages(before.fingerprint, rendered.chain, before.chain) if before else None
    opened = _opened(engine, provider, purpose, rendered, shared)
    (entry,) = engine.append([opened])
    if purpose == "turn":
        engine.decided = False
    engine.sending = rendered
    started = time.monotonic()
    body = rendered.body
    try:
        response = provider.stream(body, on_event=on_event) if stream else provider.send(body, on_event=on_event)
    except BaseException as exc:
        reason = "interrupted" if isinstance(exc, KeyboardInterrupt) else str(exc) or type(exc).__name__
        with contextlib.suppress(Exception):
            engine.append([CallFailed(entry.seq, reason)])
        raise
    finally:
        engine.sending = None
    engine.last_rendered = (entry.seq, rendered)
    seconds = time.monotonic() - started
    miss = diagnose(before, rendered, profile, response.usage, engine.clock())
    record = CallRecord(
        response.usage,
        profile.price(response.usage, entry.at),  # at the hour it was sent, as a replay prices it
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
        _log_estimate_error(state, response)
    _record_answer(engine, entry.seq, record, response, profile.model)
    return response


def _opened(engine: Recorder, provider: Provider, purpose: str, rendered: Rendered, shared: int | None) -> CallOpened:
    """The ``call`` entry: what is sent, where, and what the window and the policy stood at."""
    profile = provider.profile
    return CallOpened(
        purpose,
        profile.model,
        rendered.chars,
        rendered.fingerprint,
        profile.cache_home,
        profile.name,
        tuple(engine.state.changes),
        shared,
        engine.context_window(provider),
        engine.planned_threshold(provider),  # where the active policy will compact, for the plot
        engine.decided,
        # A summary call's request is another prompt than the window's: kept, as the log cannot redraw it.
        None if purpose == "turn" else rendered.body,
    )


def _record_answer(engine: Recorder, seq: int, record: CallRecord, response: ModelResponse, model: str) -> None:
    """The answer's entries: the fields ``model`` refused, a turn's reply, and ``call_done``."""
    purpose = record.purpose
    # A field the model refused (the adapter sent the request again without it) stays out of the session.
    refused = [FieldRefused(model, name, error) for name, error in response.refused]
    done = CallDone(seq, record, None if purpose == "turn" else tuple(response.message.content))
    if purpose == "turn":
        message = drop_empty_text(response.message)
        content = message.content or (TextBlock(EMPTY_REPLY),)
        engine.append([*refused, Response(content, seq), done])
    else:
        engine.append([*refused, done])


def _sendable(engine: Recorder, prompt: Prompt, provider: Provider) -> Rendered:
    """The legal render of ``prompt``, once the size guard found it fits (``RequestTooLarge`` if not)."""
    rendered = engine.legal(prompt, provider)
    window = engine.context_window(provider)
    size_guard.check(provider, rendered, window=window, estimate=engine.ledger.estimate_chars(rendered.chars))
    return rendered


def on_the_wire(engine: Recorder, prompt: Prompt, provider: Provider) -> Prompt:
    """``prompt`` as it is sent: with the previous answer's id (a provider's own miss diagnosis), the
    conversation's cache key (from its first entry, which a fork shares with its parent, as it shares
    the cached prefix), and without the fields the model refused earlier in the session."""
    state, entries = engine.state, engine.entries
    previous = state.last_done[1].response_id if state.last_done is not None else None
    return dataclasses.replace(
        prompt,
        previous_response_id=previous or prompt.previous_response_id,
        cache_key=f"tiny-agent-{entries[0].id}" if entries else prompt.cache_key,
        omit=prompt.omit | state.refused.get(provider.profile.model, frozenset()),
    )


def previous_request(engine: Recorder, provider: Provider | None = None) -> Before | None:
    """The previous request, for the miss diagnosis: its fingerprint and size from the log, its
    text, chain and body from memory (or, after a resume, a turn's re-rendered from the log as it
    stood then: by ``provider`` when it sent it, see ``replayed.recorded_adapter``)."""
    state = engine.state
    if state.last_done is None:
        return None
    opened, record = state.last_done
    last = engine.last_rendered[1] if engine.last_rendered and engine.last_rendered[0] == opened.seq else None
    if last is None and opened.purpose == "turn":
        last = _redrawn(engine, opened, provider)
    answered = record.at or opened.at  # the entry is written when the reply arrives: its lifetime starts there
    # A server compaction in the previous call replaced the conversation as ours would.
    changes = (*state.changes, "compaction") if server_compaction(record.usage) else state.changes
    return Before(
        answered,
        opened.model,
        opened.fingerprint,
        record.usage.input_tokens,
        last.prompt if last is not None else None,
        changes,
        opened.server,
        last.chain if last is not None else None,
        last.body if last is not None and last.wire else None,
        last.wire if last is not None else "",
    )


def _redrawn(engine: Recorder, opened: OpenCall, provider: Provider | None) -> Rendered:
    """The previous turn request re-rendered from the log; without its body where the recorded
    provider cannot be rendered here (its prompt and chain still say where the messages changed)."""
    try:
        unnamed = Unnamed.of((e.seq, v) for e in engine.entries for v in read(e))
        return redrawn_request(engine, opened.seq, opened, recorded_adapter(opened, provider, unnamed.at(opened.seq)))
    except TinyAgentError:
        prompt = engine.replayed_prompt(opened.seq)
        return Rendered(prompt, {}, (), 0, opened.fingerprint, tuple(message_chain(prompt.messages)), 0)


def _log_estimate_error(state: State, response: ModelResponse) -> None:
    """The first turn after a compaction: how far the engine's estimate of the new window was."""
    measured = response.usage.input_tokens
    if not measured or not state.compactions:
        return
    estimate = state.compactions[-1].tokens_after or 0
    error = 100 * (estimate - measured) / measured
    log.debug("size estimate after compaction: %s tokens, measured %s (%+.1f%%)", estimate, measured, error)
