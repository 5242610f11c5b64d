"""``reasoning_content`` on Chat Completions (DeepSeek, Kimi): the request switches, the round trip,
and the rule a body must keep.

DeepSeek V4 and Kimi K2.6 think by default and return ``reasoning_content`` beside ``content``. An
assistant message that made tool calls must carry its ``reasoning_content`` in every later request,
or the API answers 400 (reasoning facts, section 6). The reply's reasoning becomes a
``ReasoningBlock`` at the start of the assistant message; the render puts it back on the message.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tiny_agent.providers.thinking import NO_THINKING, Thinking, ThinkingCaps
from tiny_agent.types import Block, Message, ReasoningBlock

__all__ = [
    "RULES",
    "echoed_reasoning",
    "reasoning_fields",
    "reasoning_of",
    "reasoning_problems",
    "sdk_arguments",
    "thinks_in",
    "with_reasoning",
]

RULES = {
    "reasoning-content-missing": "with thinking on, a tool-call assistant message must carry its reasoning_content",
    "reasoning-forced-tool-choice": "a forced tool_choice needs thinking disabled for that call",
    "reasoning-both-switches": "Kimi takes either thinking or reasoning_effort, never both",
}


def reasoning_fields(thinking: Thinking, caps: ThinkingCaps, forced_tool: bool = False) -> dict[str, Any]:
    """The body fields of ``thinking`` for a model with ``caps`` (sent through the SDK's ``extra_body``
    where the SDK has no such parameter). ``forced_tool``: this call forces a tool (then thinking is
    disabled for it, where the model refuses both)."""
    if not caps.reasoning_content:
        return {}
    fields: dict[str, Any] = {}
    mode = thinking.mode
    if forced_tool and not caps.forced_tool_choice:
        mode = "off"
    if mode == "off":
        fields["thinking"] = {"type": "disabled"}
    elif mode in ("enabled", "adaptive") or (caps.keep_all and mode == "default"):
        fields["thinking"] = {"type": "enabled", **({"keep": "all"} if caps.keep_all else {})}
    if thinking.effort and mode != "off" and (caps.effort_with_thinking or "thinking" not in fields):
        fields["reasoning_effort"] = thinking.effort
    return fields


def reasoning_of(message: Mapping[str, Any], model: str) -> list[Block]:
    """The reply message's ``reasoning_content`` as the blocks that open the assistant message."""
    text = message.get("reasoning_content")
    return [ReasoningBlock(text, None, model)] if isinstance(text, str) and text else []


def reasoning_problems(body: Mapping[str, Any], thinks: bool | None, caps: ThinkingCaps = NO_THINKING) -> list[str]:
    """What a thinking model's API refuses in ``body``. ``thinks``: the model reasons in this run; None
    for a body seen on its own (lint), where ``thinks_in`` reads it from the body and ``caps``."""
    problems: list[str] = []
    config = body.get("thinking")
    off = isinstance(config, Mapping) and config.get("type") == "disabled"
    # A ``keep`` is Kimi's alone: it names the model where no profile does.
    one_switch = not caps.effort_with_thinking or (isinstance(config, Mapping) and "keep" in config)
    if config is not None and "reasoning_effort" in body and one_switch:
        problems.append("reasoning-both-switches: thinking and reasoning_effort in one request")
    if not (thinks_in(body, caps) if thinks is None else thinks) or off:
        return problems
    choice = body.get("tool_choice")
    if not caps.forced_tool_choice and (isinstance(choice, Mapping) or choice == "required"):
        problems.append("reasoning-forced-tool-choice: a forced tool_choice with thinking on")
    messages: Sequence[Any] = body.get("messages") or []
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping) or message.get("role") != "assistant" or not message.get("tool_calls"):
            continue
        if "reasoning_content" not in message:
            problems.append(f"reasoning-content-missing: messages[{i}] made tool calls without its reasoning_content")
    return problems


def thinks_in(body: Mapping[str, Any], caps: ThinkingCaps) -> bool:
    """Whether the model of ``caps`` thinks for ``body``, from the body alone: its ``thinking`` switch,
    else the model's default, else whether an earlier reply came with reasoning_content (a model no
    profile declares)."""
    config = body.get("thinking")
    if isinstance(config, Mapping):
        return config.get("type") != "disabled"
    messages = [m for m in body.get("messages") or [] if isinstance(m, Mapping)]
    return caps.default_on or any("reasoning_content" in m for m in messages)


def echoed_reasoning(rendered: dict[str, Any], message: Message) -> dict[str, Any]:
    """An assistant message as rendered, with the ``reasoning_content`` it came with, if any: for a
    model no profile declares (a newer Kimi, a Qwen behind vLLM) that returned some, since a thinking
    server refuses a tool-loop turn sent back without it."""
    texts = [b.text for b in message.content if isinstance(b, ReasoningBlock) and b.item is None and b.text]
    if rendered.get("role") != "assistant" or not texts:
        return rendered
    return {**rendered, "reasoning_content": "".join(texts)}


def with_reasoning(rendered: dict[str, Any], message: Message) -> dict[str, Any]:
    """An assistant message as rendered, with its ``reasoning_content`` back on it. A tool-call turn
    made without reasoning (thinking was off then) gets an empty one: a thinking model refuses a
    tool-call message that has none."""
    if rendered.get("role") != "assistant":
        return rendered
    texts = [b.text for b in message.content if isinstance(b, ReasoningBlock) and b.item is None]
    if texts:
        return {**rendered, "reasoning_content": "".join(texts)}
    return {**rendered, "reasoning_content": ""} if rendered.get("tool_calls") else rendered


def sdk_arguments(body: Mapping[str, Any]) -> dict[str, Any]:
    """The body as the SDK's ``create`` takes it: ``thinking`` (no SDK parameter) in ``extra_body``."""
    if "thinking" not in body:
        return dict(body)
    rest = {k: v for k, v in body.items() if k != "thinking"}
    return {**rest, "extra_body": {"thinking": body["thinking"]}}
