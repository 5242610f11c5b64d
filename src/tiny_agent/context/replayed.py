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

from tiny_agent.context.entries import CallOpened, CompactionMark, RunChange, RunStop, TypedEntry
from tiny_agent.context.render import Rendered
from tiny_agent.context.shrink.thinking import DROP_BLOCK
from tiny_agent.context.state import State
from tiny_agent.providers.base import Provider
from tiny_agent.providers.registry import offline_adapter, offline_profile
from tiny_agent.providers.thinking import named_key, thinking_key, thinking_of_key
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

    def legal(self, prompt: Prompt, provider: Provider, *, sending: bool = True, strict: bool = True) -> Rendered: ...

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
    """The binding each call was sent with where its recorded thinking settings name none (``at``).
    Call entries name drop_block from this version on, so only a log written before holds a call
    sent with it that does not say so: it was sent with the binding its run settings in force asked
    for; where none asked for one (a session run from Python before ``--thinking-binding``), with
    drop_block if its run's compactions kept the thinking rules so."""

    dropped: frozenset[int] = frozenset()
    """The seqs of the call entries sent with drop_block."""

    @staticmethod
    def of(values: Iterable[tuple[int, TypedEntry]]) -> Unnamed:
        """Read from a log's values, each with its entry's seq, in order."""
        dropped: set[int] = set()
        asked: str | None = None
        run: list[int] = []  # the calls of this run that no run settings named a binding for
        compacted = False
        for seq, value in values:
            match value:
                case CallOpened() if asked == DROP_BLOCK:
                    dropped.add(seq)
                case CallOpened() if asked is None:
                    run.append(seq)
                case CompactionMark(strategy=strategy):
                    compacted = compacted or strategy == DROP_BLOCK
                case RunChange() | RunStop():  # where a run starts or ends
                    if compacted:
                        dropped.update(run)
                    run, compacted = [], False
                    if isinstance(value, RunChange):
                        asked = value.settings.get("thinking_binding", asked)
        return Unnamed(frozenset(dropped.union(run if compacted else ())))

    def at(self, seq: int) -> str:
        return DROP_BLOCK if seq in self.dropped else "strict"


def written_now(opened: CallOpened, unnamed: str) -> CallOpened:
    """``opened`` with its thinking key as this version writes it (``unnamed``: the binding where the
    key names none), so the fingerprint of a call from an older log compares with a redraw's."""
    key = opened.fingerprint.get("thinking")
    if not isinstance(key, str) or named_key(key, unnamed) == key:
        return opened
    return dataclasses.replace(opened, fingerprint={**opened.fingerprint, "thinking": named_key(key, unnamed)})


def redrawn_request(
    engine: Redrawer, seq: int, opened: Recorded, provider: Provider, *, strict: bool = True
) -> Rendered:
    """The turn request of the ``call`` entry ``seq`` rendered again by ``provider`` (see
    ``recorded_adapter``). ``IllegalRequestError`` if even its repair breaks the protocol, unless not
    ``strict``: then the body as rendered, for ``lint`` to report what the API would refuse in it."""
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
    return engine.legal(prompt, provider, sending=False, strict=strict)
