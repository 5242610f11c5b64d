"""The agent loop: compact if needed -> complete -> run the tools -> repeat until the model stops.

The loop owns no state of its own: the conversation lives in the Context (and, through it, in a
session store), the tools in the Toolbox. It reports what happens through events, so the CLI can
print them and a library user can log, meter, stream or stop on them.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from tiny_agent.agent.budget import Budget
from tiny_agent.agent.tools import Toolbox
from tiny_agent.context.compaction import Compaction
from tiny_agent.context.engine import Context, ContextConfig
from tiny_agent.context.log import new_entry
from tiny_agent.context.tokens import CallRecord
from tiny_agent.errors import CompactionError, ConfigError, IllegalRequestError, ProviderError, TinyAgentError
from tiny_agent.providers.base import Provider
from tiny_agent.types import ModelResponse, ProviderEvent, RetryNotice, TextDelta, ToolResultBlock, ToolUseBlock

__all__ = [
    "CUT_CALL",
    "DEFAULT_SYSTEM",
    "INTERRUPTED_BY_USER",
    "Agent",
    "AgentConfig",
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

StopReason = Literal[
    "done",
    "max_tokens",
    "step_limit",
    "repeating",
    "provider_error",
    "illegal_request",
    "refused",
    "empty",
    "budget",
    "interrupted",
]


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


@dataclass(frozen=True)
class TurnEvent:
    """One model call finished."""

    step: int
    call: CallRecord
    context_tokens: int
    stop_reason: str


@dataclass(frozen=True)
class ToolEvent:
    """One tool ran (or refused, or was not run)."""

    step: int
    call: ToolUseBlock
    result: ToolResultBlock
    seconds: float


@dataclass(frozen=True)
class CompactionEvent:
    """A compaction happened; its sizes before and after are on ``compaction``."""

    compaction: Compaction
    call: CallRecord | None
    """The summary call, if the summary came from the provider."""


@dataclass(frozen=True)
class CompactionFailedEvent:
    error: CompactionError


@dataclass(frozen=True)
class ClearEvent:
    """Old tool output was replaced by stubs (the log keeps it)."""

    results: int
    tokens_before: int
    tokens_after: int


Event = TurnEvent | ToolEvent | CompactionEvent | CompactionFailedEvent | ClearEvent | TextDelta | RetryNotice


@dataclass
class RunResult:
    """How a run ended."""

    stop: StopReason
    answer: str
    steps: int
    error: TinyAgentError | None = None
    events: list[Event] = field(default_factory=list)
    detail: str = ""
    """More about the stop, for people (what the budget stood at, which calls were interrupted)."""

    @property
    def message(self) -> str:
        """One line a person can read about why the run stopped."""
        messages = {
            "done": f"done in {self.steps} step(s)",
            "step_limit": f"stopped: reached the step limit ({self.steps} steps); raise --max-steps to let it go on",
            "repeating": f"stopped at step {self.steps}: the model kept repeating the same failing call",
            "max_tokens": f"stopped at step {self.steps}: the reply was cut at the output limit; raise --max-tokens",
            "refused": f"stopped at step {self.steps}: the model refused to answer",
            "empty": f"stopped at step {self.steps}: the model returned an empty reply",
            "budget": f"stopped before step {self.steps}: the budget is spent",
            "interrupted": f"interrupted at step {self.steps}",
        }
        line = messages.get(self.stop) or f"stopped by {self.stop.replace('_', ' ')} at step {self.steps}: {self.error}"
        return f"{line} ({self.detail})" if self.detail else line


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
        self.budget = Budget(self.config.budget_usd, provider) if self.config.budget_usd is not None else None

    def run(self, task: str) -> RunResult:
        """Add ``task`` as user input and loop until the model answers without a tool call.

        Ctrl-C (KeyboardInterrupt) ends the run with stop "interrupted": the reply in flight is
        dropped, calls that had not run get an "interrupted" result, and the context stays legal.
        """
        result = RunResult("step_limit", "", 0)
        try:
            self.context.add_user(task)
            self._loop(result)
        except KeyboardInterrupt:
            result.stop = "interrupted"
            waiting = self.context.close_interrupted(INTERRUPTED_BY_USER)
            if waiting:
                result.detail = f"{len(waiting)} tool call(s) not run"
        # Every ending is on the record, so budget stops and the rest can be counted afterwards.
        detail = result.detail or (str(result.error) if result.error else "")
        self.context.append([new_entry("stop", reason=result.stop, steps=result.steps, detail=detail)])
        return result

    def _loop(self, result: RunResult) -> RunResult:
        failures: list[str] = []
        cut_turns = 0
        for step in range(1, self.config.max_steps + 1):
            result.steps = step
            try:
                self._maybe_compact(result)
                if self.budget is not None and self.budget.exhausted(self.context, result):
                    return result
                response = self._complete()
            except ProviderError as exc:
                return self._stop(result, "provider_error", exc)
            except IllegalRequestError as exc:
                return self._stop(result, "illegal_request", exc)
            tokens = self.context.context_tokens()
            self._emit(result, TurnEvent(step, self.context.ledger.calls[-1], tokens, response.stop_reason))
            calls = response.message.tool_uses
            if calls and response.stop_reason == "max_tokens":
                # A call cut at the output limit has incomplete arguments: running it could write half a file.
                for call in calls:
                    self._record_tool(result, step, call, ToolResultBlock(call.id, CUT_CALL, is_error=True), 0.0)
                cut_turns += 1
                if cut_turns >= 2:
                    result.stop = "max_tokens"
                    return result
                continue
            cut_turns = 0
            if not calls:
                return self._answer(result, response)
            results = [self._run_tool(result, step, call) for call in calls]
            failures = _repeated_failures(failures, calls, results)
            if len(failures) >= self.config.max_repeats:
                result.stop = "repeating"
                return result
        return result

    def _complete(self) -> ModelResponse:
        grammar = self.toolbox.grammar() if getattr(self.provider, "wants_tool_grammar", False) else None
        return self.context.complete(
            self.provider, tool_grammar=grammar, stream=self.config.stream, on_event=self._provider_event
        )

    def _answer(self, result: RunResult, response: ModelResponse) -> RunResult:
        result.answer = response.message.text
        if response.stop_reason == "refusal":
            result.stop = "refused"
        elif not result.answer.strip():
            result.stop = "empty"
        elif response.stop_reason == "max_tokens":
            result.stop = "max_tokens"
        else:
            result.stop = "done"
        return result

    def _run_tool(self, result: RunResult, step: int, call: ToolUseBlock) -> ToolResultBlock:
        started = time.monotonic()
        outcome = self.toolbox.run(call)
        self._record_tool(result, step, call, outcome, time.monotonic() - started)
        return outcome

    def _record_tool(
        self, result: RunResult, step: int, call: ToolUseBlock, outcome: ToolResultBlock, seconds: float
    ) -> None:
        self.context.add_tool_result(outcome)  # committed at once: a crash after it never re-runs the tool
        self._emit(result, ToolEvent(step, call, outcome, seconds))

    def _maybe_compact(self, result: RunResult) -> None:
        before = self.context.context_tokens()
        cleared = self.context.maybe_clear(self.provider)
        if cleared:
            self._emit(result, ClearEvent(cleared, before, self.context.context_tokens()))
        calls_before = len(self.context.ledger.calls)
        try:
            compaction = self.context.maybe_compact(self.provider)
        except CompactionError as exc:
            self._emit(result, CompactionFailedEvent(exc))
            return
        if compaction is not None:
            calls = self.context.ledger.calls[calls_before:]
            self._emit(result, CompactionEvent(compaction, calls[-1] if calls else None))

    def _stop(self, result: RunResult, stop: StopReason, error: TinyAgentError) -> RunResult:
        result.stop, result.error = stop, error
        return result

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
