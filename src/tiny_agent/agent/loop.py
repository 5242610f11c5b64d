"""The agent loop: compact if needed -> complete -> run the tools -> repeat until the model stops.

The loop owns no state of its own: the conversation lives in the Context, the tools in the
Toolbox. It reports what happens through events, so the CLI can print them and a library user can
log, meter or stop on them.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from tiny_agent.agent.tools import Toolbox
from tiny_agent.context.compaction import Compaction
from tiny_agent.context.engine import Context, ContextConfig
from tiny_agent.context.tokens import CallRecord
from tiny_agent.errors import CompactionError, ConfigError, IllegalRequestError, ProviderError, TinyAgentError
from tiny_agent.providers.base import Provider
from tiny_agent.types import ToolResultBlock, ToolUseBlock

__all__ = [
    "DEFAULT_SYSTEM",
    "Agent",
    "AgentConfig",
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

StopReason = Literal["done", "max_tokens", "step_limit", "repeating", "provider_error", "illegal_request"]


@dataclass(frozen=True)
class AgentConfig:
    """Limits of one run."""

    max_steps: int = 30
    """Model calls allowed before the run stops with ``step_limit``."""
    max_repeats: int = 3
    """Stop with ``repeating`` when the model makes the same failing calls this many turns in a row."""
    system: str = DEFAULT_SYSTEM
    """The system prompt. Keep it stable: any change misses the prompt cache."""

    def __post_init__(self) -> None:
        if self.max_steps < 1:
            raise ConfigError(f"max_steps must be at least 1, not {self.max_steps}")
        if self.max_repeats < 2:
            raise ConfigError(f"max_repeats must be at least 2, not {self.max_repeats}")


@dataclass(frozen=True)
class TurnEvent:
    """One model call finished."""

    step: int
    call: CallRecord
    context_tokens: int
    stop_reason: str


@dataclass(frozen=True)
class ToolEvent:
    """One tool ran (or refused)."""

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


Event = TurnEvent | ToolEvent | CompactionEvent | CompactionFailedEvent


@dataclass
class RunResult:
    """How a run ended."""

    stop: StopReason
    answer: str
    steps: int
    error: TinyAgentError | None = None
    events: list[Event] = field(default_factory=list)

    @property
    def message(self) -> str:
        """One line a person can read about why the run stopped."""
        if self.stop == "done":
            return f"done in {self.steps} step(s)"
        if self.stop == "step_limit":
            return f"stopped: reached the step limit ({self.steps} steps); raise --max-steps to let it go on"
        if self.stop == "repeating":
            return f"stopped at step {self.steps}: the model kept repeating the same failing call"
        if self.stop == "max_tokens":
            return f"stopped at step {self.steps}: the reply was cut at the output limit; raise --max-tokens"
        return f"stopped by {self.stop.replace('_', ' ')} at step {self.steps}: {self.error}"


class Agent:
    """Runs a task with a provider and a toolbox over a context."""

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
        for pin in pins:
            self.context.pin(pin)
        self.on_event = on_event

    def run(self, task: str) -> RunResult:
        """Add ``task`` as user input and loop until the model answers without a tool call."""
        self.context.add_user(task)
        result = RunResult("step_limit", "", 0)
        failures: list[str] = []
        for step in range(1, self.config.max_steps + 1):
            result.steps = step
            try:
                self._maybe_compact(result)
                grammar = self.toolbox.grammar() if getattr(self.provider, "wants_tool_grammar", False) else None
                response = self.context.complete(self.provider, tool_grammar=grammar)
            except ProviderError as exc:
                return self._stop(result, "provider_error", exc)
            except IllegalRequestError as exc:
                return self._stop(result, "illegal_request", exc)
            tokens = self.context.context_tokens()
            self._emit(result, TurnEvent(step, self.context.ledger.calls[-1], tokens, response.stop_reason))
            calls = response.message.tool_uses
            if not calls:
                result.answer = response.message.text
                result.stop = "max_tokens" if response.stop_reason == "max_tokens" else "done"
                return result
            results = [self._run_tool(result, step, call) for call in calls]
            self.context.add_tool_results(results)
            failures = _repeated_failures(failures, calls, results)
            if len(failures) >= self.config.max_repeats:
                result.stop = "repeating"
                return result
        return result

    def _run_tool(self, result: RunResult, step: int, call: ToolUseBlock) -> ToolResultBlock:
        started = time.monotonic()
        outcome = self.toolbox.run(call)
        self._emit(result, ToolEvent(step, call, outcome, time.monotonic() - started))
        return outcome

    def _maybe_compact(self, result: RunResult) -> None:
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
