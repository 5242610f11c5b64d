"""The wires' tables of what breaks the prompt cache beside the prefix's bytes (``WireBreaks``, one in
each ``providers/<wire>/breaks.py``), and what a change at each level costs, in words. The simulator
that reads them is ``providers.cache_breaks``.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Literal

from tiny_agent.errors import ConfigError

__all__ = ["Level", "Setting", "WireBreaks", "consequence", "setting_consequence", "wire_breaks"]

Level = Literal["tools", "system", "messages"]


@dataclass(frozen=True)
class Setting:
    """A top-level field of a body whose change invalidates the cache from ``level`` on."""

    path: str
    """Dotted: ``thinking``, ``output_config.effort``."""
    rule: str
    level: Level
    what: str
    """The subject of a sentence (``the model``); ``why``: why that is a miss, where it is not plain."""
    why: str = ""
    follows: str = ""
    """The path of the setting this one changes with (DeepSeek's effort goes with ``--thinking off``):
    where both changed, that one is the cause named, this one its consequence."""
    absent: Any = None
    """What the field means where a body leaves it out (DeepSeek thinks unless told not to)."""


@dataclass(frozen=True)
class WireBreaks:
    settings: tuple[Setting, ...]
    tool_name: str
    tool_description: str
    tool_schema: str
    """Dotted paths inside one tool definition."""
    unmarkable_types: frozenset[str]
    """Block types a cache marker may not be put on."""


_WIRES = {
    "anthropic": "tiny_agent.providers.anthropic.breaks",
    "openai": "tiny_agent.providers.openai.breaks",
    "responses": "tiny_agent.providers.responses.breaks",
}


def wire_breaks(wire: str) -> WireBreaks:
    """The wire's table (imported on first use)."""
    if wire not in _WIRES:
        raise ConfigError(f"no cache rules for the {wire!r} wire; known: {', '.join(_WIRES)}")
    table: WireBreaks = importlib.import_module(_WIRES[wire]).BREAKS
    return table


_CONSEQUENCE = {"tools": "the whole prefix is written again", "messages": "the cache misses from the first message on"}


def consequence(level: Level) -> str:
    """What a change at ``level`` costs, in words: ``the cache misses from the first message on``."""
    return _CONSEQUENCE.get(level, "the cache misses from the system prompt on")


def setting_consequence(wire: str, *rules: str) -> str:
    """What a change of the wire's setting with the first of ``rules`` it has costs, in words (the
    thinking switch's: ``setting_consequence(wire, "thinking-changed", "effort-changed")``)."""
    table = wire_breaks(wire).settings
    found = next((s for rule in rules for s in table if s.rule == rule), None)
    return consequence(found.level if found is not None else "messages")
