"""What a provider is and can do, declared: the one thing the engine reads about a model endpoint.

As pydantic-ai gives every model a ``ModelProfile``, each provider here declares a
``ProviderProfile``: its wire format, its cache rules (where breakpoints may go and how many, the
lookback, the minimum cacheable length of its model, the lifetimes and what a write costs), its
prices per token class, the request check of its wire, and the capabilities the engine adapts to.
context/ and agent/ read only this: they never ask a provider object what it is by its name, its
attributes or the bytes of a body it rendered.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from tiny_agent.providers.cache_rules import DEFAULT_TTL, CacheRules, Ttl
from tiny_agent.providers.check import WireCheck, count_marks
from tiny_agent.providers.pricing import TokenPrices, context_window_of, price_usd, token_prices
from tiny_agent.providers.reasoning_check import reasoning_problems, sent_thinking
from tiny_agent.providers.thinking import (
    NO_THINKING,
    OFF,
    EarlierReasoning,
    Thinking,
    ThinkingCaps,
    is_on,
)
from tiny_agent.providers.thinking_caps import thinking_caps
from tiny_agent.providers.wire import WireFormat, rules_of, wire_of
from tiny_agent.types import Usage, Wire

__all__ = ["PRICING_IDS", "ProviderProfile", "profile_for"]

PRICING_IDS: Mapping[str, str] = {
    "anthropic": "anthropic",
    "openai": "openai",
    "deepseek": "deepseek",
    "moonshot": "moonshotai",
}
"""Profile name -> genai-prices provider id. A profile not listed has no known price list."""


@dataclass(frozen=True, kw_only=True)
class ProviderProfile:
    """A model endpoint's capabilities and rules. Build one with ``profile_for``."""

    name: str
    """"anthropic", "openai", "deepseek", "moonshot", "local", or a name of your own."""
    wire: Wire
    """The wire's name (a key of ``providers.wire.WIRES``); ``wire_format`` is the wire itself."""
    model: str
    cache: CacheRules
    cache_ttl: Ttl = DEFAULT_TTL
    """The lifetime the requests ask for (Anthropic's ``ttl``); automatic caches have one lifetime."""
    prices: TokenPrices | None = None
    """Dollars per token by class; None when the model's price is unknown."""
    pricing_id: str | None = None
    """genai-prices provider id: a call is priced there, long-context tiers included."""
    context_window: int | None = None
    counts_tokens: bool = False
    """``count_tokens`` is exact and cheap (a local server tokenizes): sizes are counted, not estimated."""
    free_count: bool = False
    """``count_tokens`` costs nothing but a round trip or some CPU (Anthropic's ``count_tokens``,
    tiktoken offline for OpenAI models): the engine counts once after each compaction, not every turn."""
    tool_grammar: bool = False
    """Decoding can be narrowed per turn with ``Prompt.tool_grammar`` (the local JSON tool mode)."""
    tool_choice_keeps_prefix: bool = False
    """Forbidding tool calls leaves the prompt's text alone (the tools live in the system text and only
    the decoding grammar changes), so a summary call may forbid them without a cache miss."""
    cache_home: str = ""
    """Where the cache lives when it is one server's memory (its URL, no credentials)."""
    sends_requests: bool = True
    """The endpoint takes the requests (a model): the size guard stands before it. A replay's stand-in
    sends nothing, so a request over the window is counted there as an overflow, not refused."""
    model_is_display_name: bool = False
    """``model`` names the model for display only (the local model's .gguf stem, not its path): a
    session remembers the model the user gave, never this name in its place."""
    thinking_caps: ThinkingCaps = NO_THINKING
    """What the model does with reasoning (manual/adaptive thinking, preserved thinking, ...)."""
    max_tokens: int | None = None
    """The output cap a request carries when its prompt names none (``--max-tokens``); a thinking
    budget adds to it as the wire sends it (``thinking_sent.sent_max_tokens``). None: not declared."""
    thinking: Thinking = OFF
    """The reasoning the requests ask for (``--thinking``, ``--effort``)."""

    @property
    def thinks(self) -> bool:
        """Whether the model reasons in this run's requests (its replies carry reasoning blocks)."""
        return is_on(self.thinking, self.thinking_caps)

    @property
    def earlier_reasoning(self) -> EarlierReasoning:
        """How the next request counts the reasoning already in the history (``ThinkingCaps``):
        ``reasoning_content`` goes back only while the model thinks, so with thinking off none counts."""
        caps = self.thinking_caps
        return "none" if caps.reasoning_content and not self.thinks else caps.earlier_reasoning

    @property
    def lifetime(self) -> float:
        """Seconds a cache entry lives after its last use, at the requested TTL."""
        return float(self.cache.ttl_seconds[self.cache_ttl])

    def price(self, usage: Usage, at: float | None = None) -> float | None:
        """Cost in USD of one call with ``usage``, made at ``at`` (epoch seconds; default now); None when
        the price or the counts are unknown."""
        if self.pricing_id is not None:
            return price_usd(usage, self.model, self.pricing_id, at)
        return self.prices.cost(usage) if self.prices is not None else None

    @property
    def wire_format(self) -> WireFormat:
        """The wire this endpoint speaks: what differs by wire is asked of it."""
        return wire_of(self.wire)

    def check(self, body: Mapping[str, Any]) -> list[str]:
        """What the wire would refuse in ``body`` (empty: legal)."""
        return self.wire_format.check(body, self.cache.max_breakpoints) + reasoning_problems(
            self.wire, body, self.thinks, self.thinking_caps
        )

    def sent_thinking(self, body: Mapping[str, Any]) -> Thinking:
        """The settings ``body`` renders: ``thinking``, or off where the wire held thinking back for
        this request (Claude's, inside a tool loop begun without it: it starts when the loop ends)."""
        return sent_thinking(self.wire, body, self.thinking, self.thinking_caps)

    def checker(self) -> WireCheck:
        """An incremental check of this wire (see ``providers.check``)."""
        return self.wire_format.checker()

    def finish_check(self, check: WireCheck, body: Mapping[str, Any]) -> tuple[list[str], int]:
        """The problems ``check`` found in ``body`` (its breakpoints held to the limit), and how many
        breakpoints the body carries."""
        marks = count_marks(body) if self.cache.max_breakpoints else 0
        problems = reasoning_problems(self.wire, body, self.thinks, self.thinking_caps)
        return check.finish(marks, self.cache.max_breakpoints) + problems, marks


def profile_for(
    name: str,
    wire: Wire,
    model: str,
    *,
    cache_ttl: Ttl = DEFAULT_TTL,
    pricing_id: str | None = None,
    context_window: int | None = None,
    min_tokens: Mapping[str, int] | None = None,
    **capabilities: Any,
) -> ProviderProfile:
    """The profile of ``model`` at the endpoint ``name`` speaking ``wire``, from the published rules
    and genai-prices. ``pricing_id`` defaults to the name's price list (none for other names);
    ``capabilities`` set the flags (``counts_tokens``, ``tool_grammar``, ...)."""
    pricing = pricing_id or PRICING_IDS.get(name)
    prices = token_prices(model, pricing)
    window = context_window or context_window_of(model, pricing)
    rules = rules_of(name, model, wire, min_tokens)
    profile = ProviderProfile(
        name=name,
        wire=wire,
        model=model,
        cache=rules,
        cache_ttl=cache_ttl,
        prices=prices,
        pricing_id=pricing if prices is not None else None,
        context_window=window,
        thinking_caps=thinking_caps(name, model, wire),
    )
    return replace(profile, **capabilities) if capabilities else profile
