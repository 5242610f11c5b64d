"""Prompt caching on the Responses API: the cache key, GPT-5.6's breakpoints and options, diagnosis.

The same plan as the other wires (``context.cache.plan_cache``): a breakpoint at the end of the
system item and of the newest planned messages, at most four, only on input content blocks
(``input_text`` of a user or developer message, or of a tool output sent as blocks): never on an
assistant's ``output_text``, which GPT-5.6 refuses. ``prompt_cache_options`` goes with them (mode
"explicit": the four writes are ours) and, from the second call on, ``comparison_response_id``: the
previous answer, against which the server explains a miss (``prompt_cache_diagnostics``). All of it
only on models whose cache rules say explicit (GPT-5.6+); every OpenAI model gets the key.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tiny_agent.providers.cache_rules import OPENAI_EXPLICIT_TTL, CacheRules
from tiny_agent.providers.openai.cache import BREAKPOINT, KEY, OPTIONS
from tiny_agent.providers.responses.check import INPUT_PARTS, count_breakpoints
from tiny_agent.types import Prompt

__all__ = ["cache_fields", "mark_items"]


def mark_items(
    prompt: Prompt, groups: Sequence[Sequence[dict[str, Any]]], head: list[dict[str, Any]], rules: CacheRules
) -> list[dict[str, Any]]:
    """``head`` and every message's items, with a breakpoint on the last input block of each anchor
    the plan names: the system item, then the newest planned messages within the four writes (a
    planned message of results and then text gets one at the end of its results too: the request
    before it ended there). Marks go on copies."""
    flat = [*head, *(item for group in groups for item in group)]
    if rules.mode != "explicit" or BREAKPOINT in prompt.omit:
        return flat
    room = rules.max_breakpoints
    anchors: list[int] = []
    if prompt.cache.system and head and _markable(head[-1]):
        anchors.append(len(head) - 1)
        room -= 1
    starts, start = [], len(head)
    for group in groups:
        starts.append(start)
        start += len(group)
    planned: list[int] = []
    count = len(groups)
    for i in sorted({i % count for i in prompt.cache.message_indices if -count <= i < count}):
        group, first = groups[i], starts[i]
        kinds = [x.get("type") for x in group]
        ends = [
            first + j
            for j in range(len(kinds) - 1)
            if kinds[j] == "function_call_output" and kinds[j + 1] != "function_call_output"
        ]
        planned += [k for k in (*ends, first + len(group) - 1) if group and _markable(flat[k])]
    anchors.extend(planned[max(0, len(planned) - room) :] if room > 0 else ())
    for i in anchors:
        key = _parts_key(flat[i])
        parts = flat[i][key]
        flat[i] = {**flat[i], key: [*parts[:-1], {**parts[-1], BREAKPOINT: {"mode": "explicit"}}]}
    return flat


def cache_fields(prompt: Prompt, rules: CacheRules, items: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The top-level cache fields: the key for OpenAI's models; on GPT-5.6+ the options when an item
    carries a breakpoint, and the comparison id whenever there is a previous answer."""
    fields: dict[str, Any] = {}
    if rules.cache_key and prompt.cache_key and KEY not in prompt.omit:
        fields[KEY] = prompt.cache_key
    if rules.mode != "explicit" or OPTIONS in prompt.omit:
        return fields
    options: dict[str, Any] = {}
    if count_breakpoints(items):  # explicit mode with no breakpoint caches nothing
        options = {"mode": "explicit", "ttl": OPENAI_EXPLICIT_TTL}
    if prompt.previous_response_id:
        options["comparison_response_id"] = prompt.previous_response_id
    if options:
        fields[OPTIONS] = options
    return fields


def _parts_key(item: Mapping[str, Any]) -> str:
    return "output" if item.get("type") == "function_call_output" else "content"


def _markable(item: Mapping[str, Any]) -> bool:
    if item.get("type") == "message" and item.get("role") == "assistant":
        return False
    parts = item.get(_parts_key(item))
    return isinstance(parts, list) and bool(parts) and parts[-1].get("type") in INPUT_PARTS
