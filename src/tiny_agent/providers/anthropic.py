"""Adapter for the Anthropic Messages API, over the official ``anthropic`` SDK.

``render`` turns a ``Prompt`` into the exact ``/v1/messages`` body, ``cache_control`` markers
included; ``send`` posts it and maps the answer back to ``tiny_agent.types``. The same adapter
serves llama.cpp's ``/v1/messages`` endpoint, which ignores the markers.

Retries are left to the SDK on purpose: it already retries 408, 409, 429 and every 5xx (529
"overloaded" included) with exponential backoff, honours ``retry-after`` / ``retry-after-ms`` and an
``x-should-retry`` header, and never retries a 400. A second retry loop on top would multiply the
attempts. ``max_retries`` is passed through; only the final failure reaches ``_map_errors``.

Usage is normalised here: Anthropic's ``input_tokens`` EXCLUDES cached tokens, so the cache reads
and writes are added back to give ``Usage.input_tokens`` the whole prompt.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anthropic
import httpx2

from tiny_agent.errors import (
    ProviderConnectionError,
    ProviderTimeout,
)
from tiny_agent.providers.base import Wire
from tiny_agent.providers.http_errors import status_error_class
from tiny_agent.providers.pricing import context_window_of, price_usd
from tiny_agent.types import (
    Block,
    Message,
    ModelResponse,
    OnProviderEvent,
    Prompt,
    TextBlock,
    TextDelta,
    ToolUseBlock,
    Usage,
)

__all__ = ["AnthropicProvider"]

MAX_CACHE_MARKERS = 4
"""Anthropic rejects a request with more than four ``cache_control`` blocks."""

_CACHE_MARKER = {"type": "ephemeral"}


class AnthropicProvider:
    """A model endpoint speaking the Anthropic Messages wire format."""

    wire: Wire = "anthropic"

    def __init__(
        self,
        *,
        model: str,
        api_key: str | None = None,
        base_url: str | None = None,
        name: str = "anthropic",
        max_tokens: int = 4096,
        max_retries: int = 4,
        timeout: float = 120.0,
        http_client: httpx2.Client | None = None,
        context_window: int | None = None,
    ) -> None:
        self.name = name
        self.model = model
        self.max_tokens = max_tokens
        """Output cap used when the prompt does not set its own."""
        self._context_window = context_window
        self._client = anthropic.Anthropic(
            api_key=api_key,
            base_url=base_url,
            max_retries=max_retries,
            timeout=timeout,
            http_client=http_client,
        )

    def render(self, prompt: Prompt) -> dict[str, Any]:
        """The ``/v1/messages`` body for ``prompt``, with at most four cache markers."""
        system = [{"type": "text", "text": text} for text in prompt.system if text]
        tools: list[dict[str, Any]] = [
            {"name": t.name, "description": t.description, "input_schema": dict(t.input_schema)} for t in prompt.tools
        ]
        messages: list[dict[str, Any]] = [m.to_dict() for m in prompt.messages]

        marked: list[dict[str, Any]] = []
        if prompt.cache.tools and tools:
            marked.append(tools[-1])
        if prompt.cache.system and system:
            marked.append(system[-1])
        indices = sorted({_message_index(i, len(messages)) for i in prompt.cache.message_indices})
        message_blocks = [messages[i]["content"][-1] for i in indices if messages[i]["content"]]
        # The newest breakpoints cover the longest prefix, so the oldest are the ones to give up.
        room = MAX_CACHE_MARKERS - len(marked)
        marked.extend(message_blocks[max(0, len(message_blocks) - room) :])
        for block in marked:
            block["cache_control"] = dict(_CACHE_MARKER)

        body: dict[str, Any] = {"model": self.model, "max_tokens": prompt.max_tokens or self.max_tokens}
        if system:
            body["system"] = system
        if tools:
            body["tools"] = tools
            if prompt.tool_choice == "none":
                body["tool_choice"] = {"type": "none"}
        body["messages"] = messages
        return body

    def send(self, body: dict[str, Any], *, on_event: OnProviderEvent | None = None) -> ModelResponse:
        """Post ``body`` to ``/v1/messages``; every failure comes out as a ``tiny_agent.errors`` class."""
        with _map_errors(self.name):
            response = self._client.messages.create(**body)
        return _parse_response(response)

    def stream(self, body: dict[str, Any], *, on_event: OnProviderEvent | None = None) -> ModelResponse:
        """Not streamed yet: the whole reply arrives as one delta."""
        response = self.send(body, on_event=on_event)
        if on_event is not None and response.message.text:
            on_event(TextDelta(response.message.text))
        return response

    def context_window(self) -> int | None:
        """The explicit window if one was given, else genai-prices' figure for the model, else None."""
        if self._context_window is not None:
            return self._context_window
        return context_window_of(self.model, "anthropic")

    def count_tokens(self, prompt: Prompt) -> int | None:
        """None: ``/v1/messages/count_tokens`` costs a network round trip, so the engine estimates."""
        return None

    def price(self, usage: Usage) -> float | None:
        """Cost in USD at Anthropic's list price, or None when the model is not in genai-prices."""
        return price_usd(usage, self.model, "anthropic")


def _message_index(index: int, count: int) -> int:
    if not -count <= index < count:
        raise ValueError(f"cache plan marks message {index}, but the prompt has {count} messages")
    return index % count


def _parse_response(response: anthropic.types.Message) -> ModelResponse:
    blocks: list[Block] = []
    for item in response.content:
        # Thinking and server-tool blocks are not part of tiny-agent's message model.
        if isinstance(item, anthropic.types.TextBlock):
            if item.text.strip():  # the API returns "" beside tool_use; sending it back is a 400
                blocks.append(TextBlock(item.text))
        elif isinstance(item, anthropic.types.ToolUseBlock):
            blocks.append(ToolUseBlock(item.id, item.name, dict(item.input)))
    return ModelResponse(
        message=Message("assistant", tuple(blocks)),
        usage=_normalise_usage(response.usage),
        stop_reason=response.stop_reason or "unknown",
        model=response.model,
    )


def _normalise_usage(usage: anthropic.types.Usage) -> Usage:
    read = usage.cache_read_input_tokens
    write = usage.cache_creation_input_tokens  # llama.cpp's /v1/messages never sends it
    return Usage(
        input_tokens=usage.input_tokens + (read or 0) + (write or 0),
        output_tokens=usage.output_tokens,
        cache_read_tokens=read,
        cache_write_tokens=write,
        details=usage.model_dump(mode="json", exclude_unset=True),
    )


@contextmanager
def _map_errors(provider: str) -> Iterator[None]:
    """Translate the SDK's exceptions (raised after its own retries) to ``tiny_agent.errors``."""
    try:
        yield
    except anthropic.APITimeoutError as exc:
        raise ProviderTimeout(f"{provider}: request timed out") from exc
    except anthropic.APIConnectionError as exc:
        raise ProviderConnectionError(f"{provider}: connection failed: {exc.message}") from exc
    except anthropic.APIStatusError as exc:
        status = exc.status_code
        detail = exc.api_message or exc.message
        message = f"{provider}: {status} {exc.type or 'error'}: {detail}"
        kind = status_error_class(status, detail)
        raise kind(message, status_code=status, body=exc.body, headers=dict(exc.response.headers)) from exc
