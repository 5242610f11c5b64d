"""The provider a replay talks to: the recorded answers, billed by the profile's cache rules.

It renders with the profile's own adapter (no key, nothing sent) and answers each request the
engine makes: a turn with the response the recording got for it, a summary with a recorded summary
(in order) or, past those, one of the recorded summaries' median length. Its usage is worked out
as ``context.replay`` describes, and every call's figures are kept for the comparison.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Sequence
from typing import Any, Protocol

from tiny_agent.context.render import Rendered
from tiny_agent.context.tokens import canonical
from tiny_agent.providers.cache_sim import SimCall, Simulator
from tiny_agent.providers.profile import ProviderProfile
from tiny_agent.providers.registry import offline_adapter
from tiny_agent.providers.thinking import OFF, Thinking, thinking_key
from tiny_agent.types import Message, ModelResponse, OnProviderEvent, Prompt, TextBlock, Usage
from tiny_agent.whatif.figures import CallFigures
from tiny_agent.whatif.recorded import Recorded
from tiny_agent.whatif.replies import Reply, stand_in_thought
from tiny_agent.whatif.thinking import thinking_on

__all__ = ["ReplayProvider"]


class _Engine(Protocol):
    sending: Rendered | None

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
        self._recorded = recorded
        self._adapter = offline_adapter(profile, recorded.max_tokens)
        # The run's output cap, as its requests carried it: the room its thresholds kept for the reply.
        cap = self._adapter.profile.max_tokens
        self._profile = dataclasses.replace(profile, sends_requests=False, max_tokens=cap)
        self._sim = Simulator(profile.wire, profile.model, rules=profile.cache, pricer=lambda call: 0.0)
        self._armed: int | None = None
        self._pinging = False
        self._in_step = self._as_recorded = as_recorded
        self._policy_replies = list(recorded.policy_replies)
        self._manual: list[Reply] | None = None
        self._scale = tokens_per_sim_token
        self._summary_tokens = summary_tokens
        manual = itertools.chain.from_iterable(recorded.manual_replies.values())
        turns = [r.usage.reasoning_tokens or 0 for c, r in recorded.calls if c.purpose == "turn"]
        self._summary_thought = stand_in_thought(self._profile, [*recorded.policy_replies, *manual], turns)
        self.figures: list[CallFigures] = []
        self.pairs: list[tuple[int, int]] = []
        """(simulator tokens, recorded tokens) of each call identical to the recording's: the calibration."""

    @property
    def profile(self) -> ProviderProfile:
        return self._profile

    def think_as(self, thinking: Thinking) -> None:
        """Render from now on with ``thinking`` where the model takes it, else with its default (the
        settings a resumed run changed: each call is replayed with those it was sent with)."""
        profile = thinking_on(dataclasses.replace(self._profile, thinking=OFF), thinking, sent=self._as_recorded)
        if profile != self._profile:
            self._profile, self._adapter = profile, offline_adapter(profile, self._recorded.max_tokens)

    def arm(self, call_seq: int) -> None:
        """The next request is the turn the recording made at ``call_seq``; any before it is a summary."""
        self._armed = call_seq

    def ping(self) -> None:
        """The next request is a keepalive ping (answered with one token)."""
        self._pinging = True

    def manual(self, mark_seq: int | None) -> None:
        """Summary requests from now on are the manual compaction's at ``mark_seq`` (None: the policy's)."""
        self._manual = None if mark_seq is None else list(self._recorded.manual_replies.get(mark_seq, []))

    def repeat(self, call_seq: int) -> None:
        """Bill a call the replay cannot redo (see ``Recorded.unreplayed``) as recorded, repriced on
        the profile (estimated unless the profile is the recording's)."""
        record, opened = self._recorded.records[call_seq], self._recorded.opened[call_seq]
        usage, at = record.usage, self._engine.clock()
        self.figures.append(
            CallFigures(
                record.purpose,
                at,
                usage.input_tokens or 0,
                usage.cache_read_tokens or 0,
                usage.cache_write_tokens,
                usage.output_tokens or 0,
                self._profile.price(usage, at),
                not self._as_recorded,
                True,
                opened.fingerprint,
                call=call_seq,
                window=self._profile.context_window,
                reasoning_tokens=usage.reasoning_tokens or 0,
            )
        )

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
        rendered = self._engine.sending
        assert rendered is not None, "the engine renders before it sends"
        at = self._engine.clock()
        output: int | None
        call_id: int | None = None
        thought = 0  # the recorded turn's thinking: its reply is re-sent as recorded
        if self._pinging:
            self._pinging = False
            purpose, message, output, stop = "keepalive", Message.assistant("."), 1, "max_tokens"
        elif self._armed is not None:
            seq, self._armed = self._armed, None
            call_id = seq
            purpose, message = "turn", self._recorded.responses[seq].message
            output = self._recorded.records[seq].usage.output_tokens
            thought = self._recorded.records[seq].usage.reasoning_tokens or 0
            stop = self._recorded.records[seq].stop_reason or ("tool_use" if message.tool_uses else "end_turn")
        else:
            purpose, (blocks, output, thought) = "compaction", self._summary()
            message = Message("assistant", blocks)
            stop = "tool_use" if message.tool_uses else "end_turn"
        estimated_output = output is None
        if output is None:
            output = int(len(message.text) / self._recorded.ratio("compaction")) + 1 + thought
        call = self._sim.send(at, body, output)
        keys = self._keys(rendered)
        if call_id is None and self._here(keys, purpose):
            call_id = self._recorded.call_seqs[len(self.figures)]
        usage, estimated = self._usage(rendered, call, purpose, output, keys)
        system = "\n".join(rendered.prompt.system)
        self.figures.append(
            CallFigures(
                purpose,
                at,
                usage.input_tokens or 0,
                usage.cache_read_tokens or 0,
                usage.cache_write_tokens,
                output,
                self._profile.price(usage, at),
                estimated or estimated_output,
                all(pin in system for pin in self._engine.pins),
                rendered.fingerprint,
                call=call_id,
                window=self._profile.context_window,
                reasoning_tokens=thought,
            )
        )
        return ModelResponse(message, usage, stop, self._profile.model)

    def _here(self, keys: tuple[str, ...], purpose: str) -> bool:
        """Whether the recorded call at this place is this one (the same request, one of ``keys``)."""
        index = len(self.figures)
        if index >= len(self._recorded.calls):
            return False
        opened, _ = self._recorded.calls[index]
        return opened.purpose == purpose and canonical(opened.fingerprint) in keys

    def _keys(self, rendered: Rendered) -> tuple[str, ...]:
        """The fingerprint keys a recorded call identical to ``rendered`` may have: its own; where the
        wire held the asked thinking back (a loop begun without it), also the one naming the asked
        settings, as a log written before the fingerprint named the settings sent keyed it."""
        key, asked = canonical(rendered.fingerprint), self._profile.thinking
        if self._profile.sent_thinking(rendered.body) == asked:
            return (key,)
        return key, canonical({**rendered.fingerprint, "thinking": thinking_key(asked)})

    def _summary(self) -> Reply:
        """The next recorded answer (the manual compaction's, else the policy's), else a stand-in."""
        queue = self._manual if self._manual is not None else self._policy_replies
        if queue:
            return queue.pop(0)
        thought, text = self._summary_thought, self._recorded.median_summary(self._summary_tokens)
        return (TextBlock(text),), None if self._summary_tokens is None else self._summary_tokens + thought, thought

    def _usage(
        self, rendered: Rendered, call: SimCall, purpose: str, output: int, keys: tuple[str, ...]
    ) -> tuple[Usage, bool]:
        self._in_step = self._in_step and self._here(keys, purpose)
        if self._in_step:
            recorded = self._recorded.calls[len(self.figures)][1]
            if recorded.usage.input_tokens:
                self.pairs.append((call.input_tokens, recorded.usage.input_tokens))
            return recorded.usage, False
        name, model, sizes = self._profile.name, self._profile.model, self._recorded.sizes
        sized = next((sizes[w, model, k] for k in keys for w in (name, "") if (w, model, k) in sizes), None)
        total = sized.usage.input_tokens if sized is not None else None
        if total is None and self._scale:
            total = round(call.input_tokens * self._scale)
        if total is None:
            total = int(rendered.chars / self._recorded.ratio(purpose)) + 1
        scale = total / call.input_tokens if call.input_tokens else 0.0
        read, w5, w1 = (round(x * scale) for x in (call.cache_read, call.cache_write_5m, call.cache_write_1h))
        read = min(read, total)
        w5, w1 = min(w5, total - read), min(w1, total - read - min(w5, total - read))
        if not self._profile.cache.writes_billed:  # its API reports no writes: nor does the replay
            return Usage(total, output, read, None), True
        details = {"cache_creation": {"ephemeral_5m_input_tokens": w5, "ephemeral_1h_input_tokens": w1}}
        return Usage(total, output, read, w5 + w1, details), True
