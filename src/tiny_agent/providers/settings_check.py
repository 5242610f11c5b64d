"""The run's reasoning and server-compaction settings held against what the endpoint takes, for every
provider and wire (the local model's too), before the adapter is built: one ``ConfigError`` line,
never a setting dropped in silence nor a 400 from the API.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tiny_agent.errors import ConfigError
from tiny_agent.providers.thinking import Thinking
from tiny_agent.providers.thinking_caps import thinking_caps
from tiny_agent.providers.thinking_check import checked

__all__ = ["SERVER_COMPACTION", "check_settings", "checked_threshold"]

SERVER_COMPACTION: Mapping[str, str] = {
    "anthropic": "--provider anthropic",
    "responses": "--provider openai --api responses",
}
"""The wires whose servers compact the context (``compact_threshold``), and how a user picks each."""
_API_NAMES = {"openai": "Chat Completions"}
"""How a user knows a wire that has no server compaction (its name is the adapter's)."""


def check_settings(name: str, wire: str | None, model: str, options: Mapping[str, Any]) -> None:
    """Refuse what ``model`` at ``name`` over ``wire`` (None: a llama.cpp server, which compacts
    nothing) would not do with the adapter ``options`` given (``thinking``, ``compact_threshold``)."""
    thinking = options.get("thinking")
    caps = thinking_caps(name, model, wire or "")
    if isinstance(thinking, Thinking):
        checked(thinking, caps, model)
    asked = options.get("max_tokens")
    if wire == "anthropic" and caps.max_output and isinstance(asked, int) and asked > caps.max_output:
        raise ConfigError(f"--max-tokens {asked:,}: {model} writes at most {caps.max_output:,} tokens a reply")
    if checked_threshold(options.get("compact_threshold")) is not None and wire not in SERVER_COMPACTION:
        where = " or ".join(SERVER_COMPACTION.values())
        over = f" over {_API_NAMES.get(wire, wire)}" if wire else ""
        raise ConfigError(f"--server-compact-at works only with {where}: {name}{over} has no server-side compaction")


def checked_threshold(value: object) -> int | None:
    """A server compaction threshold (``server_compact_at``, an adapter's ``compact_threshold``) as the
    command line takes it: a whole number of input tokens, at least 1 (a bool is none), else one line;
    None: no server compaction."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"--server-compact-at expects a whole number of input tokens, not {value!r}")
    if value < 1:
        raise ConfigError(f"--server-compact-at must be at least 1 input token, not {value}")
    return value
