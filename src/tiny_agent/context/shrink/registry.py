"""The compaction policies by name: a policy is a value, and the config, the CLI and replay look it up here.

Past ``compact_at`` the engine compacts whatever the policy (it is the hard limit); below it, the
policy says whether to compact now and at which threshold the kept turns must fit. A policy of
one's own is a ``CompactionPolicy`` given to ``register``; its name then works everywhere a policy
is named (``ContextConfig(policy=...)``, ``--policy``, the config file, ``replay --policy``).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass

from tiny_agent.context.shrink.policy import cost_threshold
from tiny_agent.context.shrink.shrinkable import Shrinkable
from tiny_agent.errors import ConfigError
from tiny_agent.providers.base import Provider

__all__ = ["POLICIES", "CompactionPolicy", "policy_named", "policy_names", "register"]

Due = Callable[[Shrinkable, Provider, int, int], int | None]
"""(context, provider, ceiling, tokens) -> the threshold to compact at now, or None to wait; only
asked while the window is at most ``ceiling`` (the config's threshold) tokens."""


@dataclass(frozen=True)
class CompactionPolicy:
    """When to compact, below the hard limit."""

    name: str
    about: str
    """One line for ``--help`` and the docs."""
    due: Due
    priced: bool = False
    """Whether it weighs the provider's prices (a decision then records the prices it used)."""


def _never_before_the_limit(ctx: Shrinkable, provider: Provider, ceiling: int, tokens: int) -> int | None:
    return None


POLICIES: dict[str, CompactionPolicy] = {}
"""Every policy a name can give, by name (``register`` adds one)."""


def register(policy: CompactionPolicy) -> CompactionPolicy:
    """Make ``policy`` known by its name (replacing one of the same name); returns it."""
    if not policy.name or not policy.name.replace("-", "").replace("_", "").isalnum():
        raise ConfigError(f"a compaction policy's name must be a word like 'cost', not {policy.name!r}")
    POLICIES[policy.name] = policy
    return policy


def policy_names() -> tuple[str, ...]:
    return tuple(POLICIES)


def policy_named(name: str) -> CompactionPolicy:
    """The policy called ``name``; an unknown name is a ConfigError of one line naming the known ones."""
    found = POLICIES.get(name) if isinstance(name, str) else None
    if found is not None:
        return found
    close = difflib.get_close_matches(str(name), POLICIES, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    known = ", ".join(repr(n) for n in POLICIES)
    raise ConfigError(f"unknown compaction policy {name!r}{hint}; the policies are: {known}")


register(
    CompactionPolicy(
        "cost",
        "at the threshold whose compaction cycle costs least at the provider's cache prices, never past compact_at",
        cost_threshold,
        priced=True,
    )
)
register(
    CompactionPolicy(
        "fraction", "only past compact_at (a fraction of the window or a token count)", _never_before_the_limit
    )
)
