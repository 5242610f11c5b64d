"""The engine's settings and the words it writes into a conversation itself."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, Literal

from tiny_agent.errors import ConfigError

__all__ = [
    "CONFIG_KEYS",
    "DEFAULT_CONTEXT_WINDOW",
    "EMPTY_REPLY",
    "MAX_CONTEXT_WINDOW",
    "MIN_CONTEXT_WINDOW",
    "NOT_RUN",
    "ContextConfig",
]

DEFAULT_CONTEXT_WINDOW = 128_000
MIN_CONTEXT_WINDOW = 1_024
"""The smallest window a run is given (a system prompt, the tools and one turn need about this much)."""
MAX_CONTEXT_WINDOW = 20_000_000
"""The largest window accepted: twice the largest any model offers (10 million tokens)."""
EMPTY_REPLY = "(the model returned an empty reply)"
NOT_RUN = (
    "[interrupted: tiny-agent stopped before this call's result was recorded. It may not have run, or it may "
    "have run without its result being kept; it was not run again. Check before repeating a call that changes files.]"
)


@dataclass(frozen=True)
class ContextConfig:
    """Thresholds of the engine. Every field has a default a user can override."""

    compact_at: float = 0.8
    """When to compact: a fraction of the context window (0 < x <= 1) or an absolute token count (> 1)."""
    keep_turns: int = 4
    """How many of the newest model turns (a response plus its tool results) stay verbatim."""
    context_window: int | None = None
    """Override of the model's window in tokens; by default the provider says, else 128,000."""
    summary_max_tokens: int = 1024
    """Output cap of the summary call."""
    policy: str = "cost"
    """When to compact, a policy's name (``context.shrink.registry``, looked up when the engine takes
    the config, so a session naming a policy this process lacks still reads): "fraction" only past ``compact_at``;
    "cost" at the threshold whose compaction cycle costs least at the provider's cache prices, never
    past ``compact_at`` (see ``context.shrink.policy``)."""
    summary: Literal["cached", "transcript"] = "cached"
    """How the summary is asked for: "cached" at the end of the window itself, so the call reads the
    cache; "transcript" from a flattened copy of what is replaced (the fallback either way)."""
    clear_after: int | None = 8
    """Tool output older than this many turns is replaced by a stub (when that pays); None never clears."""
    clear_min_tokens: int = 2000
    """Clear only in batches of at least this many tokens, so the cached prefix changes rarely."""
    horizon_turns: int = 10
    """How many more turns clearing old tool output assumes the conversation runs (its cost rule)."""

    def __post_init__(self) -> None:
        for name, kinds in _KINDS.items():
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, kinds):
                wanted = " or ".join("None" if k is type(None) else k.__name__ for k in kinds)
                raise ConfigError(f"{name} must be {wanted}, not {value!r}")
        if not self.compact_at > 0 or self.compact_at == float("inf"):  # also refuses NaN
            raise ConfigError(f"compact_at must be a fraction in (0, 1] or a token count > 1, not {self.compact_at}")
        if self.keep_turns < 1:
            raise ConfigError(f"keep_turns must be at least 1, not {self.keep_turns}")
        if self.context_window is not None and self.context_window < 1:
            raise ConfigError(f"context_window must be positive, not {self.context_window}")
        if self.summary not in ("cached", "transcript"):
            raise ConfigError(f"summary must be 'cached' or 'transcript', not {self.summary!r}")
        if self.clear_after is not None and self.clear_after < 1:
            raise ConfigError(f"clear_after must be at least 1 turn (or None), not {self.clear_after}")
        if self.horizon_turns < 1 or self.summary_max_tokens < 1 or self.clear_min_tokens < 0:
            raise ConfigError("horizon_turns and summary_max_tokens must be positive, clear_min_tokens not negative")

    def window(self, model_window: int | None = None) -> int:
        """The context window in tokens: the override, else the model's, else the default."""
        return self.context_window or model_window or DEFAULT_CONTEXT_WINDOW

    def threshold(self, model_window: int | None = None) -> int:
        """The size in tokens past which the context is compacted."""
        at = self.compact_at
        return int(at * self.window(model_window)) if at <= 1 else int(at)

    def settings(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def of(cls, settings: Mapping[str, Any]) -> ContextConfig:
        """The config in ``settings`` (other keys ignored); raises ConfigError on a bad value."""
        return cls(**{k: v for k, v in settings.items() if k in CONFIG_KEYS})

    @classmethod
    def checked(cls, settings: Mapping[str, Any]) -> ContextConfig:
        """Like ``of``, but a key that is no field is a ConfigError too (a typo must not pass silently).
        A policy's name is looked up where the engine takes it (``shrink.registry.policy_named``): the
        policies read the engine's config, so this module cannot ask them."""
        unknown = sorted(set(settings) - CONFIG_KEYS)
        if unknown:
            known = ", ".join(sorted(CONFIG_KEYS))
            raise ConfigError(f"unknown context setting {', '.join(map(repr, unknown))}; the settings are: {known}")
        config = cls.of(settings)
        window = config.context_window
        if window is not None and not MIN_CONTEXT_WINDOW <= window <= MAX_CONTEXT_WINDOW:
            raise ConfigError(
                f"context_window must be between {MIN_CONTEXT_WINDOW:,} and {MAX_CONTEXT_WINDOW:,} tokens, "
                f"not {window:,}"
            )
        if config.compact_at > 1 and not MIN_CONTEXT_WINDOW / 2 <= config.compact_at <= MAX_CONTEXT_WINDOW:
            raise ConfigError(
                f"compact_at as a token count must be between {MIN_CONTEXT_WINDOW // 2:,} and "
                f"{MAX_CONTEXT_WINDOW:,}, not {config.compact_at:,.0f}"
            )
        return config


_KINDS: dict[str, tuple[type, ...]] = {
    "compact_at": (int, float),
    "keep_turns": (int,),
    "context_window": (int, type(None)),
    "summary_max_tokens": (int,),
    "policy": (str,),
    "summary": (str,),
    "clear_after": (int, type(None)),
    "clear_min_tokens": (int,),
    "horizon_turns": (int,),
}
"""What each setting may be: a value from JSON or a flag of the wrong type gets a one-line error."""

CONFIG_KEYS = frozenset(f.name for f in fields(ContextConfig))
