"""The agent loop: compact if needed -> complete -> run the tools -> repeat until the model stops.

The loop owns no state of its own: the conversation lives in the Context (and, through it, in a
session store), the tools in the Toolbox. It reports what happens through events, so the CLI can
print them and a library user can log, meter, stream or stop on them.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass

from tiny_agent.agent.budget import Budget
from tiny_agent.agent.control import (
    CutTwice,
    Illegal,
    ModelCallFailed,
    Repeating,
    StepLimit,
    StopReason,
    StopRun,
    TooLarge,
)
from tiny_agent.agent.events import (
    CallEvent,
    ClearEvent,
    CompactionEvent,
    CompactionFailedEvent,
    Event,
    RunResult,
    ToolEvent,
    TurnEvent,
    call_events,
)
from tiny_agent.context.engine import Context, ContextConfig
from tiny_agent.context.entries import RunStop
from tiny_agent.context.tokens import CallRecord
from tiny_agent.errors import (
    CompactionError,
    ConfigError,
    IllegalRequestError,
    ProviderError,
    RequestTooLarge,
    TinyAgentError,
)
from tiny_agent.providers.base import Provider
from tiny_agent.providers.reasoning_shown import reasoning_text
from tiny_agent.tools.toolbox import Toolbox
from tiny_agent.types import ModelResponse, ProviderEvent, ToolResultBlock, ToolUseBlock

__all__ = [
    "CUT_CALL",
    "DEFAULT_SYSTEM",
    "INTERRUPTED_BY_USER",
    "Agent",
    "AgentConfig",
    "CallEvent",
    "ClearEvent",
    "CompactionEvent",
    "CompactionFailedEvent",
    "Event",
    "RunResult",
    "StopReason",
    "ToolEvent",
    "TurnEvent",
]

DEFAULT_SYSTEM = (
    "You are tiny-agent, a careful assistant working inside one folder (the workspace). "
    "Use the tools to look before you answer: list_dir to see what is there, read_file to read, "
    "write_file only when the user asks for a change. Paths are relative to the workspace. "
    "When you are done, answer in plain text without calling a tool."
)
"""Deliberately free of anything that changes between runs (no date, no time, no absolute path):
a prefix cache only hits on identical bytes."""

CUT_CALL = (
    "not run: this call was cut off at the output limit (max_tokens) before its arguments were complete. "
    "Nothing was changed. Make the call again with less content (write a big file in several smaller files)."
)
INTERRUPTED_BY_USER = "[not run: the user interrupted the turn before this tool call ran]"


@dataclass(frozen=True)
class AgentConfig:
    """Limits of one run."""

    max_steps: int = 30
    """Model calls allowed before the run stops with ``step_limit``."""
    max_repeats: int = 3
    """Stop with ``repeating`` when the model makes the same failing calls this many turns in a row."""
    system: str = DEFAULT_SYSTEM
    """The system prompt of a new conversation. Keep it stable: any change misses the prompt cache."""
    stream: bool = False
    """Stream replies: ``on_event`` gets each ``TextDelta`` as it arrives."""
    budget_usd: float | None = None
    """Stop cleanly before a call once 90% of this many dollars is spent (or the next call would pass it)."""

    def __post_init__(self) -> None:
        if self.max_steps < 1:
            raise ConfigError(f"max_steps must be at least 1, not {self.max_steps}")
        if self.max_repeats < 2:
            raise ConfigError(f"max_repeats must be at least 2, not {self.max_repeats}")
        if self.budget_usd is not None and not self.budget_usd > 0:
            raise ConfigError(f"the budget must be a positive number of dollars, not {self.budget_usd}")


class Agent:
    """Runs tasks with a provider and a toolbox over a context (in memory, or a stored session's)."""

    def __init__(
        self,
        provider: Provider,
        toolbox: Toolbox,
        *,
        config: AgentConfig | None = None,
        context: Context | None = None,
        context_config: ContextConfig | None = None,
        pins: tuple[str, ...] | list[str] = (),
        on_event: Callable[[Event], None] | None = None,
    ) -> None:
        self.provider = provider
        self.toolbox = toolbox
        self.config = config or AgentConfig()
        self.context = context or Context(self.config.system, toolbox.specs, config=context_config)
        if context is not None and not context.system and not context.messages:
            # A new session from the library: the agent's own system prompt, like a new context gets.
            context.system = self.config.system
        for pin in pins:
            self.context.pin(pin)
        self.on_event = on_event
        self.idle: Callable[[], contextlib.AbstractContextManager[None]] = contextlib.nullcontext
        """What the loop wraps around a tool run: ``Keepalive.idle`` when a keepalive is on."""
        budget = self.config.budget_usd
        self.budget = Budget(budget, provider) if budget is not None else None

    def run(self, task: str) -> RunResult:
        """Add ``task`` as user input and loop until the model answers without a tool call.

        Ctrl-C (KeyboardInterrupt) ends the run with stop "interrupted": the reply in flight is
        dropped, calls that had not run get an "interrupted" result, and the context stays legal.
        How the run ended is recorded in the log (a ``stop`` entry).
        """
        result = RunResult("step_limit", "", 0)
        try:
            try:
                self.context.check_task(self.provider, task)  # an over-size task never joins the log
            except RequestTooLarge as exc:
                raise TooLarge(str(exc), error=exc) from exc
            if self.context.unanswered() != task:  # asked again after no reply came: in the log once
                self.context.add_user(task)
            self._loop(result)
        except StopRun as stop:
            result.stop, result.detail, result.error = stop.stop, stop.detail, stop.error
        except KeyboardInterrupt:
            result.stop = "interrupted"
            waiting = self.context.close_interrupted(INTERRUPTED_BY_USER)
            if waiting:
                result.detail = f"{len(waiting)} tool call(s) not run"
        self._record_stop(result)
        return result

    def _loop(self, result: RunResult) -> None:
        """Steps until the model answers (``result`` filled in); every other ending raises ``StopRun``."""
        failures: list[str] = []
        cut_turns = 0
        for step in range(1, self.config.max_steps + 1):
            result.steps = step
            try:
                self._maybe_compact(result)
            except ProviderError as exc:  # counting the window on a local server that went away
                raise ModelCallFailed(error=exc) from exc
            if self.budget is not None:
                self.budget.check(self.context)
            response = self._complete()
            tokens = self.context.context_tokens()
            thought = reasoning_text(response.message)
            self._emit(result, TurnEvent(step, self.context.ledger.calls[-1], tokens, response.stop_reason, thought))
            calls = response.message.tool_uses
            if calls and response.stop_reason == "max_tokens":
                # A call cut at the output limit has incomplete arguments: running it could write half a file.
                for call in calls:
                    self._record_tool(result, step, call, ToolResultBlock(call.id, CUT_CALL, is_error=True), 0.0)
                cut_turns += 1
                if cut_turns >= 2:
                    raise CutTwice()
                continue
            cut_turns = 0
            if not calls:
                self._answer(result, response)
                return
            results = [self._run_tool(result, step, call) for call in calls]
            failures = _repeated_failures(failures, calls, results)
            if len(failures) >= self.config.max_repeats:
                raise Repeating()
        raise StepLimit()

    def _complete(self) -> ModelResponse:
        profile = self.provider.profile
        grammar = self.toolbox.grammar() if profile.tool_grammar else None
        terms = self.toolbox.path_terms() if profile.tool_grammar else None
        try:
            return self.context.complete(
                self.provider,
                tool_grammar=grammar,
                stream=self.config.stream,
                on_event=self._provider_event,
                path_terms=terms,
            )
        except ProviderError as exc:
            raise ModelCallFailed(error=exc) from exc
        except IllegalRequestError as exc:
            raise Illegal(error=exc) from exc
        except RequestTooLarge as exc:
            raise TooLarge(str(exc), error=exc) from exc

    def _record_stop(self, result: RunResult) -> None:
        with contextlib.suppress(TinyAgentError):  # the store failed: the run's own error says so
            detail = result.detail or (str(result.error) if result.error else "")
            self.context.append([RunStop(result.stop, result.steps, detail)])

    def _answer(self, result: RunResult, response: ModelResponse) -> None:
        result.answer = response.message.text
        if response.stop_reason == "refusal":
            result.stop = "refused"
        elif response.stop_reason == "max_tokens":  # before "empty": the limit is why there is no text
            result.stop = "max_tokens"
            if not result.answer.strip() and reasoning_text(response.message):
                result.detail = "the model was still thinking: no answer text yet"
        elif not result.answer.strip():
            result.stop = "empty"
        else:
            result.stop = "done"

    def _run_tool(self, result: RunResult, step: int, call: ToolUseBlock) -> ToolResultBlock:
        started = time.monotonic()
        with self.idle():  # a tool that runs for minutes: the keepalive may ping meanwhile
            outcome = self.toolbox.run(call)
        self._record_tool(result, step, call, outcome, time.monotonic() - started)
        return outcome

    def _record_tool(
        self, result: RunResult, step: int, call: ToolUseBlock, outcome: ToolResultBlock, seconds: float
    ) -> None:
        self.context.add_tool_result(outcome)  # committed at once: a crash after it never re-runs the tool
        self._emit(result, ToolEvent(step, call, outcome, seconds, self.toolbox.source(call.name)))

    def _maybe_compact(self, result: RunResult) -> None:
        before = self.context.context_tokens()
        cleared = self.context.maybe_clear(self.provider)
        if cleared:
            self._emit(result, ClearEvent(cleared, before, self.context.context_tokens()))
        calls_before = len(self.context.ledger.calls)
        try:
            compaction = self.context.maybe_compact(self.provider)
        except CompactionError as exc:
            self._emit_calls(result, calls_before)
            self._emit(result, CompactionFailedEvent(exc))
            return
        except BaseException:
            self._emit_calls(result, calls_before)  # a Ctrl-C after a billed attempt: it still gets its line
            raise
        calls = self._emit_calls(result, calls_before)
        if compaction is not None:
            self._emit(result, CompactionEvent(compaction, calls))

    def _emit_calls(self, result: RunResult, since: int) -> tuple[CallRecord, ...]:
        """A ``CallEvent`` for each call the ledger recorded since index ``since``."""
        calls = tuple(self.context.ledger.calls[since:])
        for event in call_events(calls):
            self._emit(result, event)
        return calls

    def _provider_event(self, event: ProviderEvent) -> None:
        if self.on_event is not None:
            self.on_event(event)

    def _emit(self, result: RunResult, event: Event) -> None:
        result.events.append(event)
        if self.on_event is not None:
            self.on_event(event)


def _repeated_failures(streak: list[str], calls: list[ToolUseBlock], results: list[ToolResultBlock]) -> list[str]:
    """The run of identical, all-failing turns so far: the same calls with the same arguments."""
    if not all(r.is_error for r in results):
        return []
    key = json.dumps([[c.name, dict(c.input)] for c in calls], sort_keys=True, default=str)
    return [*streak, key] if not streak or streak[-1] == key else [key]
