"""The thinking server's rules on each wire: what a body is answered with, and the reply with its thought."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tiny_agent.testing.claude_models import thinking_type
from tiny_agent.testing.thinking_server import ThinkingRules

__all__ = ["admit", "with_thought"]


Verdict = tuple[dict[str, Any] | None, dict[str, Any], tuple[Any, int] | None]
"""(the 400's body or None, the body the model reads, the reply's thinking and its tokens)."""


def admit(
    rules: ThinkingRules,
    body: dict[str, Any],
    wire: str,
    provider: str,
    headers: Any,
    opened: Mapping[str, Any] | None = None,
) -> Verdict:
    """What the thinking server makes of ``body`` on ``wire``: see ``Verdict``. ``opened``: the body
    the reply's thinking follows when the server compacted (it ends with the compaction block)."""
    return _ADMIT[wire](rules, body, provider, headers, opened)


def _admit_anthropic(
    rules: ThinkingRules, body: dict[str, Any], provider: str, headers: Any, opened: Mapping[str, Any] | None
) -> Verdict:
    admitted = rules.admit_anthropic(body, str(headers.get("anthropic-beta") or ""))
    if admitted.error is not None:
        return {"type": "error", "error": {"type": "invalid_request_error", "message": admitted.error}}, body, None
    on = thinking_type(body)[0] in ("enabled", "adaptive")
    thought = rules.think_anthropic(opened or body, opened is not None) if on else None
    return None, dict(admitted.body), thought


def _admit_openai(
    rules: ThinkingRules, body: dict[str, Any], provider: str, headers: Any, opened: Mapping[str, Any] | None
) -> Verdict:
    error = rules.admit_openai(body, provider)
    if error is not None:
        return (
            {"error": {"message": error, "type": "invalid_request_error", "code": "invalid_request_error"}},
            body,
            None,
        )
    text, tokens = rules.think_openai(body)
    return None, body, (text, tokens) if text else None


def with_thought(
    reply: dict[str, Any], wire: str, thought: tuple[Any, int], rules: ThinkingRules | None
) -> dict[str, Any]:
    return _WITH_THOUGHT[wire](reply, thought, rules)


def _anthropic_thought(reply: dict[str, Any], thought: tuple[Any, int], rules: ThinkingRules | None) -> dict[str, Any]:
    block, tokens = thought
    usage = {**reply["usage"], "output_tokens_details": {"thinking_tokens": tokens}}
    dropped = rules.transformations[-1] if rules is not None and rules.transformations else []
    extra = {"input_transformations": dropped} if dropped else {}
    return {**reply, "content": [block, *reply["content"]], "usage": usage, **extra}


def _openai_thought(reply: dict[str, Any], thought: tuple[Any, int], rules: ThinkingRules | None) -> dict[str, Any]:
    block, tokens = thought
    choice = reply["choices"][0]
    message = {**choice["message"], "reasoning_content": block}
    usage = {**reply["usage"], "completion_tokens_details": {"reasoning_tokens": tokens}}
    return {**reply, "choices": [{**choice, "message": message}], "usage": usage}


_ADMIT = {"anthropic": _admit_anthropic, "openai": _admit_openai}
_WITH_THOUGHT = {"anthropic": _anthropic_thought, "openai": _openai_thought}
