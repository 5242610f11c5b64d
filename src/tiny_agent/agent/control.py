"""How a run stops early, as exceptions: raised where the reason is found, turned into the result once.

As mini-swe-agent raises ``LimitsExceeded`` from inside a step, the budget, the step limit, a
model that keeps repeating a failing call and a reply cut twice at the output limit each raise a
``StopRun``; ``Agent.run`` catches it and builds the ``RunResult`` in one place.
"""

from __future__ import annotations

from typing import Literal

from tiny_agent.errors import TinyAgentError

__all__ = [
    "BudgetSpent",
    "CutTwice",
    "Illegal",
    "ModelCallFailed",
    "Repeating",
    "StepLimit",
    "StopReason",
    "StopRun",
    "TooLarge",
]

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
    "too_large",
]


class StopRun(Exception):
    """The run stops here; ``stop`` says why, ``detail`` says more for people."""

    stop: StopReason = "done"

    def __init__(self, detail: str = "", error: TinyAgentError | None = None) -> None:
        super().__init__(detail or self.stop)
        self.detail = detail
        self.error = error


class BudgetSpent(StopRun):
    stop = "budget"


class StepLimit(StopRun):
    stop = "step_limit"


class Repeating(StopRun):
    stop = "repeating"


class CutTwice(StopRun):
    """Two replies in a row cut at the output limit while calling tools."""

    stop = "max_tokens"


class ModelCallFailed(StopRun):
    """The model call failed at run time (``error`` says how)."""

    stop = "provider_error"


class Illegal(StopRun):
    """A request broke the wire's rules and the repair could not fix it."""

    stop = "illegal_request"


class TooLarge(StopRun):
    """The next request would not fit in the window with its reply; it was not sent (``context.size_guard``)."""

    stop = "too_large"
