"""The what-if table: a session replayed under a few other policies, nothing sent."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tiny_agent.errors import TinyAgentError
from tiny_agent.whatif.replay import Policy, Recording, replay

__all__ = ["RECORDED_WHAT_IFS", "WHAT_IFS", "what_if_rows"]

WHAT_IFS: tuple[Policy, ...] = (
    Policy(),
    Policy(cache_ttl="1h"),
    Policy(cache_ttl="5m"),
    Policy({"compact_at": 0.5}),
    Policy({"compact_at": 0.9}),
    Policy({"clear_after": 2}),
    Policy({"clear_after": None}),
)
"""The what-ifs the view replays: the recording's own policy, each TTL, an earlier and a later
compaction, clearing old tool output after two turns or never."""

RECORDED_WHAT_IFS: tuple[Policy, ...] = (
    Policy(),
    Policy(cache_ttl="1h"),
    Policy(cache_ttl="5m"),
    Policy(cache_marks="own"),
    Policy(cache_marks="none"),
)
"""The what-ifs of a recorded session (``tiny-agent record``), whose bodies are re-priced: as sent,
each TTL, tiny-agent's own cache breakpoints, none."""


def what_if_rows(recording: Recording, policies: Sequence[Policy] | None = None) -> list[dict[str, Any]]:
    """The recording replayed under each policy (by default the ones for its kind): its totals, or why
    it cannot be."""
    if policies is None:
        policies = RECORDED_WHAT_IFS if recording.bodies else WHAT_IFS
    rows = []
    for policy in policies:
        row: dict[str, Any] = {"policy": policy.describe()}
        try:
            replayed = replay(recording, policy).replayed
        except TinyAgentError as exc:
            rows.append({**row, "error": str(exc)})
            continue
        rows.append(
            {
                **row,
                "calls": len(replayed.per_call),
                "compactions": replayed.compactions,
                **replayed.totals(),
                "cost_usd": replayed.cost_usd,
                "estimated": replayed.estimated,
            }
        )
    return rows
