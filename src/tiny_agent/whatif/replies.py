"""What a replay answers a summary call with: a recorded summary call's answer, or a stand-in's thinking."""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence

from tiny_agent.context.entries import CallDone
from tiny_agent.providers.profile import ProviderProfile
from tiny_agent.types import Block, TextBlock

__all__ = ["Reply", "recorded_replies", "stand_in_thought"]

Reply = tuple[tuple[Block, ...], int | None, int]
"""A summary call's answer (its blocks), the output tokens it was billed and, of them, the reasoning."""


def recorded_replies(calls: Sequence[CallDone], summary: str | None) -> list[Reply]:
    """The recorded answers of summary calls; a session from before they were kept has only the
    summary its compaction took (the last call's), and its other calls count as that too."""
    out: list[Reply] = []
    for done in calls:
        blocks = done.reply if done.reply is not None else ((TextBlock(summary),) if summary else None)
        usage = done.record.usage
        if blocks is not None:
            out.append((blocks, usage.output_tokens, usage.reasoning_tokens or 0))
    return out


def stand_in_thought(profile: ProviderProfile, replies: Iterable[Reply], turns: Iterable[int]) -> int:
    """The reasoning of a summary call the recording did not make, on ``profile``: none where its
    requests do not think, else the recorded summary calls' median, else (the recording compacted
    never) its turns' median."""
    tokens = [thought for _, _, thought in replies] or list(turns)
    return int(statistics.median(tokens)) if tokens and profile.thinks else 0
