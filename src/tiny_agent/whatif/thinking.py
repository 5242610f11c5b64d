"""The thinking settings a replay or an export renders with: the session's own, read from its log.

Each call entry's fingerprint names the settings its request rendered (``thinking_key``), and the
run settings what the run asked for; the binding of a call whose key names none (a log written
before keys named it) is the one ``context.replayed.Unnamed`` reads at that call. A replay on the
recorded profile renders with them, so its requests are the recorded ones; on another model they are
kept where that model takes them, else its default applies.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from tiny_agent.context.entries import CallOpened, RunChange, TypedEntry
from tiny_agent.context.replayed import Unnamed
from tiny_agent.errors import ConfigError
from tiny_agent.providers.profile import ProviderProfile
from tiny_agent.providers.thinking import OFF, Thinking, parse_thinking, thinking_of_key
from tiny_agent.providers.thinking_check import checked
from tiny_agent.types import Entry

__all__ = ["call_thinking", "check_thinks", "recorded_thinking", "sent_with", "thinking_on"]

_RUN_KEYS = ("thinking", "thinking_display", "effort")
"""The run settings (``agent.settings.RunSettings``) a run builds its thinking from."""


def recorded_thinking(typed: Sequence[tuple[Entry, Sequence[TypedEntry]]], unnamed: Unnamed) -> Thinking:
    """The settings the session's newest turn call rendered (with the binding ``unnamed`` reads where
    its key names none); where its calls name none (a Responses session recorded before its
    effort was in the fingerprint), the run's settings; else the model's default."""
    found = sent_with(typed, unnamed, "turn")
    return OFF if found is None else found  # settings this version does not know: the model's default


def sent_with(
    typed: Sequence[tuple[Entry, Sequence[TypedEntry]]], unnamed: Unnamed, purpose: str | None = None
) -> Thinking | None:
    """The settings the newest call of ``typed`` (of ``purpose``; None: any) was sent with, read as
    ``recorded_thinking`` says; None where they are settings this version does not know."""
    key: str | None = None
    run: dict[str, Any] = {}
    seq = 0
    for entry, values in typed:
        for value in values:
            if isinstance(value, CallOpened) and purpose in (None, value.purpose):
                named = value.fingerprint.get("thinking")
                key, seq = named if isinstance(named, str) else None, entry.seq
            elif isinstance(value, RunChange):
                run.update({k: v for k, v in value.settings.items() if k in _RUN_KEYS})
    try:
        if key is not None:
            return thinking_of_key(key, unnamed.at(seq))
        if any(run.get(k) is not None for k in _RUN_KEYS):
            return parse_thinking(run.get("thinking"), run.get("thinking_display"), run.get("effort"))
    except ConfigError:
        return None
    return OFF


def check_thinks(profile: ProviderProfile, thought: int) -> None:
    """ConfigError where a session that spent ``thought`` thinking tokens is replayed on a model that
    does not think: the replay would price thinking the model cannot make (a live run refuses it)."""
    caps = profile.thinking_caps
    if thought and not (caps.thinks or caps.effort_only or caps.default_on):
        raise ConfigError(
            f"{profile.model} does not think, and the session's calls did ({thought:,} thinking tokens): "
            "a replay on it would price thinking it cannot make; replay on a model that thinks"
        )


def thinking_on(profile: ProviderProfile, thinking: Thinking) -> ProviderProfile:
    """``profile`` asking for ``thinking``, where its model takes it; else as it is (its default)."""
    try:
        return dataclasses.replace(profile, thinking=checked(thinking, profile.thinking_caps, profile.model))
    except ConfigError:
        return profile


def call_thinking(call: CallOpened, unnamed: str) -> Thinking | None:
    """The settings ``call``'s request rendered (its fingerprint's ``thinking_key``), with the binding
    ``unnamed`` (``Unnamed.at`` the call) where the key names none; None where it names none this
    version reads."""
    key = call.fingerprint.get("thinking")
    if not isinstance(key, str):
        return None
    try:
        return thinking_of_key(key, unnamed)
    except ConfigError:
        return None
