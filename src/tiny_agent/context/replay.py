"""What would another policy have cost? A stored session replayed, sending nothing.

The engine runs again over the session's log: the same user inputs, the same pins and settings,
and at each moment the recording called the model, the engine's own decisions under the new
policy (clearing, compaction, cache marks), then the turn. The model's answers and the tools'
results are the recorded ones (a model shown another window might have answered differently).
Every request the engine would have sent is rendered and billed by the provider's cache rules
(``providers.cache_sim``, on the profile's rules: breakpoints on Anthropic, automatic caching on
OpenAI before GPT-5.6, DeepSeek and Moonshot; the local model is free).

Token counts: a replayed request identical to a recorded one (same fingerprint) has the recorded
size, and, while every request so far has been identical to the recording's, the recorded cache
split too; otherwise its size is the calibrated estimate (the recording's characters per token)
and its split the simulator's. A compaction the recording did not have gets the engine's own
record plus a summary of the recorded summaries' median length, priced as a call. Every figure
that was not recorded is marked estimated.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
from collections.abc import Mapping, Sequence
from typing import Any

from tiny_agent.context.engine import Context
from tiny_agent.context.entries import (
    ENGINE_SETTINGS,
    CallDone,
    CallOpened,
    CompactionMark,
    ConfigChange,
    PinChange,
    Response,
    RunSettings,
    ToolResult,
    TypedEntry,
    UserInput,
)
from tiny_agent.context.entry_codec import decode
from tiny_agent.context.log import MemoryLog
from tiny_agent.context.replay_figures import CallFigures, Figures, Policy, Replay
from tiny_agent.context.replay_provider import Recorded, ReplayProvider, replay_profile
from tiny_agent.context.tokens import CallRecord
from tiny_agent.errors import CompactionError, ConfigError
from tiny_agent.providers.profile import ProviderProfile
from tiny_agent.types import Entry

__all__ = ["CallFigures", "Figures", "Policy", "Replay", "recorded_policy", "replay", "sweep"]


def recorded_policy(entries: Sequence[Entry]) -> Policy:
    """The policy a session recorded (its thresholds, cache lifetime, provider and model)."""
    settings: dict[str, Any] = {}
    run: dict[str, Any] = {}
    provider = model = None
    for value in _values(entries):
        if isinstance(value, ConfigChange):
            settings.update(value.settings)
        elif isinstance(value, RunSettings):
            run.update(value.settings)
        elif isinstance(value, CallOpened):
            provider, model = value.provider or provider, value.model or model
    config = {k: v for k, v in settings.items() if k in ENGINE_SETTINGS and k not in ("system", "tools")}
    return Policy(config, run.get("cache_ttl"), run.get("provider") or provider, run.get("model") or model)


def replay(entries: Sequence[Entry], policy: Policy | None = None) -> Replay:
    """Replay a session's entries under ``policy`` (None: as recorded); sends nothing, needs no key."""
    policy = policy or Policy()
    own = recorded_policy(entries)
    name = policy.provider or own.provider
    model = policy.model or (own.model if policy.provider in (None, own.provider) else None)
    if not name:
        raise ConfigError("the session does not say which provider it ran on; give --provider (and --model)")
    recorded = _recorded(entries, own.provider or name, own.model or model or "")
    profile = replay_profile(name, model, policy.cache_ttl or own.cache_ttl or "5m")
    # The recorded policy first: its requests are the recorded ones, which calibrates the simulator's
    # token counts against what was billed (the provider's tokenizer is not the simulator's).
    own_profile = replay_profile(own.provider or name, own.model or model, own.cache_ttl or "5m")
    baseline, pairs = _replayed(entries, Policy(), own_profile, recorded, None, as_recorded=True)
    if not policy.config and policy.summary_tokens is None and profile == own_profile:
        return Replay(policy, recorded, baseline)
    scale = sum(r for _, r in pairs) / sum(s for s, _ in pairs) if pairs else None
    again = _replayed(entries, policy, profile, recorded, scale, as_recorded=profile == own_profile)
    return Replay(policy, recorded, again[0])


def _values(entries: Sequence[Entry]) -> list[TypedEntry]:
    return [value for entry in entries for value in decode(entry)]


def _recorded(entries: Sequence[Entry], provider: str, model: str) -> Figures:
    opened: dict[int, CallOpened] = {}
    calls: list[CallFigures] = []
    compactions = 0
    for entry in entries:
        for value in decode(entry):
            if isinstance(value, CallOpened):
                opened[entry.seq] = value
            elif isinstance(value, CallDone) and value.call in opened:
                calls.append(_figures(opened[value.call], value.record, entry.at))
            elif isinstance(value, CompactionMark):
                compactions += 1
    return Figures(tuple(calls), compactions, provider, model)


def _figures(opened: CallOpened, record: CallRecord, at: float) -> CallFigures:
    usage = record.usage
    return CallFigures(
        record.purpose,
        at,
        usage.input_tokens or 0,
        usage.cache_read_tokens or 0,
        usage.cache_write_tokens or 0,
        usage.output_tokens or 0,
        record.cost_usd,
        fingerprint=opened.fingerprint,
    )


def _replayed(
    entries: Sequence[Entry],
    policy: Policy,
    profile: ProviderProfile,
    recorded: Figures,
    scale: float | None,
    *,
    as_recorded: bool,
) -> tuple[Figures, list[tuple[int, int]]]:
    cursor = [entries[0].at if entries else 0.0]
    ctx = Context(log=MemoryLog(clock=lambda: cursor[0]), clock=lambda: cursor[0])
    history = Recorded.of(entries)
    provider = ReplayProvider(
        ctx, profile, history, as_recorded=as_recorded, tokens_per_sim_token=scale, summary_tokens=policy.summary_tokens
    )
    overrides = dict(policy.config)
    if overrides:
        ctx.configure(**overrides)
    for entry in entries:
        cursor[0] = max(cursor[0], entry.at)
        for value in decode(entry):
            match value:
                case UserInput() | ToolResult() | PinChange():
                    ctx.append([value])
                case Response(call=None):
                    ctx.append([value])
                case ConfigChange(settings=settings):
                    ctx.configure(**{**settings, **overrides})
                case CallOpened(purpose="turn") if entry.seq in history.responses:
                    ctx.maybe_clear(provider)
                    with contextlib.suppress(CompactionError):  # the recording went on without it too
                        ctx.maybe_compact(provider)
                    provider.arm(entry.seq)
                    ctx.complete(provider)
    return Figures(tuple(provider.figures), len(ctx.compactions), profile.name, profile.model), provider.pairs


def sweep(entries: Sequence[Entry], grid: Mapping[str, Sequence[Any]], base: Policy | None = None) -> list[Replay]:
    """A replay per combination of ``grid`` (``ContextConfig`` fields, or ``cache_ttl``, ``provider``,
    ``model``, to lists of values), over ``base``."""
    base = base or Policy()
    keys = list(grid)
    out: list[Replay] = []
    for values in itertools.product(*(grid[k] for k in keys)):
        config = dict(base.config)
        fields: dict[str, Any] = {}
        for key, value in zip(keys, values, strict=True):
            if key in ("cache_ttl", "provider", "model", "summary_tokens"):
                fields[key] = value
            else:
                config[key] = value
        out.append(replay(entries, dataclasses.replace(base, config=config, **fields)))
    return out
