"""A spending limit: before each call, price the next request from the counted context, and stop
cleanly once 90% of the budget is spent or the next call would pass it.

The budget covers the whole session (every call in its log, earlier runs included), so resuming
with a higher budget is how a stopped task goes on. A model without a known price cannot be held
to a budget: that is refused up front rather than discovered after the money is gone.
"""

from __future__ import annotations

import math

from tiny_agent.agent.control import BudgetSpent
from tiny_agent.context.engine import Context
from tiny_agent.errors import ConfigError
from tiny_agent.providers.base import Provider
from tiny_agent.types import Usage

__all__ = ["STOP_SHARE", "Budget"]

STOP_SHARE = 0.9
"""Stop once this share of the budget is spent: the last call's cost is only an estimate."""
DEFAULT_OUTPUT = 512
"""Output tokens assumed for the next call before any call has shown what this task needs."""


class Budget:
    """Dollars a session may spend with one provider."""

    def __init__(self, usd: float, provider: Provider) -> None:
        profile = provider.profile
        if profile.prices is None:
            raise ConfigError(
                f"--budget-usd needs the model's price, and {profile.name} model {profile.model!r} has no known "
                "price; drop the budget or choose a priced model"
            )
        self.usd = usd
        self.provider = provider
        self.profile = profile

    def spent(self, context: Context) -> float:
        return context.ledger.total_cost_usd or 0.0

    def next_call(self, context: Context) -> float:
        """The likely cost of the next request: its counted size, the part the previous turn left in
        the cache read at the cache price, the rest written where writes are billed, and an output
        like the turns' so far (their thinking included: it is part of ``output_tokens``). The size
        counts earlier turns' reasoning as the provider does (``Context.context_tokens``)."""
        tokens = context.context_tokens(self.provider)
        turns = [c for c in context.ledger.calls if c.purpose == "turn"]
        cached = min(tokens, turns[-1].usage.input_tokens or 0) if turns else 0
        outputs = [c.usage.output_tokens for c in turns if c.usage.output_tokens is not None]
        # With thinking on, a first call may spend its whole thinking budget (billed as output).
        first = max(DEFAULT_OUTPUT, self.profile.thinking.budget or 0) if self.profile.thinks else DEFAULT_OUTPUT
        output = max(outputs) if outputs else first
        write = tokens - cached if self.profile.cache.writes_billed else 0
        return self.profile.price(Usage(tokens, output, cached, write)) or 0.0

    def suggested(self, context: Context) -> float:
        """A budget the next call fits in (it stops at ``STOP_SHARE`` spent), and at least twice this one:
        the hint after a budget stop, rounded up to the cent."""
        needed = (self.spent(context) + self.next_call(context)) / STOP_SHARE
        return math.ceil(max(needed, 2 * self.usd) * 100) / 100

    def check(self, context: Context) -> None:
        """Raise ``BudgetSpent`` (saying where the budget stands) when the next call must not be made."""
        spent = self.spent(context)
        upcoming = self.next_call(context)
        if spent < STOP_SHARE * self.usd and spent + upcoming <= self.usd:
            return
        raise BudgetSpent(
            f"${spent:.4f} of the ${self.usd:.2f} budget spent; the next call would cost about ${upcoming:.4f}"
        )
