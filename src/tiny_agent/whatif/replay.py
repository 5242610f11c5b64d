"""What would another policy have cost? A stored session replayed, sending nothing.

The engine runs again over the session's log: the same user inputs, the same pins and settings,
and at each moment the recording called the model, the engine's own decisions under the new
policy (clearing, compaction, cache marks), then the turn; a compaction the user asked for is done
again where it was. The model's answers and the tools' results are the recorded ones (a model
shown another window might have answered differently), the summary calls' answers included.
Every request the engine would have sent is rendered and billed by the provider's cache rules
(``providers.cache_sim``, on the profile's rules: breakpoints on Anthropic, automatic caching on
OpenAI before GPT-5.6, DeepSeek and Moonshot; the local model is free).

Token counts: a replayed request identical to a recorded one (same fingerprint, provider and model)
has the recorded size, and, while every request so far has been identical to the recording's, the
recorded cache split too; otherwise its size is the simulator's count calibrated on the recording
(its requests replayed under its own policy against what they were billed), and its split the
simulator's. A compaction the recording did not have gets the engine's own record plus a summary of
the recorded summaries' median length, priced as a call. Figures not recorded are marked estimated.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tiny_agent.context import keepalive
from tiny_agent.context.config import CONFIG_KEYS
from tiny_agent.context.engine import Context
from tiny_agent.context.entries import (
    CallDone,
    CallFailed,
    CallOpened,
    CompactionMark,
    ConfigChange,
    Decision,
    PinChange,
    Response,
    RunChange,
    ToolResult,
    TypedEntry,
    UserInput,
)
from tiny_agent.context.entry_codec import read
from tiny_agent.context.log import MemoryLog
from tiny_agent.context.replayed import Unnamed
from tiny_agent.context.shrink.decisions import decisions, decisions_of
from tiny_agent.errors import CompactionError, ConfigError, TinyAgentError
from tiny_agent.providers.cache_rules import DEFAULT_TTL
from tiny_agent.providers.profile import ProviderProfile
from tiny_agent.providers.registry import offline_profile
from tiny_agent.providers.thinking import OFF, Thinking
from tiny_agent.types import Entry
from tiny_agent.whatif.bodies import Sent, replay_bodies, sent_bodies
from tiny_agent.whatif.figures import SETTINGS, CallFigures, Figures, Policy, Replay, flag_value
from tiny_agent.whatif.provider import ReplayProvider
from tiny_agent.whatif.recorded import Recorded
from tiny_agent.whatif.thinking import check_thinks, recorded_thinking, sent_at, thinking_on

__all__ = ["CallFigures", "Figures", "Policy", "Recording", "Replay", "replay", "sweep"]


@dataclass
class Recording:
    """A session's log read once for any number of replays: its values, what it recorded, its policy,
    and the calibration of the simulator against its bills."""

    typed: list[tuple[Entry, list[TypedEntry]]]
    recorded: Recorded
    figures: Figures
    policy: Policy
    baseline: Figures | None = None
    baseline_profile: ProviderProfile | None = None
    scale: float | None = None
    """Recorded tokens per simulator token, over the requests the baseline replayed as recorded."""
    bodies: list[Sent] = dataclasses.field(default_factory=list)
    """A recorded session's calls, each body as the program sent it (``whatif.bodies``)."""
    thinking: Thinking = OFF
    """The thinking settings its newest turn request rendered (``whatif.thinking``)."""
    sent: dict[int, Thinking | None] = dataclasses.field(default_factory=dict)
    """The thinking settings each call entry was sent with, by its seq (``whatif.thinking.sent_at``)."""

    @staticmethod
    def of(entries: Sequence[Entry]) -> Recording:
        typed = [(entry, read(entry)) for entry in entries]
        unnamed = Unnamed.of((entry.seq, value) for entry, values in typed for value in values)
        policy = _policy(typed)
        recorded = Recorded.of(typed, unnamed)
        figures = _recorded(typed, policy.provider or "", policy.model or "")
        thinking = recorded_thinking(typed, unnamed)
        sent = sent_at(typed, unnamed)
        return Recording(typed, recorded, figures, policy, bodies=sent_bodies(typed), thinking=thinking, sent=sent)


def replay(entries: Sequence[Entry] | Recording, policy: Policy | None = None) -> Replay:
    """Replay a session's entries under ``policy`` (None: as recorded); sends nothing, needs no key.
    Raises ``UnreadableEntry`` for an entry that cannot be read, ``ConfigError`` for a policy that
    cannot be priced."""
    recording = entries if isinstance(entries, Recording) else Recording.of(entries)
    policy = policy or Policy()
    if recording.bodies:
        return replay_bodies(recording.bodies, recording.figures, policy)
    if policy.cache_marks is not None:
        raise ConfigError("--cache-marks is for a recorded session (tiny-agent record): these marks are the engine's")
    own = recording.policy
    if not (policy.provider or own.provider):
        raise ConfigError("the session does not say which provider it ran on; give --provider (and --model)")
    if not own.provider:  # the session does not say: the provider the replay is asked for
        own = dataclasses.replace(own, provider=policy.provider)
    own_profile = _profile(own, own, recording)
    profile = _profile(policy, own, recording)
    if profile != own_profile:
        check_thinks(profile, sum(c.reasoning_tokens or 0 for c in recording.figures.per_call))
    if recording.baseline is None or recording.baseline_profile != own_profile:
        recording.baseline_profile = own_profile
        # The recorded policy first: its requests are the recorded ones, which calibrates the
        # simulator's token counts against what was billed (its tokenizer is not the provider's).
        recording.baseline, pairs = _replayed(recording, Policy(), own_profile, None, as_recorded=True)
        recording.scale = sum(r for _, r in pairs) / sum(s for s, _ in pairs) if pairs else None
    if not policy.config and policy.summary_tokens is None and profile == own_profile:
        return Replay(policy, recording.figures, recording.baseline)
    again = _replayed(recording, policy, profile, recording.scale, as_recorded=profile == own_profile)
    return Replay(policy, recording.figures, again[0])


def sweep(
    entries: Sequence[Entry] | Recording, grid: Mapping[str, Sequence[Any]], base: Policy | None = None
) -> list[Replay]:
    """A replay per combination of ``grid`` (``ContextConfig`` fields, or ``figures.SETTINGS``:
    ``cache_ttl``, ``provider``, ...) to lists of values, over ``base``; the log is read once."""
    recording = entries if isinstance(entries, Recording) else Recording.of(entries)
    base = base or Policy()
    keys = list(grid)
    out: list[Replay] = []
    for values in itertools.product(*(grid[k] for k in keys)):
        config = dict(base.config)
        fields: dict[str, Any] = {}
        for key, value in zip(keys, values, strict=True):
            if key in SETTINGS:
                fields[key] = value
            else:
                config[key] = value
        out.append(replay(recording, dataclasses.replace(base, config=config, **fields)))
    return out


def _policy(typed: Sequence[tuple[Entry, Sequence[TypedEntry]]]) -> Policy:
    settings: dict[str, Any] = {}
    run: dict[str, Any] = {}
    provider = model = None
    for _, values in typed:
        for value in values:
            if isinstance(value, ConfigChange):
                settings.update(value.settings)
            elif isinstance(value, RunChange):
                run.update(value.settings)
            elif isinstance(value, CallOpened):
                provider, model = value.provider or provider, value.model or model
    config = {k: v for k, v in settings.items() if k in CONFIG_KEYS}
    return Policy(
        config, run.get("cache_ttl"), run.get("provider") or provider, run.get("model") or model, api=run.get("api")
    )


def _profile(policy: Policy, own: Policy, recording: Recording) -> ProviderProfile:
    """The profile to replay on: the policy's provider and model, else the recorded ones (a model is
    kept only on its own provider); the recorded window and thinking settings where both are the
    recording's (else the recorded thinking settings where the model takes them)."""
    name = policy.provider or own.provider or ""
    same_provider = policy.provider in (None, own.provider)
    model = policy.model or (own.model if same_provider else None)
    window = recording.recorded.window if (own_model := same_provider and model == own.model) else None
    api = policy.api or (own.api if same_provider else None)
    ttl = policy.cache_ttl or own.cache_ttl or DEFAULT_TTL
    profile = offline_profile(name, model, cache_ttl=ttl, context_window=window, api=api)
    return thinking_on(profile, recording.thinking, sent=own_model)


def _recorded(typed: Sequence[tuple[Entry, Sequence[TypedEntry]]], provider: str, model: str) -> Figures:
    opened: dict[int, CallOpened] = {}
    calls: list[CallFigures] = []
    compactions = 0
    pending: set[int] = set()
    for entry, values in typed:
        for value in values:
            if isinstance(value, CallOpened):
                opened[entry.seq] = value
                pending.add(entry.seq)
            elif isinstance(value, CallFailed):
                pending.discard(value.call)
            elif isinstance(value, CallDone) and value.call in opened:
                pending.discard(value.call)
                usage, record = value.record.usage, value.record
                calls.append(
                    CallFigures(
                        record.purpose,
                        entry.at,
                        usage.input_tokens or 0,
                        usage.cache_read_tokens or 0,
                        usage.cache_write_tokens,
                        usage.output_tokens or 0,
                        record.cost_usd,
                        fingerprint=opened[value.call].fingerprint,
                        call=value.call,
                        reasoning_tokens=usage.reasoning_tokens or 0,
                    )
                )
            elif isinstance(value, CompactionMark):
                compactions += 1
    found = tuple(d.decision for d in decisions_of(typed))
    return Figures(tuple(calls), compactions, provider, model, found, unfinished=tuple(sorted(pending)))


def _replayed(
    recording: Recording, policy: Policy, profile: ProviderProfile, scale: float | None, *, as_recorded: bool
) -> tuple[Figures, list[tuple[int, int]]]:
    typed = recording.typed
    cursor = [typed[0][0].at if typed else 0.0]
    ctx = Context(log=MemoryLog(clock=lambda: cursor[0]), clock=lambda: cursor[0])
    responses = recording.recorded.responses
    provider = ReplayProvider(
        ctx,
        profile,
        recording.recorded,
        as_recorded=as_recorded,
        tokens_per_sim_token=scale,
        summary_tokens=policy.summary_tokens,
    )
    repeated: dict[int, int] = {}
    overrides = dict(policy.config)
    if overrides:
        ctx.configure(**overrides)
    # A run that compacted, then stopped before its next call (killed, a closed pipe), consulted the
    # policy once more than it has turns: the replay does too, at the end.
    decided_last = False
    for entry, values in typed:
        cursor[0] = max(cursor[0], entry.at)
        for value in values:
            match value:
                case UserInput() | ToolResult() | PinChange():
                    ctx.append([value])
                case Response(call=None):
                    ctx.append([value])
                case ConfigChange(settings=settings):
                    ctx.configure(**{**settings, **overrides})
                case CallOpened() if entry.seq in recording.recorded.unreplayed:
                    provider.repeat(entry.seq)  # and on the log, as the recording's ledger saw it
                    repeated[entry.seq] = ctx.append([value])[0].seq
                case CallDone(call=call) if call in repeated:
                    ctx.append([dataclasses.replace(value, call=repeated.pop(call))])
                case CallOpened(purpose="keepalive"):
                    # A ping where the recording pinged: it reads what this policy's window left cached.
                    provider.ping()
                    with contextlib.suppress(TinyAgentError):
                        keepalive.ping(ctx, provider)
                case CallOpened(purpose="turn"):
                    decided_last = False
                    if (thinking := recording.sent.get(entry.seq)) is not None:
                        provider.think_as(thinking)  # a resume may have changed them, to the default too
                    if value.decided:  # where the recording consulted the policy (the loop: every turn)
                        _decide(ctx, provider)
                    if entry.seq in responses:
                        provider.arm(entry.seq)
                        ctx.complete(provider)
                case CompactionMark(manual=True):
                    _manual(ctx, provider, entry.seq, value)
                case Decision(policy=name) if name != "manual":
                    decided_last = True  # the policy acted (or failed to) after the newest turn call
                case CompactionMark():
                    decided_last = True  # a session from before decisions were written: its mark says so
    if decided_last:
        _decide(ctx, provider)
    described = " ".join(
        f"{name.replace('_', '-')}={flag_value(getattr(ctx.config, name))}"
        for name in ("policy", "compact_at", "keep_turns", "clear_after")
    )
    figures = Figures(tuple(provider.figures), len(ctx.compactions), profile.name, profile.model, described=described)
    return dataclasses.replace(figures, decisions=decisions(ctx.entries)), provider.pairs


def _decide(ctx: Context, provider: ReplayProvider) -> None:
    ctx.maybe_clear(provider)
    with contextlib.suppress(CompactionError):  # the recording went on without it too
        ctx.maybe_compact(provider)


def _manual(ctx: Context, provider: ReplayProvider, seq: int, mark: CompactionMark) -> None:
    """A compaction the user asked for, asked for again, its summary calls answered as recorded."""
    provider.manual(seq)
    try:
        with contextlib.suppress(CompactionError):
            if mark.summarizer == "custom":
                ctx.compact(lambda transcript: mark.summary, keep_turns=mark.keep_turns)
            elif mark.summarizer == "transcript":
                ctx.compact(ctx.summarizer(provider), keep_turns=mark.keep_turns)
            else:
                ctx.compact(provider=provider, keep_turns=mark.keep_turns)
    finally:
        provider.manual(None)
