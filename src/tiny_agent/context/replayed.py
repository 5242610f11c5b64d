"""A recorded turn request drawn again from the log, as it was sent: the prompt as the log stood
before its ``call`` entry, with the settings the entry recorded (model, thinking, tool_choice) and
what the call added on the wire (the conversation's cache key, the previous answer's id, the fields
the model refused). The view, ``lint --session`` and the miss diagnosis after a resume compare such
bodies with the one simulator (``providers.cache_breaks``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, Literal, Protocol

from tiny_agent.context.render import Rendered
from tiny_agent.context.state import State
from tiny_agent.providers.base import Provider
from tiny_agent.providers.registry import offline_adapter, offline_profile
from tiny_agent.providers.thinking import thinking_key, thinking_of_key
from tiny_agent.types import Entry, Prompt

__all__ = ["Recorded", "Redrawer", "recorded_adapter", "redrawn_request"]


class Recorded(Protocol):
    """What a ``call`` entry recorded of its request (``CallOpened``, ``state.OpenCall``)."""

    @property
    def provider(self) -> str: ...

    @property
    def model(self) -> str: ...

    @property
    def fingerprint(self) -> Mapping[str, Any]: ...


class Redrawer(Protocol):
    """What a redraw needs of the engine."""

    @property
    def entries(self) -> Sequence[Entry]: ...

    def legal(self, prompt: Prompt, provider: Provider, *, sending: bool = True) -> Rendered: ...

    def replayed_prompt(self, before_seq: int, state: State | None = None) -> Prompt: ...


def recorded_adapter(
    opened: Recorded, live: Provider | None = None, binding: Literal["strict", "drop_block"] = "strict"
) -> Provider:
    """The adapter that renders ``opened``'s request: ``live`` itself when it is that provider and
    model with the same thinking settings (so its own settings, such as ``max_tokens``, are in the
    body too); else one that sends nothing, for the recorded profile and thinking settings, with the
    session's ``binding`` (the fingerprint does not name it; ``whatif.thinking.recorded_thinking``
    reads it from the log). ``TinyAgentError`` when the recorded provider or its settings are unknown here."""
    thinking = opened.fingerprint.get("thinking")
    if live is not None:
        own = live.profile
        key = thinking_key(own.thinking) if own.thinking.mode != "default" or own.thinking.effort else None
        if (own.name, own.model, key) == (opened.provider, opened.model, thinking):
            return live
    profile = offline_profile(opened.provider, opened.model)
    if isinstance(thinking, str):
        profile = dataclasses.replace(profile, thinking=dataclasses.replace(thinking_of_key(thinking), binding=binding))
    return offline_adapter(profile)


def redrawn_request(engine: Redrawer, seq: int, opened: Recorded, provider: Provider) -> Rendered:
    """The turn request of the ``call`` entry ``seq`` rendered again by ``provider`` (see
    ``recorded_adapter``). ``IllegalRequestError`` if even its repair breaks the protocol."""
    entries = engine.entries
    earlier = State.of(e for e in entries if e.seq < seq)
    prompt = engine.replayed_prompt(seq, earlier)
    answered = earlier.last_done[1].response_id if earlier.last_done is not None else None
    prompt = dataclasses.replace(
        prompt,
        tool_choice="none" if opened.fingerprint.get("tool_choice") == "none" else "auto",
        previous_response_id=answered or prompt.previous_response_id,
        cache_key=f"tiny-agent-{entries[0].id}" if entries else prompt.cache_key,
        omit=prompt.omit | earlier.refused.get(opened.model, frozenset()),
    )
    return engine.legal(prompt, provider, sending=False)
