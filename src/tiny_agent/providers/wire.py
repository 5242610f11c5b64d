"""The wire formats as values, and their one registry.

A wire format (Anthropic Messages, OpenAI Chat Completions, ...) is an object that says what differs
by wire: the prefix blocks of a body and its breakpoints, the request check, the cache rules of a
model on it, how to recognise a body of it and which adapter speaks
it. Code that must differ by wire asks ``wire_of(name)``; nothing outside ``providers/`` compares a
wire's name. A new wire is a folder ``providers/<name>/`` with a ``wire`` module and one line in
``WIRES``. The name stays a string wherever a wire is stored (sessions, profiles, bills).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any, Protocol

from tiny_agent.errors import ConfigError
from tiny_agent.providers.anthropic.wire import ANTHROPIC
from tiny_agent.providers.cache_rules import DEFAULT_TTL, TTLS, CacheRules, Ttl, automatic_rules
from tiny_agent.providers.check import WireCheck
from tiny_agent.providers.openai.wire import OPENAI
from tiny_agent.providers.prefix import CacheMarks, Counter, PrefixBlock, block_tokens
from tiny_agent.providers.responses.wire import RESPONSES
from tiny_agent.providers.thinking_caps import thinking_caps

__all__ = [
    "WIRES",
    "WireFormat",
    "cache_rules",
    "checked_ttl",
    "detect_wire",
    "prefix_blocks",
    "rules_of",
    "shown_wire",
    "wire_of",
]


class WireFormat(Protocol):
    """What a wire format is and does; one object per wire, in ``WIRES``."""

    name: str
    """Its name, as sessions and profiles store it."""
    mark_field: str
    """The field that marks a cache breakpoint (``cache_control``, ``prompt_cache_breakpoint``)."""
    marks_required: bool
    """Nothing is cached but at the request's own marks (held to the limit and lifetime order), whatever
    the cache rules' mode; otherwise marks are optional and the rules' mode decides."""
    ttls: tuple[Ttl, ...]
    """The cache lifetimes a request may ask for."""
    adapter: str
    """``module:Class`` of the adapter that speaks it (imported where one is built: the SDKs are slow)."""
    sdk_path: str
    """What its SDK's base URL adds to a server's address (``/v1`` on OpenAI's)."""

    def prefix_blocks(self, body: Mapping[str, Any], counter: Counter) -> list[PrefixBlock]:
        """The blocks of ``body`` in the order a prefix cache reads them (tools first)."""
        ...

    def cache_marks(self, body: Mapping[str, Any], blocks: list[PrefixBlock], rules: CacheRules) -> CacheMarks:
        """The breakpoints a cache on ``rules`` reads and writes (``SimulationError``: a request it refuses)."""
        ...

    def cache_rules(self, profile: str, model: str, overrides: Mapping[str, int] | None) -> CacheRules:
        """The cache rules of ``model`` at the endpoint named ``profile`` on this wire."""
        ...

    def check(self, body: Mapping[str, Any], max_marks: int | None) -> list[str]:
        """What the wire would refuse in a whole body (``max_marks`` None: the marks are not counted)."""
        ...

    def checker(self) -> WireCheck:
        """An incremental check of this wire's requests."""
        ...

    def conversation_start(self, body: Mapping[str, Any]) -> int:
        """Index in ``body["messages"]`` of the first conversation message (the check's message 0)."""
        ...

    def shows_in(self, part: Mapping[str, Any]) -> bool:
        """Whether a body, or one of its messages, has a shape only this wire has."""
        ...

    def adapter_options(self, cache_ttl: Ttl, tool_grammar: bool) -> dict[str, Any]:
        """The adapter's own settings for a profile with this lifetime and tool grammar."""
        ...

    def body_headers(self, body: Mapping[str, Any], interleaved: bool) -> dict[str, str]:
        """The HTTP headers ``body`` must travel with (a beta-only field's beta); ``interleaved``: the
        model needs the interleaved-thinking header for manual thinking between tool calls."""
        ...


WIRES: Mapping[str, WireFormat] = {
    ANTHROPIC.name: ANTHROPIC,
    RESPONSES.name: RESPONSES,  # before OPENAI: a Responses body has function tools too
    OPENAI.name: OPENAI,
}
"""Every wire format by name; the order is the order ``detect_wire`` tries them in."""

FALLBACK = OPENAI
"""The wire of a body that shows no wire's shape (a bare conversation of strings)."""


def wire_of(name: str) -> WireFormat:
    """The wire called ``name``; ``ConfigError`` naming the known ones otherwise."""
    found = WIRES.get(name)
    if found is None:
        raise ConfigError(f"unknown wire format {name!r}; known: {', '.join(WIRES)}")
    return found


def detect_wire(body: Mapping[str, Any]) -> WireFormat:
    """The wire of a body, from its shape (``shown_wire``); a body that shows none is ``FALLBACK``'s."""
    return shown_wire(body) or FALLBACK


def shown_wire(body: Mapping[str, Any]) -> WireFormat | None:
    """The first wire whose shape shows in the body itself, then in its messages in order; None when
    no wire's does (a bare conversation of strings)."""
    for part in (body, *(m for m in body.get("messages") or [] if isinstance(m, Mapping))):
        for wire in WIRES.values():
            if wire.shows_in(part):
                return wire
    return None


def prefix_blocks(body: Mapping[str, Any], wire: str, counter: Counter = block_tokens) -> list[PrefixBlock]:
    """The blocks of ``body`` in the order a prefix cache reads them: tools, system, messages;
    ``counter`` gives a block's tokens (``prefix``'s estimator by default)."""
    return wire_of(wire).prefix_blocks(body, counter)


_LOCAL_UNKEYED = frozenset({"response_format", "parallel_tool_calls", "prompt_cache_key"})
"""What llama.cpp's prompt cache ignores: the grammar, tool-call parallelism and a routing key."""


def rules_of(profile: str, model: str, wire: str, overrides: Mapping[str, int] | None = None) -> CacheRules:
    """The cache rules of ``model`` served by the endpoint named ``profile`` ("anthropic", "openai",
    "deepseek", "moonshot", "local", or any other name for a server of that wire)."""
    if profile == "local":
        # llama.cpp keeps any prefix in its slot until another replaces it; nothing is billed.
        rules = automatic_rules(wire, model, 0, 1, math.inf, writes_billed=False, read=1.0)
        return dataclasses.replace(rules, unkeyed_settings=_LOCAL_UNKEYED)
    rules = wire_of(wire).cache_rules(profile, model, overrides)
    return dataclasses.replace(rules, thinks_by_default=thinking_caps(profile, model, wire).default_on)


def cache_rules(model: str, wire: str, overrides: Mapping[str, int] | None = None) -> CacheRules:
    """Every rule the billing simulator and the miss diagnosis need for ``model`` on ``wire`` (at the
    endpoint the wire is named after: Anthropic, or OpenAI)."""
    return rules_of(wire, model, wire, overrides)


def checked_ttl(cache_ttl: str, wire: str, provider: str) -> Ttl:
    """``cache_ttl`` as a lifetime ``provider`` (of ``wire``) can be asked for, or ConfigError."""
    if cache_ttl != DEFAULT_TTL and len(wire_of(wire).ttls) < 2:  # one lifetime: nothing to choose
        raise ConfigError(
            f"a cache lifetime applies to Anthropic; {provider!r} caches automatically "
            "(GPT-5.6+: 30 minutes, its only lifetime)"
        )
    for ttl in TTLS:
        if ttl == cache_ttl:
            return ttl
    raise ConfigError(f"cache_ttl must be one of {', '.join(TTLS)}, not {cache_ttl!r}")
