"""The wires' tables of what breaks the prompt cache beside the prefix's bytes (``WireBreaks``, one in
each ``providers/<wire>/breaks.py``), and what a change at each level costs, in words. The simulator
that reads them is ``providers.cache_breaks``.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from tiny_agent.errors import ConfigError

__all__ = [
    "LEVELS",
    "Level",
    "Setting",
    "WireBreaks",
    "consequence",
    "earliest",
    "settings_consequence",
    "wire_breaks",
]

Level = Literal["tools", "system", "messages"]
LEVELS: tuple[Level, ...] = ("tools", "system", "messages")
"""In the order a prefix cache reads them: a change at one invalidates it and every later one."""


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
    where both changed, that one is the cause named, this one its consequence; the cause costs the
    earlier level of the two."""
    absent: Any = None
    """What the field means where a body leaves it out, on a model that thinks unless told not to
    (``CacheRules.thinks_by_default``: DeepSeek's, Kimi's switch left out is on); elsewhere a field
    left out is a value of its own (Claude's default, no switch, is not ``disabled``)."""


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


def earliest(levels: Iterable[Level]) -> Level:
    """The first of ``levels`` a prefix cache reads (``messages`` for none)."""
    return min(levels, key=LEVELS.index, default="messages")


def settings_consequence(wire: str, *rules: str) -> str | None:
    """What a change of every setting of the wire with one of ``rules`` costs together: the earliest
    level's consequence among them (DeepSeek's thinking switch with the effort it drops: the tools');
    None where the wire has none of them."""
    levels = [s.level for s in wire_breaks(wire).settings if s.rule in rules]
    return consequence(earliest(levels)) if levels else None
