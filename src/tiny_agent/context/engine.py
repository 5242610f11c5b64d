"""The context engine: a log of entries, the window rendered from it, token accounting, compaction.

Every change is an entry appended to the log (``context.log``); the state is a fold over the
entries (``context.state``), so the same log always renders the same request, in this process or
after a resume. A model call renders its request once (``context.render``: the body, its check,
its size and its fingerprint from one pass), and nothing is sent that the wire would refuse.

    ctx = Context(system="You are terse.", tools=toolbox.specs, pins=["never edit dev.mjs"])
    ctx.add_user("read README.md")
    response = ctx.complete(provider)      # render -> check -> send -> record
    ctx.add_tool_results([...])
    ctx.maybe_compact(provider)            # summary by the same provider, history kept in the log
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal

from tiny_agent.context import calling, size_guard
from tiny_agent.context.cache import plan_cache
from tiny_agent.context.config import DEFAULT_CONTEXT_WINDOW, EMPTY_REPLY, NOT_RUN, ContextConfig
from tiny_agent.context.conversation import Conversation
from tiny_agent.context.diagnosis import Before
from tiny_agent.context.legality import repair
from tiny_agent.context.log import Log
from tiny_agent.context.render import Rendered, Renderer
from tiny_agent.context.shrink import clearing, policy
from tiny_agent.context.shrink import summarize as shrink
from tiny_agent.context.shrink.compaction import Compaction, CompactionHooks, Summarizer
from tiny_agent.context.state import State
from tiny_agent.context.tokens import loop_start, prompt_chars, uncounted_reasoning_chars
from tiny_agent.context.window import spec_dict, system_blocks, window
from tiny_agent.errors import IllegalRequestError
from tiny_agent.providers.base import Provider
from tiny_agent.providers.thinking import EarlierReasoning
from tiny_agent.types import Message, ModelResponse, OnProviderEvent, Prompt, ToolSpec

__all__ = ["DEFAULT_CONTEXT_WINDOW", "EMPTY_REPLY", "NOT_RUN", "Context", "ContextConfig"]

log = logging.getLogger(__name__)


class Context(Conversation):
    """The messages state of one conversation, and everything that decides what is sent.

    ``log`` is where entries go: in memory by default, or a stored session (``StoredLog``), in which
    case the context is rebuilt from the session's entries and ``system``, ``pins`` and ``config``,
    when given, are recorded as changes on top of what the session holds. What is added, pinned
    and recorded lives in ``Conversation``; this class renders, calls and shrinks.
    """

    def __init__(
        self,
        system: str | None = None,
        tools: Iterable[ToolSpec] | None = None,
        messages: Iterable[Message] = (),
        *,
        pins: Iterable[str] = (),
        config: ContextConfig | None = None,
        log: Log | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(log, clock)
        self.renderer = Renderer(self.state.ledger.texts)
        self.sending: Rendered | None = None
        """The request on the wire now."""
        self.last_rendered: tuple[int, Rendered] | None = None
        """The newest request answered in this process, with the seq of its ``call`` entry; the miss
        diagnosis quotes it (the log has its fingerprint)."""
        self.decided = False
        """Whether the clearing or compaction policy was consulted since the last turn call (the
        call entry records it, so a replay consults the policy where the recording did)."""
        self.hooks: CompactionHooks | None = None
        """Told before and after each compaction; may add to the summary's instructions."""
        fresh = not self.state.settings
        settings: dict[str, Any] = {}
        if system is not None or fresh:
            settings["system"] = system or ""
        if config is not None or fresh:
            settings.update((config or ContextConfig()).settings())
        if tools is not None or fresh:
            settings["tools"] = [spec_dict(t) for t in tools or ()]
        self.configure(**settings)
        for pin in pins:
            self.pin(pin)
        for message in messages:
            self.add(message)

    # -- rendering ----------------------------------------------------------------------------

    def window(self) -> list[Message]:
        """The messages the model sees now: the newest summary, then everything after its cut."""
        return list(self.state.window.messages)

    def prompt(
        self,
        *,
        tool_choice: Literal["auto", "none"] = "auto",
        max_tokens: int | None = None,
        tool_grammar: Mapping[str, Mapping[str, Any]] | None = None,
        compaction: Compaction | None = None,
        path_terms: Mapping[str, Mapping[str, int]] | None = None,
    ) -> Prompt:
        """What the model would see now (with ``compaction``: what it would see after that one)."""
        state = self.state
        if compaction is None:
            messages = tuple(state.window.messages)
        else:
            messages = tuple(window(state.messages, compaction, state.stubs))
        system = system_blocks(state.system, state.pins)
        return Prompt(
            system,
            self.tools,
            messages,
            plan_cache(messages),
            tool_choice,
            max_tokens,
            tool_grammar=tool_grammar or {},
            path_terms=path_terms or {},
        )

    def render(self, provider: Provider, prompt: Prompt | None = None) -> dict[str, Any]:
        """The exact body ``provider`` would send now, checked; repaired if the check finds a fault."""
        return self.legal(calling.on_the_wire(self, prompt or self.prompt(), provider), provider).body

    def legal(self, prompt: Prompt, provider: Provider, *, sending: bool = True, strict: bool = True) -> Rendered:
        """``prompt`` rendered as it will really be sent: repaired if the check found a fault
        (``sending=False``: only measured, as ``/context`` does between turns, so no warning).

        Raises IllegalRequestError when even the repaired body breaks the protocol, unless not
        ``strict`` (``lint`` reads such a body, its problems in ``problems``).
        """
        rendered = self.renderer.render(prompt, provider)
        if rendered.legal:
            return rendered
        (log.warning if sending else log.debug)("repairing an illegal request: %s", "; ".join(rendered.problems))
        fixed = tuple(repair(prompt.messages))
        rendered = self.renderer.render(dataclasses.replace(prompt, messages=fixed, cache=plan_cache(fixed)), provider)
        if not rendered.legal and strict:
            raise IllegalRequestError(list(rendered.problems))
        return rendered

    def replayed_prompt(self, before_seq: int, state: State | None = None) -> Prompt:
        """The turn prompt as the log stood before entry ``before_seq`` (a resumed miss diagnosis);
        ``state``: the log's state then, where the caller has already built it."""
        state = state or State.of(e for e in self.entries if e.seq < before_seq)
        messages = tuple(state.window.messages)
        return Prompt(system_blocks(state.system, state.pins), self._tools_of(state), messages, plan_cache(messages))

    # -- calling the model --------------------------------------------------------------------

    def complete(
        self,
        provider: Provider,
        *,
        tool_grammar: Mapping[str, Mapping[str, Any]] | None = None,
        stream: bool = False,
        on_event: OnProviderEvent | None = None,
        path_terms: Mapping[str, Mapping[str, int]] | None = None,
    ) -> ModelResponse:
        """Render, check, send; the response joins the log and its usage the ledger. ``tool_grammar``
        and ``path_terms`` narrow the decoding only (see ``Prompt``)."""
        prompt = self.prompt(tool_grammar=tool_grammar, path_terms=path_terms)
        return self.call(provider, prompt, "turn", stream=stream, on_event=on_event)

    def call(
        self,
        provider: Provider,
        prompt: Prompt,
        purpose: str,
        *,
        stream: bool = False,
        on_event: OnProviderEvent | None = None,
    ) -> ModelResponse:
        """One model call, on the record: a ``call`` entry is committed before the send, and the
        response (for a turn) with its ``call_done`` after it, or a ``call_failed``."""
        return calling.call(self, provider, prompt, purpose, stream=stream, on_event=on_event)

    def previous_request(self, provider: Provider | None = None) -> Before | None:
        """The previous request, for the miss diagnosis (see ``calling.previous_request``)."""
        return calling.previous_request(self, provider)

    # -- size and compaction ------------------------------------------------------------------

    @property
    def failed_at(self) -> int | None:
        """Context size when the policy's last compaction failed (from the log); the next try waits for growth."""
        return self.state.failed_at

    def context_window(self, provider: Provider | None = None) -> int:
        return self.config.window(provider.profile.context_window if provider is not None else None)

    def threshold(self, provider: Provider | None = None) -> int:
        at = self.config.threshold(provider.profile.context_window if provider is not None else None)
        return at if provider is None else size_guard.compaction_ceiling(at, self.context_window(provider), provider)

    def context_tokens(self, provider: Provider | None = None, prompt: Prompt | None = None) -> int:
        """Tokens the next request will carry: counted exactly where the provider can, else the last
        measured size plus an estimate of what was appended since, else an estimate of it all."""
        if provider is not None and provider.profile.counts_tokens:
            prompt = prompt or self.prompt()
            with contextlib.suppress(IllegalRequestError):  # not sendable yet: counted as it stands
                prompt = self.legal(prompt, provider, sending=False).prompt
            exact = provider.count_tokens(prompt)
            if exact is not None:
                return exact
        state = self.state
        rule: EarlierReasoning = provider.profile.earlier_reasoning if provider is not None else "kept"
        if prompt is None:
            measured = state.measured
            if measured and measured[1] == state.epoch and measured[0] <= len(state.messages):
                count, _, size = measured
                messages = state.messages
                size += self.ledger.estimate(messages[count:])
                # The measured request counted its own tool loop's reasoning; what the provider leaves
                # out of the next one from that loop's start on (an earlier turn's, by now) is taken off.
                dropped = uncounted_reasoning_chars(messages, rule, loop_start(messages[:count]))
                return size - (self.ledger.estimate_chars(dropped) - 1 if dropped else 0)
        prompt = prompt or self.prompt()
        dropped = uncounted_reasoning_chars(prompt.messages, rule)
        return self.ledger.estimate_chars(prompt_chars(prompt, self.ledger.texts) - dropped)

    def check_task(self, provider: Provider, task: str) -> None:
        """Raise ``RequestTooLarge`` when the next request with ``task`` added could not be sent
        (``size_guard``), before it joins the log. Only a task that comes near the window is rendered."""
        again = self.unanswered() == task  # asked again after no reply came: in the log already
        message = Message.user(task)
        tokens = self.context_tokens() + (0 if again else self.ledger.estimate([message], remember=False))
        window = self.context_window(provider)
        if tokens * (1 + size_guard.ESTIMATE_MARGIN) <= window * size_guard.COUNT_FROM / 2:
            return
        prompt = self.prompt()
        messages = (*prompt.messages, *(() if again else (message,)))
        prompt = dataclasses.replace(prompt, messages=messages, cache=plan_cache(messages))
        rendered = self.legal(prompt, provider, sending=False)
        estimate = self.ledger.estimate_chars(rendered.chars)
        size_guard.check(provider, rendered, window=window, estimate=estimate, task=True)

    def planned_threshold(self, provider: Provider) -> int:
        """Where the active policy will compact (see ``shrink.policy.planned_threshold``): the
        ceiling ``threshold`` under "fraction", the cheapest cycle's threshold under "cost"."""
        return policy.planned_threshold(self, provider)

    def needs_compaction(self, provider: Provider | None = None) -> bool:
        return self.context_tokens(provider) > self.threshold(provider)

    def compact(
        self,
        summarizer: Summarizer | None = None,
        *,
        keep_turns: int | None = None,
        provider: Provider | None = None,
        min_tokens: int = 0,
        tokens_before: int | None = None,
    ) -> Compaction | None:
        """Replace all but the newest turns by a summary. None when there is nothing worth compacting.

        The summary comes from ``summarizer`` (given the flattened transcript of what is replaced),
        or else from ``provider``, asked at the end of the window so the call reads the cache.
        Without ``keep_turns``, keeps up to ``config.keep_turns`` turns, fewer if the kept turns
        alone would leave less than half the threshold free. Does nothing if the part to summarise
        is estimated below ``min_tokens``. The log keeps every message; only the window changes.
        If the summary fails or is empty, CompactionError is raised and the history is as it was.
        """
        return shrink.compact(
            self,
            summarizer,
            keep_turns=keep_turns,
            provider=provider,
            min_tokens=min_tokens,
            tokens_before=tokens_before,
        )

    def maybe_compact(self, provider: Provider) -> Compaction | None:
        """Compact with ``provider`` when the policy says so: past the threshold always; with the
        "cost" policy also as soon as the cache prices say the compaction pays for itself.

        After a failed summary, waits until the context has grown by a tenth before trying again,
        rather than paying for a failing call on every turn.
        """
        self.decided = True
        return shrink.maybe_compact(self, provider)

    def maybe_clear(self, provider: Provider | None = None) -> int:
        """Replace tool output older than ``config.clear_after`` turns by stubs, in one batch, when it
        pays; returns how many results were cleared (the log keeps them all)."""
        self.decided = True
        return clearing.clear_old_output(self, provider)

    def summarizer(self, provider: Provider) -> Summarizer:
        """A summarizer that calls ``provider`` with this context's own system and tools first, over a
        flattened transcript. ``compact(provider=...)`` without a summarizer is the path automatic
        compaction takes (a cache read at the end of the window, this one as its fallback): chat's
        /compact uses that one; pass this only to force the transcript."""
        return shrink.transcript_summarizer(self, provider)
