"""The context engine: an append-only log, a render step, token accounting and compaction.

The log keeps every message ever added plus compaction markers; nothing is deleted. What the model
sees is a projection: the newest compaction's summary, then the messages after its cut. Every
render goes through the legality check for the provider's wire format before it is sent.

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
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from tiny_agent.context.cache import plan_cache
from tiny_agent.context.compaction import SUMMARY_INSTRUCTIONS, Compaction, Summarizer, WorkRecord, choose_cut, flatten
from tiny_agent.context.legality import check_anthropic_body, check_openai_body, drop_empty_text, repair
from tiny_agent.context.tokens import CallRecord, TokenLedger
from tiny_agent.errors import CompactionError, ConfigError, IllegalRequestError
from tiny_agent.providers.base import Provider
from tiny_agent.types import CachePlan, Message, ModelResponse, Prompt, TextBlock, ToolResultBlock, ToolSpec

__all__ = ["DEFAULT_CONTEXT_WINDOW", "Context", "ContextConfig"]

log = logging.getLogger(__name__)

DEFAULT_CONTEXT_WINDOW = 128_000
EMPTY_REPLY = "(the model returned an empty reply)"


@dataclass(frozen=True)
class ContextConfig:
    """Thresholds of the engine. Every field has a default a user can override."""

    compact_at: float = 0.8
    """When to compact: a fraction of the context window (0 < x <= 1) or an absolute token count (> 1)."""
    keep_turns: int = 4
    """How many of the newest model turns (a response plus its tool results) stay verbatim."""
    context_window: int | None = None
    """Override of the model's window in tokens; by default the provider says, else 128,000."""
    summary_max_tokens: int = 1024
    """Output cap of the summary call."""

    def __post_init__(self) -> None:
        if self.compact_at <= 0:
            raise ConfigError(f"compact_at must be a fraction in (0, 1] or a token count > 1, not {self.compact_at}")
        if self.keep_turns < 1:
            raise ConfigError(f"keep_turns must be at least 1, not {self.keep_turns}")
        if self.context_window is not None and self.context_window < 1:
            raise ConfigError(f"context_window must be positive, not {self.context_window}")


class Context:
    """The messages state of one conversation, and everything that decides what is sent."""

    def __init__(
        self,
        system: str = "",
        tools: Iterable[ToolSpec] = (),
        messages: Iterable[Message] = (),
        *,
        pins: Iterable[str] = (),
        config: ContextConfig | None = None,
    ) -> None:
        self.system = system
        self.tools: tuple[ToolSpec, ...] = tuple(tools)
        self.pins: list[str] = [p for p in pins if p.strip()]
        self.config = config or ContextConfig()
        self.ledger = TokenLedger()
        self._messages: list[Message] = list(messages)
        self._compactions: list[Compaction] = []
        self._measured: tuple[int, int, int] | None = None
        """(messages in the log, compactions, tokens) as of the last response that reported usage."""
        self._failed_at: int | None = None
        """Context size when the last summary call failed; the next try waits for growth."""

    # -- the log ------------------------------------------------------------------------------

    @property
    def messages(self) -> tuple[Message, ...]:
        """The whole log of messages, including those a compaction has summarised."""
        return tuple(self._messages)

    @property
    def compactions(self) -> tuple[Compaction, ...]:
        return tuple(self._compactions)

    def add(self, message: Message) -> None:
        """Append to the log. Blank text blocks are dropped (no API accepts them); a reply left
        with nothing is recorded as an explicit empty answer so the roles still alternate."""
        message = drop_empty_text(message)
        if not message.content:
            message = Message(message.role, (TextBlock(EMPTY_REPLY if message.role == "assistant" else "(empty)"),))
        if message.role == "user" and self._messages and self._messages[-1].role == "user":
            # New input after unanswered results (a run stopped at its step limit, then a new task):
            # one user turn, results first, so the log stays legal without a repair.
            previous = self._messages.pop()
            message = Message("user", previous.content + message.content)
            self._measured = None
        self._messages.append(message)

    def add_user(self, text: str) -> None:
        self.add(Message.user(text))

    def add_assistant(self, message: Message | ModelResponse) -> None:
        self.add(message.message if isinstance(message, ModelResponse) else message)

    def add_tool_results(self, results: Sequence[ToolResultBlock]) -> None:
        """Answer the newest assistant message's tool calls."""
        self.add(Message("user", tuple(results)))

    def pin(self, constraint: str) -> None:
        """A constraint that is part of every request from now on and survives every compaction."""
        if constraint.strip() and constraint not in self.pins:
            self.pins.append(constraint)

    # -- rendering ----------------------------------------------------------------------------

    def system_blocks(self) -> tuple[str, ...]:
        """Stable first: the base system prompt, then the pinned constraints."""
        blocks = [self.system] if self.system else []
        if self.pins:
            lines = "\n".join(f"- {p}" for p in self.pins)
            blocks.append(f"<constraints>\nThe user set these constraints. They always apply:\n{lines}\n</constraints>")
        return tuple(blocks)

    def window(self) -> list[Message]:
        """The messages the model sees now: the newest summary, then everything after its cut."""
        if not self._compactions:
            return list(self._messages)
        last = self._compactions[-1]
        kept = list(self._messages[last.cut :])
        summary = TextBlock(last.text())
        if kept and kept[0].role == "user":
            kept[0] = Message("user", (summary, *kept[0].content))
        else:
            kept.insert(0, Message("user", (summary,)))
        return kept

    def prompt(
        self,
        *,
        tool_choice: Literal["auto", "none"] = "auto",
        max_tokens: int | None = None,
        tool_grammar: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> Prompt:
        messages = tuple(self.window())
        plan = plan_cache(messages)
        return Prompt(self.system_blocks(), self.tools, messages, plan, tool_choice, max_tokens, tool_grammar or {})

    def render(self, provider: Provider, prompt: Prompt | None = None) -> dict[str, Any]:
        """The exact body ``provider`` would send now, checked; repaired if the check finds a fault."""
        return self.legal(provider, prompt)[1]

    def legal(self, provider: Provider, prompt: Prompt | None = None) -> tuple[Prompt, dict[str, Any]]:
        """The prompt as it will really be sent (repaired if the check found a fault) and its body.

        Raises IllegalRequestError when even the repaired body breaks the protocol.
        """
        prompt = prompt or self.prompt()
        body = provider.render(prompt)
        problems = _check(provider, body)
        if not problems:
            return prompt, body
        log.warning("repairing an illegal request: %s", "; ".join(problems))
        fixed = tuple(repair(prompt.messages))
        prompt = dataclasses.replace(prompt, messages=fixed, cache=plan_cache(fixed))
        body = provider.render(prompt)
        problems = _check(provider, body)
        if problems:
            raise IllegalRequestError(problems)
        return prompt, body

    # -- calling the model --------------------------------------------------------------------

    def complete(
        self, provider: Provider, *, tool_grammar: Mapping[str, Mapping[str, Any]] | None = None
    ) -> ModelResponse:
        """Render, check, send; the response joins the log and its usage the ledger."""
        prompt = self.prompt(tool_grammar=tool_grammar)
        response = self._call(provider, prompt, purpose="turn")
        self.add(response.message)
        usage = response.usage
        if usage.input_tokens is not None:
            size = usage.input_tokens + (usage.output_tokens or 0)
            self._measured = (len(self._messages), len(self._compactions), size)
        return response

    def _call(self, provider: Provider, prompt: Prompt, *, purpose: str) -> ModelResponse:
        prompt, body = self.legal(provider, prompt)
        started = time.monotonic()
        response = provider.send(body)
        seconds = time.monotonic() - started
        price = provider.price(response.usage)
        call = CallRecord(response.usage, price, seconds, response.model, response.prefill_ms, purpose)
        self.ledger.record(call, prompt)
        return response

    # -- size and compaction ------------------------------------------------------------------

    def context_window(self, provider: Provider | None = None) -> int:
        window = provider.context_window() if provider is not None else None
        return self.config.context_window or window or DEFAULT_CONTEXT_WINDOW

    def threshold(self, provider: Provider | None = None) -> int:
        at = self.config.compact_at
        return int(at * self.context_window(provider)) if at <= 1 else int(at)

    def context_tokens(self, provider: Provider | None = None) -> int:
        """Tokens the next request will carry: counted exactly where the provider can, else the last
        measured size plus an estimate of what was appended since, else an estimate of it all."""
        if provider is not None:
            prompt = self.prompt()
            with contextlib.suppress(IllegalRequestError):  # not sendable yet: count it as it stands
                prompt = self.legal(provider, prompt)[0]
            exact = provider.count_tokens(prompt)
            if exact is not None:
                return exact
        if self._measured and self._measured[1] == len(self._compactions) and self._measured[0] <= len(self._messages):
            count, _, size = self._measured
            return size + self.ledger.estimate(self._messages[count:])
        return self.ledger.estimate_prompt(self.prompt())

    def compact(
        self,
        summarizer: Summarizer,
        *,
        keep_turns: int | None = None,
        provider: Provider | None = None,
        min_tokens: int = 0,
        tokens_before: int | None = None,
    ) -> Compaction | None:
        """Replace all but the newest turns by a summary. None when there is nothing worth compacting.

        Without ``keep_turns``, keeps up to ``config.keep_turns`` turns, fewer if the kept turns
        alone would leave less than half the threshold free. Does nothing if the part to summarise
        is estimated below ``min_tokens``. The log keeps every message; only the window changes.
        If ``summarizer`` fails or returns nothing, CompactionError is raised and the history is
        exactly as it was.
        """
        base = self._compactions[-1].cut if self._compactions else 0
        recent = self._messages[base:]
        cut = choose_cut(recent, keep_turns) if keep_turns else self._fitting_cut(recent, provider)
        if cut is None or self.ledger.estimate(recent[:cut]) < min_tokens:
            return None
        before = tokens_before if tokens_before is not None else self.context_tokens(provider)
        transcript = flatten(recent[:cut])
        if self._compactions:
            transcript = f"{self._compactions[-1].text()}\n\n{transcript}"
        try:
            prose = summarizer(transcript)
        except Exception as exc:
            raise CompactionError(f"the summary call failed, history left unchanged: {exc}") from exc
        if not prose or not prose.strip():
            raise CompactionError("the summary call returned no text, history left unchanged")
        record = WorkRecord.from_messages(self._messages[: base + cut], self.pins).render()
        self._compactions.append(Compaction(base + cut, prose, record, before))
        after = self.context_tokens(provider)
        compaction = self._compactions[-1] = dataclasses.replace(self._compactions[-1], tokens_after=after)
        if after >= before:
            self._compactions.pop()
            raise CompactionError(
                f"the summary ({after:,} tokens with the kept turns) is not smaller than what it replaces "
                f"({before:,}); history left unchanged"
            )
        return compaction

    def _fitting_cut(self, recent: Sequence[Message], provider: Provider | None) -> int | None:
        """The cut keeping the most turns (up to ``keep_turns``) whose kept part fits in half the threshold."""
        fixed = self.ledger.estimate_prompt(Prompt(self.system_blocks(), self.tools, ()))
        budget = self.threshold(provider) // 2 - fixed - self.config.summary_max_tokens
        cut = None
        for keep in range(self.config.keep_turns, 0, -1):
            cut = choose_cut(recent, keep)
            if cut is not None and self.ledger.estimate(recent[cut:]) <= budget:
                return cut
        return cut  # even one turn is over budget: keep just that one

    def needs_compaction(self, provider: Provider | None = None) -> bool:
        return self.context_tokens(provider) > self.threshold(provider)

    def maybe_compact(self, provider: Provider) -> Compaction | None:
        """Compact with ``provider`` as the summarizer if the context passed the threshold.

        After a failed summary, waits until the context has grown by a tenth before trying again,
        rather than paying for a failing call on every turn.
        """
        tokens = self.context_tokens(provider)
        if tokens <= self.threshold(provider):
            return None
        if self._failed_at is not None and tokens < self._failed_at * 1.1:
            return None
        try:
            # A summary must replace more than it costs, or every turn would compact again.
            min_tokens = 2 * self.config.summary_max_tokens
            summarizer = self.summarizer(provider)
            compaction = self.compact(summarizer, provider=provider, min_tokens=min_tokens, tokens_before=tokens)
        except CompactionError:
            self._failed_at = tokens
            raise
        self._failed_at = None
        return compaction

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
            return self._call(provider, prompt, purpose="compaction").message.text

        return summarize


def _check(provider: Provider, body: dict[str, Any]) -> list[str]:
    return check_anthropic_body(body) if provider.wire == "anthropic" else check_openai_body(body)
