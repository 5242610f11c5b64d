"""A recorded session replayed: another program's request bodies, re-priced under the cache rules.

A session ``tiny-agent record`` made holds the bodies the program sent (under ``request`` on its
``call`` entries) and what each was billed, not the engine's log: no user inputs or tool results
for the engine to decide over again, and requests the program built, not the engine. So its
replay prices those bodies again, each on its provider's cache rules (``providers.cache_sim``),
under what changes without the engine: every mark's lifetime (``cache_ttl``), tiny-agent's own
placement of the marks (``cache_marks="own"``: ``context.cache.plan_cache`` on each body's
messages, as the engine plans its own requests) or no marks at all (``"none"``), and another model
or provider of the same wire. Compaction and clearing are refused with a line that says why.

Sizes: a body weighs what its call was billed (a mark weighs nothing), its output is the recorded
one. Its split into read, written and uncached is the recorded one while the simulator bills every
body so far the same under the new policy as under the recorded one (on the recorded model); after
that it is the simulator's, scaled to the recorded size, and estimated.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tiny_agent.context.cache import plan_cache
from tiny_agent.context.entries import CallDone, CallOpened, RunChange, TypedEntry
from tiny_agent.context.tokens import CallRecord
from tiny_agent.errors import ConfigError, TinyAgentError
from tiny_agent.providers.cache_rules import DEFAULT_TTL, TTLS, Ttl
from tiny_agent.providers.cache_sim import SimCall, SimulationError, Simulator
from tiny_agent.providers.profile import ProviderProfile
from tiny_agent.providers.registry import offline_profile
from tiny_agent.providers.remark import planned, unmarked, with_ttl
from tiny_agent.providers.wire import wire_of
from tiny_agent.types import Entry, Message, Usage
from tiny_agent.whatif.figures import CallFigures, Figures, Policy, Replay

__all__ = ["MARKS", "REFUSED", "Sent", "replay_bodies", "sent_bodies"]

MARKS = ("own", "none")
"""``Policy.cache_marks``: tiny-agent's placement of the marks instead of the program's, or none."""

REFUSED = (
    "a recorded session (tiny-agent record) holds the program's request bodies, not the engine's log: "
    "replay re-prices its cache (--cache-ttl, --cache-marks own|none, --model, --provider), "
    "not compaction or clearing"
)

DESCRIBED = "the recorded bodies"


@dataclass(frozen=True)
class Sent:
    """One answered call of a recorded session: its body as sent, where, when, and what it was billed."""

    call: int
    """The seq of its ``call`` entry."""
    provider: str
    body: Mapping[str, Any]
    record: CallRecord
    at: float
    """When it was sent (its end less its duration)."""


def sent_bodies(typed: Sequence[tuple[Entry, Sequence[TypedEntry]]]) -> list[Sent]:
    """The answered turn calls whose entries carry the body sent (a recorded session's), in order."""
    opened: dict[int, tuple[str, Mapping[str, Any]]] = {}
    provider = ""
    out: list[Sent] = []
    for entry, values in typed:
        request = entry.body.get("request") if entry.kind == "call" else None
        for value in values:
            if isinstance(value, RunChange):
                provider = str(value.settings.get("provider") or provider)
            # A turn that carries its body is another program's: the engine keeps only its summary calls'.
            elif isinstance(value, CallOpened) and value.purpose == "turn" and isinstance(request, Mapping):
                opened[entry.seq] = (value.provider or provider, request)
            elif isinstance(value, CallDone) and value.call in opened:
                name, body = opened.pop(value.call)
                end = value.record.at if value.record.at is not None else entry.at
                out.append(Sent(value.call, name, body, value.record, end - value.record.seconds))
    return out


def replay_bodies(bodies: Sequence[Sent], recorded: Figures, policy: Policy) -> Replay:
    """The recorded bodies priced again under ``policy`` (see the module); ``ConfigError`` for a
    policy a recording cannot be replayed under."""
    if policy.config or policy.summary_tokens is not None:
        raise ConfigError(REFUSED)
    if policy.cache_marks not in (None, *MARKS):
        raise ConfigError(f"cache marks {policy.cache_marks!r}: give one of {', '.join(MARKS)}")
    providers, models = _names([(s.provider, _model(s)) for s in bodies])
    recorded = dataclasses.replace(recorded, provider=providers, model=models)
    if policy == Policy():
        return Replay(policy, recorded, dataclasses.replace(recorded, described=DESCRIBED))
    sims: dict[tuple[str, str], tuple[Simulator, Simulator]] = {}
    in_step = True
    calls: list[CallFigures] = []
    used: list[tuple[str, str]] = []
    for sent in bodies:
        old = _profile(sent.provider, _model(sent))
        new = _profile(policy.provider or sent.provider, policy.model or (None if policy.provider else old.model))
        if new.wire != old.wire:
            raise ConfigError(
                f"call {sent.call} went on the {old.wire} wire: its body cannot be priced on {new.name} "
                f"({new.wire}); replay a recorded session on a provider of the same wire"
            )
        key = (sent.provider, old.model)
        if key not in sims:
            sims[key] = (_simulator(old), _simulator(new))
        output = sent.record.usage.output_tokens or 0
        at = max([sent.at, *(s.calls[-1].at for s in sims[key] if s.calls)])  # concurrent calls: in order
        try:
            before = sims[key][0].send(at, sent.body, output)
            after = sims[key][1].send(at, {**_rewritten(sent.body, new, policy), "model": new.model}, output)
        except SimulationError as exc:
            raise ConfigError(f"call {sent.call} cannot be priced under {policy.describe()}: {exc}") from exc
        same_model = (new.name, new.model) == (old.name, old.model)
        in_step = in_step and same_model and _split(before) == _split(after)
        usage = sent.record.usage if in_step else _scaled(after, sent.record.usage)
        calls.append(_figures(sent, usage, new, estimated=not in_step))
        used.append((new.name, new.model))
    replayed = Figures(tuple(calls), 0, *_names(used), described=DESCRIBED)
    return Replay(policy, recorded, replayed)


def _model(sent: Sent) -> str:
    return str(sent.body.get("model") or sent.record.model)


def _names(pairs: Sequence[tuple[str, str]]) -> tuple[str, str]:
    """The provider and the model of a side: each one's name, or all of them where the calls differ."""
    return ", ".join(dict.fromkeys(p for p, _ in pairs)), ", ".join(dict.fromkeys(m for _, m in pairs))


def _profile(provider: str, model: str | None) -> ProviderProfile:
    """The profile that prices a call (its lifetime is the body's marks' business, not the profile's)."""
    try:
        return offline_profile(provider, model)
    except TinyAgentError as exc:
        raise ConfigError(f"a recorded call cannot be priced: {exc}") from exc


def _simulator(profile: ProviderProfile) -> Simulator:
    return Simulator(profile.wire, profile.model, rules=profile.cache, pricer=lambda call: 0.0)


def _rewritten(body: Mapping[str, Any], profile: ProviderProfile, policy: Policy) -> dict[str, Any]:
    """The body under the policy's marks: none, tiny-agent's, or the program's with the policy's lifetime."""
    if policy.cache_marks == "none":
        return unmarked(body, profile.wire)
    if policy.cache_marks == "own":
        return planned(body, profile.wire, _plan(body, profile.wire), profile.cache, _ttl(policy))
    if policy.cache_ttl:
        return with_ttl(body, profile.wire, _ttl(policy))
    return dict(body)


def _ttl(policy: Policy) -> Ttl:
    return next((ttl for ttl in TTLS if ttl == policy.cache_ttl), DEFAULT_TTL)


def _plan(body: Mapping[str, Any], wire: str) -> Any:
    """The engine's cache plan for the body's conversation (it reads only the messages' roles)."""
    messages = list(body.get("messages") or [])[wire_of(wire).conversation_start(body) :]
    roles = [Message("assistant" if m.get("role") == "assistant" else "user", ()) for m in messages]
    return plan_cache(roles)


def _split(call: SimCall) -> tuple[int, int, int]:
    return call.cache_read, call.cache_write_5m, call.cache_write_1h


def _scaled(call: SimCall, recorded: Usage) -> Usage:
    """The simulator's split of ``call``, scaled to the recorded size."""
    total = recorded.input_tokens or call.input_tokens
    scale = total / call.input_tokens if call.input_tokens else 0.0
    read, w5, w1 = (round(x * scale) for x in _split(call))
    read = min(read, total)
    w5 = min(w5, total - read)
    w1 = min(w1, total - read - w5)
    details = {"cache_creation": {"ephemeral_5m_input_tokens": w5, "ephemeral_1h_input_tokens": w1}}
    return Usage(total, recorded.output_tokens, read, w5 + w1, details, reasoning_tokens=recorded.reasoning_tokens)


def _figures(sent: Sent, usage: Usage, profile: ProviderProfile, *, estimated: bool) -> CallFigures:
    return CallFigures(
        sent.record.purpose,
        sent.at,
        usage.input_tokens or 0,
        usage.cache_read_tokens or 0,
        usage.cache_write_tokens or 0,
        usage.output_tokens or 0,
        profile.price(usage, sent.at),
        estimated,
        call=sent.call,
        window=profile.context_window,
        reasoning_tokens=usage.reasoning_tokens or 0,
    )
