"""Extended thinking on the Messages wire: the request fields, the beta headers, and the rules a body
with thinking must keep (checked before every send, and by ``lint``).

The rules (reasoning facts, section 1): with thinking on, the final assistant message of a tool loop
starts with a thinking block; thinking blocks never carry ``cache_control``; ``tool_choice`` is
``auto`` or ``none``; a thinking block goes back signed (an interrupted stream's unsigned block never
does). Each problem starts with its rule id, which ``lint`` reports.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from tiny_agent.errors import ConfigError
from tiny_agent.providers.thinking import Thinking, ThinkingCaps, is_on

__all__ = [
    "BINDING_BETA",
    "INTERLEAVED_BETA",
    "RULES",
    "THINKING_TYPES",
    "betas_for",
    "cold",
    "is_thinking",
    "opens_cold",
    "rendered_thinking",
    "thinking_blocks",
    "thinking_fields",
    "thinking_on",
    "thinking_problems",
    "without_thinking",
]

THINKING_TYPES = frozenset({"thinking", "redacted_thinking"})
INTERLEAVED_BETA = "interleaved-thinking-2025-05-14"
BINDING_BETA = "thinking-binding-controls-2026-08-01"

RULES = {
    "thinking-final-assistant": "with thinking on, the final assistant message of a tool loop must start with thinking",
    "thinking-cache-control": "a thinking block cannot carry cache_control",
    "thinking-forced-tool-choice": "with thinking on, tool_choice must be auto or none",
    "thinking-unsigned": "a thinking block without its signature cannot be sent back",
    "thinking-disabled-final": "with thinking off, the final assistant message of a tool loop cannot carry thinking",
}
"""Rule id -> what it says."""


def thinking_fields(thinking: Thinking, switch_only: bool = False) -> dict[str, Any]:
    """The request fields for ``thinking``: ``thinking`` and ``output_config.effort``. ``switch_only``:
    the model's thinking is on or off, no budget (``ThinkingCaps.switch_only``), so "on" is ``enabled``."""
    fields: dict[str, Any] = {}
    config: dict[str, Any] | None = None
    if thinking.mode == "enabled":
        config = {"type": "enabled", "budget_tokens": thinking.budget}
    elif thinking.mode == "adaptive" or thinking.shapes_default:
        config = {"type": "enabled"} if switch_only else {"type": "adaptive"}
    elif thinking.mode == "off":
        config = {"type": "disabled"}
    if config is not None and config["type"] != "disabled":
        if thinking.display:
            config["display"] = thinking.display
        if thinking.binding == "drop_block":
            config["block_binding"] = {"prefix_mismatch_behavior": "drop_block"}
    if config is not None:
        fields["thinking"] = config
    if thinking.effort:
        fields["output_config"] = {"effort": thinking.effort}
    return fields


def thinking_on(body: Mapping[str, Any]) -> bool:
    config = body.get("thinking")
    return isinstance(config, Mapping) and config.get("type") in ("enabled", "adaptive")


def betas_for(body: Mapping[str, Any], interleaved: bool) -> list[str]:
    """The beta headers ``body``'s thinking fields need: interleaving for manual thinking with tools
    (where the model needs the header), block binding for ``drop_block``."""
    config = body.get("thinking")
    if not isinstance(config, Mapping):
        return []
    betas = []
    if interleaved and config.get("type") == "enabled" and body.get("tools"):
        betas.append(INTERLEAVED_BETA)
    if isinstance(config.get("block_binding"), Mapping):
        betas.append(BINDING_BETA)
    return betas


def thinking_problems(body: Mapping[str, Any], *, unasked: bool = False) -> list[str]:
    """What the thinking rules refuse in ``body`` (empty: legal). ``unasked``: the model thinks without
    a ``thinking`` field (the Claude 5 models, adaptively), so a body without one thinks."""
    messages: Sequence[Any] = body.get("messages") or []
    problems: list[str] = []
    on = thinking_on(body) or (unasked and body.get("thinking") is None)
    choice = body.get("tool_choice")
    if on and isinstance(choice, Mapping) and choice.get("type") in ("any", "tool"):
        problems.append(f"thinking-forced-tool-choice: tool_choice {choice.get('type')!r} with thinking on")
    for (i, j), block in thinking_blocks(body):
        if "cache_control" in block:
            problems.append(f"thinking-cache-control: messages[{i}].content[{j}] carries cache_control")
        if block.get("type") == "thinking" and not block.get("signature"):
            problems.append(f"thinking-unsigned: messages[{i}].content[{j}] has no signature")
    loop = _final_assistant(messages)
    if loop is not None:
        index, first = loop
        adaptive = _skips(body) or body.get("thinking") is None
        skipped = adaptive and not _thought(messages[index]) and skipped_step(messages)
        if on and first not in THINKING_TYPES and not skipped:
            problems.append(f"thinking-final-assistant: messages[{index}] starts with {first!r}, not thinking")
        if not on and body.get("thinking") is not None and first in THINKING_TYPES:
            problems.append(f"thinking-disabled-final: messages[{index}] carries thinking with thinking off")
    return problems


def _skips(body: Mapping[str, Any]) -> bool:
    """Adaptive thinking may leave a step unthought: its reply then opens with what it did."""
    config = body.get("thinking")
    return isinstance(config, Mapping) and config.get("type") == "adaptive"


def _thought(message: Any) -> bool:
    content = message.get("content") if isinstance(message, Mapping) else None
    return isinstance(content, list) and any(is_thinking(b) for b in content)


def _answers_tools(message: Mapping[str, Any]) -> bool:
    """Whether ``message`` carries tool results (a step of a tool loop, not the user's own words)."""
    content = message.get("content")
    return isinstance(content, list) and any(isinstance(b, Mapping) and b.get("type") == "tool_result" for b in content)


def _final_assistant(messages: Sequence[Any]) -> tuple[int, str] | None:
    """(index, type of its first block) of the assistant message whose tool calls the last message
    answers: the final assistant message of a tool loop; None outside a loop."""
    if len(messages) < 2 or not isinstance(messages[-1], Mapping) or not isinstance(messages[-2], Mapping):
        return None
    last, before = messages[-1], messages[-2]
    answers = _answers_tools(last)
    blocks = before.get("content")
    if not answers or before.get("role") != "assistant" or not isinstance(blocks, list) or not blocks:
        return None
    # A server compaction block opens the content; the thinking rule holds for what follows it.
    first = next((b for b in blocks if not (isinstance(b, Mapping) and b.get("type") == "compaction")), None)
    return len(messages) - 2, str(first.get("type")) if isinstance(first, Mapping) else "?"


def opens_cold(messages: Sequence[Any]) -> bool:
    """Whether the messages end inside a tool loop whose final assistant message carries no thinking
    (made while thinking was off, or a step adaptive thinking left unthought): the API keeps one
    thinking configuration per assistant turn, and a request that thinks there is refused
    (``thinking-final-assistant``), so it may not think yet."""
    loop = _final_assistant(messages)
    return loop is not None and loop[1] not in THINKING_TYPES


def cold(thinking: Thinking, own_measure: bool) -> Thinking:
    """``thinking`` turned off for one request of a loop begun without it (``opens_cold``): its effort
    stays, where the effort is not the thinking's own (Claude's effort shapes the answer too)."""
    return Thinking("off", effort=None if own_measure else thinking.effort)


def rendered_thinking(thinking: Thinking, caps: ThinkingCaps, messages: Sequence[Any]) -> Thinking:
    """The settings a request ending in ``messages`` renders for ``thinking``: off (``cold``) where a
    loop begun without thinking holds it back (``opens_cold``; Claude's rule: DeepSeek's Messages
    format thinks by its own measure and asks for none of them), else ``thinking`` itself. Where off
    cannot be sent (a model that always thinks, Opus 5 at xhigh or max), a step adaptive thinking
    left unthought goes out thinking, and a loop begun without thinking is a ``ConfigError``."""
    if not (is_on(thinking, caps) and not caps.own_measure and opens_cold(messages)):
        return thinking
    if caps.can_disable and (caps.off_efforts is None or thinking.effort in (None, *caps.off_efforts)):
        return cold(thinking, caps.own_measure)
    if skipped_step(messages):
        return thinking
    begun = "the session stopped inside a tool loop begun without thinking, which goes on without it until it ends"
    if not caps.can_disable:
        raise ConfigError(f"{begun}, and this model always thinks: end that loop on a model that can turn it off")
    efforts = ", ".join(caps.off_efforts or ())
    raise ConfigError(f"{begun}, and this model turns it off only at --effort {efforts}: give one until then")


def skipped_step(messages: Sequence[Any]) -> bool:
    """Whether the tool loop ``messages`` end in thought before its final assistant message, which did
    not (a step adaptive thinking left unthought; a loop begun without thinking never thought)."""
    for message in reversed(messages[:-2]):
        if not isinstance(message, Mapping):
            return False
        if message.get("role") == "assistant" and _thought(message):
            return True
        if message.get("role") != "assistant" and not _answers_tools(message):
            return False  # the user's own message: the loop began after it
    return False


def without_thinking(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``messages`` without their thinking, for a request that does not think. The API refuses thinking
    in the final assistant message of a loop then (``thinking-disabled-final``), and leaving it out
    of every message keeps the prefix the same from one such request to the next; the log keeps the
    blocks, and the first request that thinks again sends them back, as they came."""
    out = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, list) and any(is_thinking(b) for b in content):
            message = {**message, "content": [b for b in content if not is_thinking(b)]}
        out.append(message)
    return out


def is_thinking(block: Any) -> bool:
    """Whether ``block`` is a thinking or redacted_thinking block."""
    return isinstance(block, Mapping) and block.get("type") in THINKING_TYPES


def thinking_blocks(body: Mapping[str, Any]) -> Iterator[tuple[tuple[int, int], Mapping[str, Any]]]:
    """((message, block), block) of each thinking and redacted_thinking block of ``body``, in order."""
    for i, message in enumerate(body.get("messages") or []):
        content = message.get("content") if isinstance(message, Mapping) else None
        for j, block in enumerate(content if isinstance(content, list) else ()):
            if is_thinking(block):
                yield (i, j), block
