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

__all__ = ["check_thinks", "recorded_thinking", "sent_at", "sent_with", "thinking_on"]

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
    """The settings the newest call of ``typed`` (of ``purpose``; None: any) was sent with (``sent_at``);
    where there is none, the run's settings, else the model's default."""
    calls = sent_at(typed, unnamed, purpose)
    if calls:
        return calls[max(calls)]
    return _in_force(_run_settings(typed), OFF)


def sent_at(
    typed: Sequence[tuple[Entry, Sequence[TypedEntry]]], unnamed: Unnamed, purpose: str | None = None
) -> dict[int, Thinking | None]:
    """The settings each call entry of ``typed`` (of ``purpose``; None: any) was sent with, by its seq:
    its fingerprint's ``thinking_key`` (with the binding ``unnamed`` reads where the key names none).
    A call whose key is missing was sent with the model's default, which is written without one;
    in a log from before its settings were in the fingerprint (a Responses session's effort), the
    run settings in force at it say what it was sent with. None: settings this version does not know."""
    run: dict[str, Any] = {}
    found: dict[int, Thinking | None] = {}
    for entry, values in typed:
        for value in values:
            if isinstance(value, RunChange):
                run.update({k: v for k, v in value.settings.items() if k in _RUN_KEYS})
            elif isinstance(value, CallOpened) and purpose in (None, value.purpose):
                key = value.fingerprint.get("thinking")
                try:
                    named = thinking_of_key(key, unnamed.at(entry.seq)) if isinstance(key, str) else None
                except ConfigError:
                    found[entry.seq] = None
                    continue
                found[entry.seq] = named if named is not None else _in_force(run, OFF)
    return found


def _run_settings(typed: Sequence[tuple[Entry, Sequence[TypedEntry]]]) -> dict[str, Any]:
    run: dict[str, Any] = {}
    for _, values in typed:
        for value in values:
            if isinstance(value, RunChange):
                run.update({k: v for k, v in value.settings.items() if k in _RUN_KEYS})
    return run


def _in_force(run: dict[str, Any], default: Thinking) -> Thinking | None:
    """The settings ``run`` names (None: settings this version does not know), else ``default``."""
    if not any(run.get(k) is not None for k in _RUN_KEYS):
        return default
    try:
        return parse_thinking(run.get("thinking"), run.get("thinking_display"), run.get("effort"))
    except ConfigError:
        return None


def check_thinks(profile: ProviderProfile, thought: int) -> None:
    """ConfigError where a session that spent ``thought`` thinking tokens is replayed on a model that
    does not think: the replay would price thinking the model cannot make (a live run refuses it)."""
    caps = profile.thinking_caps
    if thought and not (caps.thinks or caps.effort_only or caps.default_on):
        raise ConfigError(
            f"{profile.model} does not think, and the session's calls did ({thought:,} thinking tokens): "
            "a replay on it would price thinking it cannot make; replay on a model that thinks"
        )


def thinking_on(profile: ProviderProfile, thinking: Thinking, *, sent: bool = False) -> ProviderProfile:
    """``profile`` asking for ``thinking``, where its model takes it; else as it is (its default).
    ``sent``: the recording sent ``thinking`` to this very model, and the API took it, so it is
    rendered as it was also where the model's declaration refuses it now (a budget on Claude 5)."""
    try:
        return dataclasses.replace(profile, thinking=checked(thinking, profile.thinking_caps, profile.model))
    except ConfigError:
        return dataclasses.replace(profile, thinking=thinking) if sent else profile
