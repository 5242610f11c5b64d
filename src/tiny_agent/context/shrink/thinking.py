"""Compaction and clearing with thinking on: legal by construction.

On a preserved-thinking model every thinking block is bound to its prefix (system + tools + every
message before it), and the final assistant message of a tool loop must start with its thinking. A
summary before kept turns changes their prefix; a cleared tool result changes the prefix of every
block after it. Three ways out (reasoning facts, sections 1 and 5), named on the compaction line
and in its log entry (``CompactionMark.strategy``):

- ``fold`` (the default): the kept turns are folded into the summary message, as text, so the next
  request holds no earlier thinking block and starts a new assistant turn. Clearing waits: the next
  compaction folds the old results away instead.
- ``drop_block``: the turns are kept as they are and the request asks the API to drop the blocks
  whose prefix changed (``--thinking-binding drop_block``); the answer's ``input_transformations``
  (kept on the call record) say what it dropped.
- without Claude's signed blocks (DeepSeek's and Kimi's reasoning_content, OpenAI's items), the
  usual compaction is already legal: the kept turns, reasoning and all, go back after the summary.

Claude models whose profile declares no binding (Sonnet 4.6, Opus 4.6, the budget models) fold too,
and clearing waits on them as well: their API takes a kept block after a new prefix today, but a tool
loop's blocks go back on every model, and a server that binds them (a proxy, a test server, a model
that starts to) would refuse every request after the compaction or the clearing. Folding costs what
a compaction costs anyway, the kept turns' reasoning aside; clearing between compactions is lost.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from tiny_agent.providers.profile import ProviderProfile
from tiny_agent.types import Message, TextBlock, ToolResultBlock, ToolUseBlock

__all__ = ["DROP_BLOCK", "FOLD", "clearing_allowed", "fold_text", "strategy"]

FOLD = "fold"
DROP_BLOCK = "drop_block"


def strategy(profile: ProviderProfile | None) -> str:
    """How a compaction keeps the thinking rules for ``profile``: ``fold``, ``drop_block``, or "" (no
    rule is at stake: no thinking, or no signed blocks)."""
    if profile is None or not profile.thinks:
        return ""
    caps = profile.thinking_caps
    if not (caps.preserved or caps.manual or caps.adaptive):
        return ""  # no signed thinking blocks (manual and adaptive are Claude's, on the Messages API)
    return DROP_BLOCK if profile.thinking.binding == DROP_BLOCK else FOLD


def clearing_allowed(profile: ProviderProfile | None) -> bool:
    """Clearing rewrites what comes before later thinking blocks: not while they are bound to it."""
    return strategy(profile) != FOLD


def fold_text(messages: Sequence[Message]) -> str:
    """The kept turns as text for the summary message: calls with their arguments, results whole, the
    model's text; its reasoning is left out (the next turn thinks afresh)."""
    lines: list[str] = []
    for message in messages:
        for block in message.content:
            if isinstance(block, TextBlock):
                lines.append(f"{message.role.upper()}: {block.text}")
            elif isinstance(block, ToolUseBlock):
                lines.append(f"ASSISTANT called {block.name}({json.dumps(dict(block.input), ensure_ascii=False)})")
            elif isinstance(block, ToolResultBlock):
                status = "error" if block.is_error else "ok"
                lines.append(f"RESULT ({status}) of {block.tool_use_id}:\n{block.content}")
    return "\n".join(lines)
