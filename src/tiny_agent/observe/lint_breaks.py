"""How to fix each cause of a miss between two bodies that ``providers.cache_breaks`` names, and where
each reasoning rule of ``providers.reasoning_check`` points and how to fix it (lint's rules)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from tiny_agent.providers.reasoning_check import Sequenced

__all__ = ["BREAK_FIXES", "REASONING_FIXES", "fix_for", "sequence_findings"]


_FIX_BREAK = "send it byte-identical on every request; put what changes after the last cache breakpoint"
BREAK_FIXES = {
    "model-changed": "keep one model per conversation (each model has its own cache)",
    "tools-reordered": "register tools in one fixed order (the order is part of the cached prefix)",
    "tool-added": "send the same tools every request; restrict them with tool_choice or allowed tools instead",
    "tool-removed": "send the same tools every request; restrict them with tool_choice or allowed tools instead",
    "tool-description-changed": "keep each tool's description byte-identical (no dates, counts or ids in it)",
    "tool-schema-changed": "keep each tool's schema byte-identical (key order too)",
    "system-changed": "keep the system prompt byte-identical between requests; put what changes in the newest message",
    "message-edited": "never rewrite history: append; a compaction rewrites it once, on purpose",
    "message-removed": "never drop earlier messages between requests, except in a deliberate compaction",
    "thinking-changed": "keep the thinking settings fixed for a conversation",
    "effort-changed": "keep the effort setting fixed for a conversation",
    "tool-choice-changed": "keep tool_choice fixed; on Anthropic a change invalidates the cached messages",
    "response-format-changed": "keep the response format fixed for a conversation",
    "cache-key-changed": "send one prompt_cache_key for a conversation's requests",
    "breakpoint-lookback": "add a breakpoint within 20 blocks of the previous one (e.g. on the newest user turn)",
    "cache-expired": "send the next request within the lifetime, mark the stable prefix ttl 1h, or keep it warm",
}


def fix_for(rule: str) -> str:
    return BREAK_FIXES.get(rule, _FIX_BREAK)


REASONING_FIXES: dict[str, tuple[str | None, str]] = {
    "thinking-forced-tool-choice": (
        "tool_choice",
        'set tool_choice to {"type": "auto"} or {"type": "none"}, or turn thinking off for this request',
    ),
    "reasoning-forced-tool-choice": (
        "tool_choice",
        'set tool_choice to "auto" or "none", or disable thinking for this request',
    ),
    "reasoning-both-switches": ("reasoning_effort", "send either thinking or reasoning_effort, not both"),
    "thinking-final-assistant": (None, "send the assistant turn back as received: its thinking blocks first"),
    "thinking-unsigned": (None, "send the thinking block back exactly as received, its signature included"),
    "thinking-disabled-final": (None, "keep thinking on until the tool loop ends with a new user turn"),
    "reasoning-content-missing": (None, "send each tool-call assistant message back with its reasoning_content"),
    "thinking-modified": (
        None,
        "send each thinking and redacted_thinking block back exactly as the API returned it: its text, signature "
        "and data unchanged (drop the whole block, never edit it)",
    ),
    "thinking-rebound": (
        None,
        "send each thinking block after the prefix it was made on: after a compaction, the window (summary, "
        "then the turns after it), not the whole history; or remove the block, or ask for "
        'thinking.block_binding.prefix_mismatch_behavior "drop_block"',
    ),
}
"""Reasoning rule -> (its path when not the message the problem names, the fix)."""


def sequence_findings(
    rules: Sequenced, body: Mapping[str, Any], model: str, accepted: bool = True
) -> list[tuple[str, str, str, str]]:
    """(rule, path, message, fix) of each reasoning rule ``body`` breaks after the accepted bodies
    ``rules`` was fed before it (``providers.reasoning_check.reasoning_sequence``); ``accepted``: the API
    took ``body``, so the next is held to it."""
    out = []
    for problem in rules.feed(body, model, accepted):
        rule, message = problem.split(": ", 1)
        path = re.search(r"messages\[\d+\](?:\.content\[\d+\])?", message)
        out.append((rule, path.group() if path else "messages", message, REASONING_FIXES[rule][1]))
    return out
