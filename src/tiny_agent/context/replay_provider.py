"""The provider a replay talks to: the recorded answers, billed by the profile's cache rules.

It renders with the profile's own adapter (no key, nothing sent) and answers each request the
engine makes: a turn with the response the recording got for it, a summary with a recorded summary
(in order) or, past those, one of the recorded summaries' median length. Its usage is worked out
as ``context.replay`` describes, and every call's figures are kept for the comparison.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from tiny_agent.context.entries import CallDone, CallOpened, CompactionMark, Response
from tiny_agent.context.entry_codec import decode
from tiny_agent.context.render import Rendered
from tiny_agent.context.replay_figures import CallFigures
from tiny_agent.context.tokens import DEFAULT_CHARS_PER_TOKEN, CallRecord
from tiny_agent.errors import ConfigError
from tiny_agent.providers.base import Provider
from tiny_agent.providers.cache_rules import Ttl
from tiny_agent.providers.cache_sim import SimCall, Simulator
from tiny_agent.providers.pricing import FREE
from tiny_agent.providers.profile import ProviderProfile, profile_for
from tiny_agent.providers.registry import LOCAL, PROFILES
from tiny_agent.types import Entry, Message, ModelResponse, OnProviderEvent, Prompt, Usage

__all__ = ["Recorded", "ReplayProvider", "replay_profile"]

LOCAL_MODEL = "SmolLM2-135M-Instruct"
ASSUMED_SUMMARY_TOKENS = 200
"""The length assumed for a summary when the recording has none to measure: the one dense
paragraph the summary instructions ask for. Figures that depend on it are marked estimated."""


@dataclass
class Recorded:
    """What the recording holds, indexed for the replay."""

    responses: dict[int, Response] = field(default_factory=dict)
    """The reply to each turn call, by the seq of its ``call`` entry."""
    records: dict[int, CallRecord] = field(default_factory=dict)
    calls: list[tuple[CallOpened, CallRecord]] = field(default_factory=list)
    """Every answered call, in order."""
    sizes: dict[str, CallRecord] = field(default_factory=dict)
    """A recorded call by the fingerprint of its request."""
    summaries: list[tuple[str, int | None]] = field(default_factory=list)
    """Each recorded summary, with the output tokens of the call that wrote it."""
    ratios: dict[str, float] = field(default_factory=dict)
    """Characters per token by purpose, the median over the recorded calls."""

    @staticmethod
    def of(entries: Sequence[Entry]) -> Recorded:
        found = Recorded()
        opened: dict[int, CallOpened] = {}
        last_summary: CallRecord | None = None
        ratios: dict[str, list[float]] = {}
        for entry in entries:
            for value in decode(entry):
                if isinstance(value, CallOpened):
                    opened[entry.seq] = value
                elif isinstance(value, Response) and value.call is not None:
                    found.responses[value.call] = value
                elif isinstance(value, CallDone) and value.call in opened:
                    call, record = opened[value.call], value.record
                    found.records[value.call] = record
                    found.calls.append((call, record))
                    found.sizes.setdefault(fingerprint_key(call.fingerprint), record)
                    if record.usage.input_tokens and call.chars:
                        ratios.setdefault(call.purpose, []).append(call.chars / record.usage.input_tokens)
                    last_summary = record if record.purpose != "turn" else last_summary
                elif isinstance(value, CompactionMark):
                    found.summaries.append((value.summary, last_summary.usage.output_tokens if last_summary else None))
                    last_summary = None
        found.ratios = {k: statistics.median(v) for k, v in ratios.items()}
        return found

    def ratio(self, purpose: str) -> float:
        return self.ratios.get(purpose) or self.ratios.get("turn") or DEFAULT_CHARS_PER_TOKEN

    def median_summary(self, tokens: int | None = None) -> str:
        """A stand-in summary of ``tokens`` if given, else as long as the recorded ones' median, else
        of ``ASSUMED_SUMMARY_TOKENS``."""
        lengths = [len(text) for text, _ in self.summaries]
        if tokens is not None or not lengths:
            size = int((tokens or ASSUMED_SUMMARY_TOKENS) * self.ratio("compaction"))
        else:
            size = int(statistics.median(lengths))
        filler = "A replayed compaction: the recording had no summary here, so this stands in for one. "
        return (filler * (size // len(filler) + 1))[: max(1, size)]


def fingerprint_key(fingerprint: Any) -> str:
    return json.dumps(fingerprint, sort_keys=True, default=str)


def replay_profile(name: str, model: str | None, cache_ttl: str = "5m") -> ProviderProfile:
    """The profile a replay prices with: a known provider's, or the local model's (free)."""
    ttl: Ttl = "1h" if cache_ttl == "1h" else "5m"
    if name == LOCAL:
        return profile_for(LOCAL, "openai", model or LOCAL_MODEL, prices=FREE, pricing_id=None)
    known = PROFILES.get(name)
    if known is None:
        names = ", ".join([*sorted(PROFILES), LOCAL])
        raise ConfigError(f"replay prices the providers {names}; this session ran on {name!r}: give --provider")
    if ttl == "1h" and known.wire != "anthropic":
        raise ConfigError(f"a cache lifetime applies to Anthropic; {name!r} caches automatically")
    return profile_for(name, known.wire, model or known.default_model, cache_ttl=ttl)


class _Engine(Protocol):
    last_rendered: Rendered | None

    def clock(self) -> float: ...

    @property
    def pins(self) -> list[str]: ...


class ReplayProvider:
    """A Provider that sends nothing: the recorded answers, the profile's bill."""

    def __init__(
        self,
        engine: _Engine,
        profile: ProviderProfile,
        recorded: Recorded,
        *,
        as_recorded: bool,
        tokens_per_sim_token: float | None = None,
        summary_tokens: int | None = None,
    ) -> None:
        """``as_recorded``: the profile is the recording's (provider, model, lifetime), so a request
        identical to the recorded one, after identical ones, was billed as the recording says."""
        self._engine = engine
        self._profile = profile
        self._recorded = recorded
        self._adapter = _adapter(profile)
        self._sim = Simulator(profile.wire, profile.model, rules=profile.cache, pricer=lambda call: 0.0)
        self._armed: int | None = None
        self._in_step = as_recorded
        self._summaries = 0
        self._scale = tokens_per_sim_token
        self._summary_tokens = summary_tokens
        self.figures: list[CallFigures] = []
        self.pairs: list[tuple[int, int]] = []
        """(simulator tokens, recorded tokens) of each call identical to the recording's: the calibration."""

    @property
    def profile(self) -> ProviderProfile:
        return self._profile

    def arm(self, call_seq: int) -> None:
        """The next request is the turn the recording made at ``call_seq``; any before it is a summary."""
        self._armed = call_seq

    def wire_messages(self, message: Message, names: dict[str, str]) -> list[dict[str, Any]]:
        return self._adapter.wire_messages(message, names)

    def assemble(self, prompt: Prompt, messages: Sequence[Sequence[dict[str, Any]]]) -> dict[str, Any]:
        return self._adapter.assemble(prompt, messages)

    def render(self, prompt: Prompt) -> dict[str, Any]:
        return self._adapter.render(prompt)

    def stream(self, body: dict[str, Any], *, on_event: OnProviderEvent | None = None) -> ModelResponse:
        return self.send(body)

    def count_tokens(self, prompt: Prompt) -> int | None:
        return None

    def send(self, body: dict[str, Any], *, on_event: OnProviderEvent | None = None) -> ModelResponse:
        rendered = self._engine.last_rendered
        assert rendered is not None, "the engine renders before it sends"
        at = self._engine.clock()
        if self._armed is not None:
            seq, self._armed = self._armed, None
            purpose, message = "turn", self._recorded.responses[seq].message
            output: int | None = self._recorded.records[seq].usage.output_tokens
            stop = self._recorded.records[seq].stop_reason or ("tool_use" if message.tool_uses else "end_turn")
        else:
            purpose, (text, output) = "compaction", self._summary()
            message, stop = Message.assistant(text), "end_turn"
        estimated_output = output is None
        if output is None:
            output = int(len(message.text) / self._recorded.ratio("compaction")) + 1
        call = self._sim.send(at, body, output)
        usage, estimated = self._usage(rendered, call, purpose, output)
        system = "\n".join(rendered.prompt.system)
        self.figures.append(
            CallFigures(
                purpose,
                at,
                usage.input_tokens or 0,
                usage.cache_read_tokens or 0,
                usage.cache_write_tokens or 0,
                output,
                self._profile.price(usage),
                estimated or estimated_output,
                all(pin in system for pin in self._engine.pins),
                rendered.fingerprint,
            )
        )
        return ModelResponse(message, usage, stop, self._profile.model)

    def _summary(self) -> tuple[str, int | None]:
        index, self._summaries = self._summaries, self._summaries + 1
        if index < len(self._recorded.summaries):
            return self._recorded.summaries[index]
        return self._recorded.median_summary(self._summary_tokens), self._summary_tokens

    def _usage(self, rendered: Rendered, call: SimCall, purpose: str, output: int) -> tuple[Usage, bool]:
        index = len(self.figures)
        key = fingerprint_key(rendered.fingerprint)
        recorded = self._recorded.calls[index] if index < len(self._recorded.calls) else None
        here = (
            recorded is not None and recorded[0].purpose == purpose and fingerprint_key(recorded[0].fingerprint) == key
        )
        self._in_step = self._in_step and here
        if self._in_step and recorded is not None:
            if recorded[1].usage.input_tokens:
                self.pairs.append((call.input_tokens, recorded[1].usage.input_tokens))
            return recorded[1].usage, False
        sized = self._recorded.sizes.get(key)
        total = sized.usage.input_tokens if sized is not None else None
        if total is None and self._scale:
            total = round(call.input_tokens * self._scale)
        if total is None:
            total = int(rendered.chars / self._recorded.ratio(purpose)) + 1
        scale = total / call.input_tokens if call.input_tokens else 0.0
        read, w5, w1 = (round(x * scale) for x in (call.cache_read, call.cache_write_5m, call.cache_write_1h))
        read = min(read, total)
        w5, w1 = min(w5, total - read), min(w1, total - read - min(w5, total - read))
        details = {"cache_creation": {"ephemeral_5m_input_tokens": w5, "ephemeral_1h_input_tokens": w1}}
        return Usage(total, output, read, w5 + w1, details), True


def _adapter(profile: ProviderProfile) -> Provider:
    if profile.wire == "anthropic":
        from tiny_agent.providers.anthropic import AnthropicProvider

        return AnthropicProvider(
            model=profile.model, api_key="rendering-only", name=profile.name, cache_ttl=profile.cache_ttl
        )
    from tiny_agent.providers.openai_compat import OpenAICompatProvider

    mode = "json_schema" if profile.name == LOCAL else "native"
    return OpenAICompatProvider(model=profile.model, api_key="rendering-only", name=profile.name, tool_mode=mode)
