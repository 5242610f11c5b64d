"""A scripted provider for tests and examples: replies come from a list, requests are kept.

It renders with a real adapter's pure ``render`` (no network), so what it records is byte for byte
the body that adapter would send; only ``send`` is scripted. Usage is reported like a provider
that caches automatically: the longest prefix shared with the previous request counts as read.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any

from tiny_agent.context.diagnosis import first_difference
from tiny_agent.providers.adapters import wire_adapter
from tiny_agent.providers.base import Provider, Wire, render
from tiny_agent.providers.pricing import TokenPrices
from tiny_agent.providers.profile import ProviderProfile, profile_for
from tiny_agent.providers.streaming import whole_deltas
from tiny_agent.types import Message, ModelResponse, OnProviderEvent, Prompt, TextBlock, ToolUseBlock, Usage

__all__ = ["ScriptedProvider", "tool_call"]

Reply = Message | ModelResponse | BaseException | Callable[[dict[str, Any]], Message | ModelResponse]


def tool_call(name: str, call_id: str | None = None, text: str = "", **arguments: Any) -> Message:
    """An assistant message that calls one tool: ``tool_call("read_file", path="README.md")``."""
    blocks: tuple[TextBlock | ToolUseBlock, ...] = (TextBlock(text),) if text else ()
    return Message("assistant", (*blocks, ToolUseBlock(call_id or f"call_{uuid.uuid4().hex[:12]}", name, arguments)))


class ScriptedProvider:
    """A Provider whose answers are scripted: a Message, a ModelResponse, an exception to raise, or a
    function of the request body. Every sent body is appended to ``requests``."""

    def __init__(
        self,
        replies: Iterable[Reply],
        *,
        wire: Wire = "anthropic",
        model: str = "scripted",
        context_window: int | None = None,
        name: str = "scripted",
        prices: TokenPrices | None = None,
        pricing_id: str | None = None,
        **capabilities: Any,
    ) -> None:
        """``prices`` or ``pricing_id`` (a genai-prices provider) price its calls (unpriced by default);
        ``capabilities`` are profile flags (``cache_home``, ``tool_choice_keeps_prefix``, ...)."""
        self.replies = list(replies)
        self.wire: Wire = wire
        self.model = model
        self.name = name
        self.requests: list[dict[str, Any]] = []
        self._renderer = _renderer(wire, model)
        profile = profile_for(name, wire, model, pricing_id=pricing_id)
        if prices is not None:
            profile = replace(profile, prices=prices, pricing_id=None)
        self._profile = replace(profile, context_window=context_window, **capabilities)

    @property
    def profile(self) -> ProviderProfile:
        return self._profile

    def wire_messages(self, message: Message, names: dict[str, str]) -> list[dict[str, Any]]:
        return self._renderer.wire_messages(message, names)

    def assemble(self, prompt: Prompt, messages: Sequence[Sequence[dict[str, Any]]]) -> dict[str, Any]:
        return self._renderer.assemble(prompt, messages)

    def render(self, prompt: Prompt) -> dict[str, Any]:
        return render(self, prompt)

    def stream(self, body: dict[str, Any], *, on_event: OnProviderEvent | None = None) -> ModelResponse:
        """``send``, then the answer's reasoning and text as one delta each."""
        response = self.send(body)
        for delta in whole_deltas(response):
            if on_event is not None:
                on_event(delta)
        return response

    def send(self, body: dict[str, Any], *, on_event: OnProviderEvent | None = None) -> ModelResponse:
        self.requests.append(body)
        if not self.replies:
            raise AssertionError("ScriptedProvider ran out of replies")
        reply = self.replies.pop(0)
        if isinstance(reply, BaseException):
            raise reply
        if callable(reply):
            reply = reply(body)
        if isinstance(reply, ModelResponse):
            return reply
        stop = "tool_use" if reply.tool_uses else "end_turn"
        return ModelResponse(reply, self._usage(body, reply), stop, self.model)

    def _usage(self, body: dict[str, Any], reply: Message) -> Usage:
        text = _prompt_text(body)
        previous = _prompt_text(self.requests[-2]) if len(self.requests) > 1 else ""
        shared = first_difference(text, previous)
        return Usage(
            input_tokens=len(text) // 4 + 1,
            output_tokens=len(json.dumps(reply.to_dict())) // 4 + 1,
            cache_read_tokens=shared // 4,
            cache_write_tokens=None,
        )

    def count_tokens(self, prompt: Prompt) -> int | None:
        return None


def _prompt_text(body: dict[str, Any]) -> str:
    # Prefix order of a real cache: tools, then system, then the conversation.
    parts = {k: body.get(k) for k in ("tools", "system", "messages")}
    return json.dumps(parts, ensure_ascii=False)


def _renderer(wire: Wire, model: str) -> Provider:
    return wire_adapter(wire, model, api_key="scripted")
