"""A recorded turn request drawn again from the log, as it was sent: the prompt as the log stood
before its ``call`` entry, with the settings the entry recorded (model, thinking, tool_choice) and
what the call added on the wire (the conversation's cache key, the previous answer's id, the fields
the model refused). The view, ``lint --session`` and the miss diagnosis after a resume compare such
bodies with the one simulator (``providers.cache_breaks``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from tiny_agent.context.entries import CallOpened, CompactionMark, RunChange, TypedEntry
from tiny_agent.context.render import Rendered
from tiny_agent.context.shrink.thinking import DROP_BLOCK
from tiny_agent.context.state import State
from tiny_agent.providers.base import Provider
from tiny_agent.providers.registry import offline_adapter, offline_profile
from tiny_agent.providers.thinking import key_binding, named_key, thinking_key, thinking_of_key
from tiny_agent.types import Entry, Prompt

__all__ = ["Recorded", "Redrawer", "Unnamed", "recorded_adapter", "redrawn_request", "written_now"]


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


def recorded_adapter(opened: Recorded, live: Provider | None = None, unnamed: str = "strict") -> Provider:
    """The adapter that renders ``opened``'s request: ``live`` itself when it is that provider and
    model with the same thinking settings (so its own settings, such as ``max_tokens``, are in the
    body too); else one that sends nothing, for the recorded profile and thinking settings, the
    binding included (``unnamed`` where the recorded settings name none: ``Unnamed.at``).
    ``TinyAgentError`` when the recorded provider or its settings are unknown here."""
    key = opened.fingerprint.get("thinking")
    thinking = thinking_of_key(key, unnamed) if isinstance(key, str) else None
    if live is not None:
        own = live.profile
        mine = thinking_key(own.thinking) if own.thinking.mode != "default" or own.thinking.effort else None
        recorded = thinking_key(thinking) if thinking is not None else None
        if (own.name, own.model, mine) == (opened.provider, opened.model, recorded):
            return live
    profile = offline_profile(opened.provider, opened.model)
    if thinking is not None:
        profile = dataclasses.replace(profile, thinking=thinking)
    return offline_adapter(profile)


@dataclass(frozen=True)
class Unnamed:
    """What the calls whose recorded thinking settings name no binding were sent with (``at``). Call
    entries name it from this version on, so one after the first that does was strict; one before it
    (a log written before) was sent with drop_block where the log says so up to that part's last call:
    its run settings, or how its compactions kept the thinking rules."""

    legacy: str = "strict"
    named_from: int | None = None
    """The seq of the first call entry that names its binding."""

    @staticmethod
    def of(values: Iterable[tuple[int, TypedEntry]]) -> Unnamed:
        """Read from a log's values, each with its entry's seq, in order."""
        seen = shown = False
        for seq, value in values:
            if isinstance(value, CallOpened):
                key = value.fingerprint.get("thinking")
                if isinstance(key, str) and key_binding(key) is not None:
                    return Unnamed(DROP_BLOCK if shown else "strict", seq)
                shown = seen  # what comes after a log's last call (a resume's settings) is not about it
            seen = seen or _drops(value)
        return Unnamed(DROP_BLOCK if seen else "strict")

    def at(self, seq: int) -> str:
        return self.legacy if self.named_from is None or seq < self.named_from else "strict"


def written_now(opened: CallOpened, unnamed: str) -> CallOpened:
    """``opened`` with its thinking key as this version writes it (``unnamed``: the binding where the
    key names none), so the fingerprint of a call from an older log compares with a redraw's."""
    key = opened.fingerprint.get("thinking")
    if not isinstance(key, str) or named_key(key, unnamed) == key:
        return opened
    return dataclasses.replace(opened, fingerprint={**opened.fingerprint, "thinking": named_key(key, unnamed)})


def _drops(value: TypedEntry) -> bool:
    if isinstance(value, RunChange):
        return value.settings.get("thinking_binding") == DROP_BLOCK
    return isinstance(value, CompactionMark) and value.strategy == DROP_BLOCK


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
