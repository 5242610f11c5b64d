"""The context engine: a log of entries, the window rendered from it, token accounting, compaction.

Every change is an entry appended to the log (``context.log``); the state is a fold over the
entries (``context.state``), so the same log always renders the same request, in this process or
after a resume. Every render goes through the legality check for the provider's wire format
before it is sent.

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
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal

from tiny_agent.context import calling, shrink
from tiny_agent.context.cache import plan_cache
from tiny_agent.context.compaction import SUMMARY_INSTRUCTIONS, Compaction, Summarizer
from tiny_agent.context.config import CONFIG_KEYS, DEFAULT_CONTEXT_WINDOW, EMPTY_REPLY, NOT_RUN, ContextConfig
from tiny_agent.context.diagnosis import Before
from tiny_agent.context.legality import check_anthropic_body, check_openai_body, drop_empty_text, repair
from tiny_agent.context.log import Log, MemoryLog, new_entry
from tiny_agent.context.state import State, render_prompt, spec_dict, spec_of, system_blocks, window
from tiny_agent.context.tokens import TokenLedger
from tiny_agent.errors import CompactionError, ConfigError, IllegalRequestError
from tiny_agent.providers.base import Provider
from tiny_agent.store.base import NewEntry
from tiny_agent.types import (
    CachePlan,
    Entry,
    Message,
    ModelResponse,
    OnProviderEvent,
    Prompt,
    TextBlock,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
)

__all__ = ["DEFAULT_CONTEXT_WINDOW", "EMPTY_REPLY", "NOT_RUN", "Context", "ContextConfig"]

log = logging.getLogger(__name__)


class Context:
    """The messages state of one conversation, and everything that decides what is sent.

    ``log`` is where entries go: in memory by default, or a stored session (``StoredLog``), in which
    case the context is rebuilt from the session's entries and ``system``, ``pins`` and ``config``,
    when given, are recorded as changes on top of what the session holds.
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
        self.clock = clock
        """Seconds since the epoch, for cache lifetimes; a simulation passes its own (with its log's)."""
        self._log: Log = log if log is not None else MemoryLog(clock=clock)
        self._state = State.of(self._log.entries)
        self._tools = tuple(spec_of(t) for t in self._state.settings.get("tools") or ())
        self._previous_prompt: Prompt | None = None
        self._failed_at: int | None = None
        """Context size when the last summary call failed; the next try waits for growth."""
        fresh = not self._state.settings
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

    # -- the log ------------------------------------------------------------------------------

    @property
    def entries(self) -> Sequence[Entry]:
        """Every entry of the conversation, oldest first. Nothing in it is ever changed."""
        return self._log.entries

    @property
    def state(self) -> State:
        return self._state

    def append(self, batch: Sequence[NewEntry]) -> list[Entry]:
        """Append entries (committed first when the log is stored) and fold them into the state."""
        written = self._log.append(batch)
        for entry in written:
            self._state.apply(entry)
        return written

    @property
    def messages(self) -> tuple[Message, ...]:
        """The whole history of messages, including those a compaction has summarised."""
        return tuple(self._state.messages)

    @property
    def compactions(self) -> tuple[Compaction, ...]:
        return tuple(self._state.compactions)

    @property
    def ledger(self) -> TokenLedger:
        return self._state.ledger

    @property
    def pins(self) -> list[str]:
        """The pinned constraints, oldest first (a copy: change them with ``pin`` and ``unpin``)."""
        return list(self._state.pins)

    @property
    def tools(self) -> tuple[ToolSpec, ...]:
        """The tools the model is told about, in order (part of the cached prefix); kept in the log."""
        return self._tools

    @tools.setter
    def tools(self, specs: Iterable[ToolSpec]) -> None:
        self.configure(tools=[spec_dict(t) for t in specs])

    @property
    def system(self) -> str:
        return str(self._state.settings.get("system", ""))

    @system.setter
    def system(self, text: str) -> None:
        self.configure(system=text)

    @property
    def settings(self) -> dict[str, Any]:
        """Every setting recorded in the log (the engine's own and any a caller recorded)."""
        return dict(self._state.settings)

    @property
    def config(self) -> ContextConfig:
        return ContextConfig(**{k: v for k, v in self._state.settings.items() if k in CONFIG_KEYS})

    def configure(self, **settings: Any) -> None:
        """Record settings that differ from the log's (one ``config`` entry); engine settings are checked."""
        changed = {k: v for k, v in settings.items() if self._state.settings.get(k, _MISSING) != v}
        if not changed:
            return
        merged = {**self._state.settings, **changed}
        ContextConfig(**{k: v for k, v in merged.items() if k in CONFIG_KEYS})  # raises ConfigError
        self.append([new_entry("config", settings=changed)])
        if "tools" in changed:
            self._tools = tuple(spec_of(t) for t in merged["tools"])

    def add(self, message: Message) -> None:
        """Append a message. Blank text blocks are dropped (no API accepts them); a reply left with
        nothing is recorded as an explicit empty answer so the roles still alternate."""
        message = drop_empty_text(message)
        if message.role == "assistant":
            content = message.content or (TextBlock(EMPTY_REPLY),)
            self.append([new_entry("response", content=[b.to_dict() for b in content])])
            return
        batch = [new_entry("tool_result", block=b.to_dict()) for b in message.tool_results]
        others = [b.to_dict() for b in message.content if not isinstance(b, ToolResultBlock)]
        if others or not batch:
            batch.append(new_entry("user", content=others or [TextBlock("(empty)").to_dict()]))
        self.append(batch)

    def add_user(self, text: str) -> None:
        self.add(Message.user(text))

    def add_assistant(self, message: Message | ModelResponse) -> None:
        self.add(message.message if isinstance(message, ModelResponse) else message)

    def add_tool_results(self, results: Sequence[ToolResultBlock]) -> None:
        """Answer the newest assistant message's tool calls."""
        if results:
            self.add(Message("user", tuple(results)))

    def add_tool_result(self, result: ToolResultBlock) -> None:
        """One result, committed on its own: a crash after it never runs that tool again."""
        self.append([new_entry("tool_result", block=result.to_dict())])

    @property
    def pending_calls(self) -> list[ToolUseBlock]:
        """Tool calls of the newest response that have no result yet."""
        if not self._state.pending or not self._state.messages:
            return []
        last = next(m for m in reversed(self._state.messages) if m.role == "assistant")
        return [b for b in last.tool_uses if b.id in self._state.pending]

    def close_interrupted(self, reason: str = NOT_RUN) -> list[ToolUseBlock]:
        """Give every call still waiting for a result an error result saying it did not run; returns them."""
        waiting = self.pending_calls
        if waiting:
            self.append(
                [new_entry("tool_result", block=ToolResultBlock(c.id, reason, True).to_dict()) for c in waiting]
            )
        return waiting

    def pin(self, constraint: str) -> None:
        """A constraint that is part of every request from now on and survives every compaction."""
        if constraint.strip() and constraint not in self._state.pins:
            self.append([new_entry("pin", add=constraint)])

    def unpin(self, constraint: str | int) -> str:
        """Remove a pin, given as its text or its 1-based number in ``pins``; returns its text."""
        pins = self._state.pins
        if isinstance(constraint, int):
            if not 1 <= constraint <= len(pins):
                raise ConfigError(f"there is no pin {constraint}; there are {len(pins)}")
            constraint = pins[constraint - 1]
        if constraint not in pins:
            raise ConfigError(f"no pin reads {constraint!r}")
        self.append([new_entry("pin", remove=constraint)])
        return constraint

    def note(self, text: str) -> None:
        """A remark in the log for people (``sessions show``); the model never sees it."""
        self.append([new_entry("note", text=text)])

    # -- rendering ----------------------------------------------------------------------------

    def system_blocks(self) -> tuple[str, ...]:
        """Stable first: the base system prompt, then the pinned constraints."""
        return system_blocks(self._state)

    def window(self) -> list[Message]:
        """The messages the model sees now: the newest summary, then everything after its cut."""
        return window(self._state)

    def prompt(
        self,
        *,
        tool_choice: Literal["auto", "none"] = "auto",
        max_tokens: int | None = None,
        tool_grammar: Mapping[str, Mapping[str, Any]] | None = None,
        compaction: Compaction | None = None,
    ) -> Prompt:
        """What the model would see now (see ``state.render_prompt``)."""
        return render_prompt(
            self._state,
            tool_choice=tool_choice,
            max_tokens=max_tokens,
            tool_grammar=tool_grammar,
            compaction=compaction,
        )

    def render(self, provider: Provider, prompt: Prompt | None = None) -> dict[str, Any]:
        """The exact body ``provider`` would send now, checked; repaired if the check finds a fault."""
        return self.legal(provider, prompt)[1]

    def legal(
        self, provider: Provider, prompt: Prompt | None = None, *, sending: bool = True
    ) -> tuple[Prompt, dict[str, Any]]:
        """The prompt as it will really be sent (repaired if the check found a fault) and its body.
        ``sending=False``: only measured (``/context`` between turns ends on the answer), no warning.

        Raises IllegalRequestError when even the repaired body breaks the protocol.
        """
        prompt = prompt or self.prompt()
        body = provider.render(prompt)
        problems = _check(provider, body)
        if not problems:
            return prompt, body
        (log.warning if sending else log.debug)("repairing an illegal request: %s", "; ".join(problems))
        fixed = tuple(repair(prompt.messages))
        prompt = dataclasses.replace(prompt, messages=fixed, cache=plan_cache(fixed))
        body = provider.render(prompt)
        problems = _check(provider, body)
        if problems:
            raise IllegalRequestError(problems)
        return prompt, body

    # -- calling the model --------------------------------------------------------------------

    def complete(
        self,
        provider: Provider,
        *,
        tool_grammar: Mapping[str, Mapping[str, Any]] | None = None,
        stream: bool = False,
        on_event: OnProviderEvent | None = None,
    ) -> ModelResponse:
        """Render, check, send; the response joins the log and its usage the ledger."""
        return self.call(provider, self.prompt(tool_grammar=tool_grammar), "turn", stream=stream, on_event=on_event)

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

    def previous_request(self) -> Before | None:
        """The previous request, for the miss diagnosis (see ``calling.previous_request``)."""
        return calling.previous_request(self)

    def remember(self, prompt: Prompt) -> None:
        """Keep the newest request's prompt: the miss diagnosis quotes it (the log has its fingerprint)."""
        self._previous_prompt = prompt

    def remembered(self) -> Prompt | None:
        return self._previous_prompt

    # -- size and compaction ------------------------------------------------------------------

    def context_window(self, provider: Provider | None = None) -> int:
        window_size = provider.context_window() if provider is not None else None
        return self.config.context_window or window_size or DEFAULT_CONTEXT_WINDOW

    def threshold(self, provider: Provider | None = None) -> int:
        at = self.config.compact_at
        return int(at * self.context_window(provider)) if at <= 1 else int(at)

    def context_tokens(self, provider: Provider | None = None, prompt: Prompt | None = None) -> int:
        """Tokens the next request will carry: counted exactly where the provider can, else the last
        measured size plus an estimate of what was appended since, else an estimate of it all."""
        if provider is not None:
            prompt = prompt or self.prompt()
            with contextlib.suppress(IllegalRequestError):  # not sendable yet: count it as it stands
                prompt = self.legal(provider, prompt, sending=False)[0]
            exact = provider.count_tokens(prompt)
            if exact is not None:
                return exact
        if prompt is None:
            measured = self._state.measured
            if measured and measured[1] == self._state.epoch and measured[0] <= len(self._state.messages):
                count, _, size = measured
                return size + self.ledger.estimate(self._state.messages[count:])
        return self.ledger.estimate_prompt(prompt or self.prompt())

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

    def needs_compaction(self, provider: Provider | None = None) -> bool:
        return self.context_tokens(provider) > self.threshold(provider)

    def maybe_compact(self, provider: Provider) -> Compaction | None:
        """Compact with ``provider`` when the policy says so: past the threshold always; with the
        "cost" policy also as soon as the cache prices say the compaction pays for itself.

        After a failed summary, waits until the context has grown by a tenth before trying again,
        rather than paying for a failing call on every turn.
        """
        tokens = self.context_tokens(provider)
        over = tokens > self.threshold(provider)
        if not over and self.config.policy != "cost":
            return None
        if self._failed_at is not None and tokens < self._failed_at * 1.1:
            return None
        if not over and not shrink.worth_compacting(self, provider, tokens):
            return None
        try:
            # A summary must replace more than it costs, or every turn would compact again.
            min_tokens = 2 * self.config.summary_max_tokens
            keep = None if over else self.config.keep_turns
            compaction = self.compact(provider=provider, keep_turns=keep, min_tokens=min_tokens, tokens_before=tokens)
        except CompactionError:
            self._failed_at = tokens
            raise
        self._failed_at = None
        return compaction

    def maybe_clear(self, provider: Provider | None = None) -> int:
        """Replace tool output older than ``config.clear_after`` turns by stubs, in one batch, when it
        pays; returns how many results were cleared (the log keeps them all)."""
        return shrink.clear_old_output(self, provider)

    def summarizer(self, provider: Provider) -> Summarizer:
        """A summarizer that calls ``provider`` with this context's own system and tools first, so
        the summary call reads the same cached prefix as the turns around it."""

        def summarize(transcript: str) -> str:
            text = f"{SUMMARY_INSTRUCTIONS}\n\n<transcript>\n{transcript}\n</transcript>"
            prompt = Prompt(
                self.system_blocks(),
                self.tools,
                (Message.user(text),),
                CachePlan(),
                tool_choice="none",
                max_tokens=self.config.summary_max_tokens,
            )
            return self.call(provider, prompt, "compaction").message.text

        return summarize


_MISSING = object()


def _check(provider: Provider, body: dict[str, Any]) -> list[str]:
    return check_anthropic_body(body) if provider.wire == "anthropic" else check_openai_body(body)
