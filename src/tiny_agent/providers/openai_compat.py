"""Adapter for the OpenAI Chat Completions wire format, over the official ``openai`` SDK.

One adapter serves every endpoint that speaks Chat Completions: OpenAI itself, DeepSeek, Moonshot
and a llama.cpp server. Their differences are usage quirks, read here in one place: the cached part
of the prompt is ``prompt_tokens_details.cached_tokens`` (OpenAI, llama.cpp), DeepSeek's
``prompt_cache_hit_tokens`` or Moonshot's top-level ``cached_tokens``; llama.cpp also reports how long
it spent reading the prompt in ``timings.prompt_ms``.

The ``CachePlan`` is ignored: these providers cache a repeated prefix automatically, and the
engine's stable-first order is what makes the prefix repeat.

Retries are left to the SDK, as in the Anthropic adapter: it retries 408, 409, 429 and 5xx with
backoff, honours ``retry-after`` / ``retry-after-ms`` and never retries a 400.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from typing import Any, Literal, assert_never

import httpx2
import openai
from openai.types.chat import ChatCompletion, ChatCompletionMessageFunctionToolCall

from tiny_agent.errors import (
    ConfigError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeout,
)
from tiny_agent.providers import json_tools
from tiny_agent.providers.base import Wire
from tiny_agent.providers.http_errors import status_error_class
from tiny_agent.providers.pricing import context_window_of, price_usd
from tiny_agent.types import (
    INVALID_JSON_KEY,
    Block,
    Message,
    ModelResponse,
    OnProviderEvent,
    Prompt,
    TextBlock,
    TextDelta,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
)

__all__ = ["TOOL_MODES", "OpenAICompatProvider", "ToolMode"]

ToolMode = Literal["native", "json_schema"]
"""How tools reach the model. "native" uses the API's ``tools`` field; "json_schema" constrains the
reply to a JSON schema of the tools (see ``json_tools``), for models that cannot call tools."""

TOOL_MODES: tuple[ToolMode, ...] = ("native", "json_schema")


_PRICING_IDS = {"openai": "openai", "deepseek": "deepseek", "moonshot": "moonshotai"}
"""Profile name -> genai-prices provider id."""

_FINISH_REASONS = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens"}


class OpenAICompatProvider:
    """A model endpoint speaking the OpenAI Chat Completions wire format."""

    wire: Wire = "openai"

    def __init__(
        self,
        *,
        model: str,
        api_key: str | None = None,
        base_url: str | None = None,
        name: str = "openai",
        max_tokens: int = 4096,
        max_retries: int = 4,
        timeout: float = 120.0,
        http_client: httpx2.Client | None = None,
        context_window: int | None = None,
        pricing_provider_id: str | None = None,
        tool_mode: str = "native",
    ) -> None:
        # Typed ``str``: the mode usually comes from configuration, and an unknown one is the user's to fix.
        if tool_mode not in TOOL_MODES:
            raise ConfigError(f"tool_mode {tool_mode!r} is not supported; use one of: {', '.join(TOOL_MODES)}")
        self.name = name
        self.model = model
        self.max_tokens = max_tokens
        """Output cap used when the prompt does not set its own."""
        self.tool_mode = tool_mode
        self.pricing_provider_id = pricing_provider_id or _PRICING_IDS.get(name)
        """genai-prices provider id; None when the endpoint has no known price list."""
        self._context_window = context_window
        self._client = openai.OpenAI(
            api_key=api_key,
            base_url=base_url,
            max_retries=max_retries,
            timeout=timeout,
            http_client=http_client,
        )

    def render(self, prompt: Prompt) -> dict[str, Any]:
        """The ``/chat/completions`` body for ``prompt`` (non-streaming)."""
        if self.tool_mode == "json_schema" and prompt.tools:
            return self._render_json_tools(prompt)
        messages: list[dict[str, Any]] = []
        system = "\n\n".join(text for text in prompt.system if text)
        if system:
            messages.append({"role": "system", "content": system})
        for message in prompt.messages:
            messages.extend(_render_message(message))

        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": prompt.max_tokens or self.max_tokens,
            "messages": messages,
        }
        if prompt.tools:
            body["tools"] = [
                {
                    "type": "function",
                    "function": {"name": t.name, "description": t.description, "parameters": dict(t.input_schema)},
                }
                for t in prompt.tools
            ]
            if prompt.tool_choice == "none":
                body["tool_choice"] = "none"
        body["stream"] = False
        return body

    def _render_json_tools(self, prompt: Prompt) -> dict[str, Any]:
        # The tool list goes in the system text (stable, so still a cacheable prefix); the grammar
        # is only attached when tools may be called, so a summary call gets plain prose.
        system = "\n\n".join([*(text for text in prompt.system if text), json_tools.tool_instructions(prompt.tools)])
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": prompt.max_tokens or self.max_tokens,
            "messages": [{"role": "system", "content": system}, *json_tools.render_messages(prompt.messages)],
        }
        if prompt.tool_choice == "auto":
            body["response_format"] = json_tools.response_format(prompt.tools, prompt.tool_grammar)
        body["stream"] = False
        return body

    def send(self, body: dict[str, Any], *, on_event: OnProviderEvent | None = None) -> ModelResponse:
        """Post ``body`` to ``/chat/completions``; every failure comes out as a ``tiny_agent.errors`` class."""
        with _map_errors(self.name):
            response = self._client.chat.completions.create(**body)
        parsed = _parse_response(response, self.name)
        format_name = body.get("response_format", {}).get("json_schema", {}).get("name")
        if format_name == json_tools.SCHEMA_NAME:
            blocks = json_tools.parse_reply(parsed.message.text)
            stop = "tool_use" if any(isinstance(b, ToolUseBlock) for b in blocks) else parsed.stop_reason
            return replace(parsed, message=Message("assistant", blocks), stop_reason=stop)
        return parsed

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
        return context_window_of(self.model, self.pricing_provider_id)

    def count_tokens(self, prompt: Prompt) -> int | None:
        """None: counting would cost a round trip (or is not offered), so the engine estimates."""
        return None

    def price(self, usage: Usage) -> float | None:
        """Cost in USD at the provider's list price, or None when it is unknown."""
        return price_usd(usage, self.model, self.pricing_provider_id)


def _render_message(message: Message) -> list[dict[str, Any]]:
    """One of our messages as Chat Completions messages: tool results become ``tool`` messages."""
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    for block in message.content:
        match block:
            case TextBlock(text=text):
                texts.append(text)
            case ToolUseBlock(id=id_, name=name, input=input_):
                call = {"name": name, "arguments": json.dumps(dict(input_))}
                calls.append({"id": id_, "type": "function", "function": call})
            case ToolResultBlock(tool_use_id=tool_use_id, content=content, is_error=is_error):
                if is_error and not content.startswith("ERROR: "):
                    # The tool message has no error flag; the model must still see the failure.
                    content = "ERROR: " + content
                results.append({"role": "tool", "tool_call_id": tool_use_id, "content": content})
            case _:
                assert_never(block)
    text = "\n\n".join(texts)
    if message.role == "user":
        if calls:
            raise ValueError("a user message cannot carry tool_use blocks")
        return [*results, {"role": "user", "content": text}] if texts or not results else results
    if results:
        raise ValueError("an assistant message cannot carry tool_result blocks")
    rendered: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        rendered["tool_calls"] = calls
    elif not text:
        rendered["content"] = ""  # an assistant message needs content or tool_calls
    return [rendered]


def _parse_response(response: ChatCompletion, provider: str) -> ModelResponse:
    if not response.choices:
        raise ProviderError(f"{provider}: the response has no choices")
    choice = response.choices[0]
    blocks: list[Block] = []
    if choice.message.content:
        blocks.append(TextBlock(choice.message.content))
    for call in choice.message.tool_calls or ():
        if isinstance(call, ChatCompletionMessageFunctionToolCall):
            blocks.append(ToolUseBlock(call.id, call.function.name, _parse_arguments(call.function.arguments)))
    finish = str(choice.finish_reason)
    timings = (response.model_extra or {}).get("timings")
    prefill_ms = timings.get("prompt_ms") if isinstance(timings, Mapping) else None
    return ModelResponse(
        message=Message("assistant", tuple(blocks)),
        usage=_normalise_usage(response.usage.model_dump(exclude_unset=True) if response.usage else {}),
        stop_reason=_FINISH_REASONS.get(finish, finish),
        model=response.model,
        prefill_ms=float(prefill_ms) if isinstance(prefill_ms, int | float) else None,
    )


def _parse_arguments(raw: str) -> dict[str, Any]:
    """A tool call's arguments; malformed JSON is kept so the tool layer can report it to the model."""
    if not raw.strip():
        return {}  # some servers send "" for a call without arguments
    try:
        parsed = json.loads(raw)
    except json.JSONDecodeError:
        return {INVALID_JSON_KEY: raw}
    return parsed if isinstance(parsed, dict) else {INVALID_JSON_KEY: raw}


def _normalise_usage(raw: Mapping[str, Any]) -> Usage:
    details = raw.get("prompt_tokens_details")
    details = details if isinstance(details, Mapping) else {}
    cache_read = _first_int(details.get("cached_tokens"), raw.get("prompt_cache_hit_tokens"), raw.get("cached_tokens"))
    return Usage(
        input_tokens=_first_int(raw.get("prompt_tokens")),
        output_tokens=_first_int(raw.get("completion_tokens")),
        cache_read_tokens=cache_read,
        cache_write_tokens=_first_int(details.get("cache_write_tokens")),
        details=dict(raw),
    )


def _first_int(*values: object) -> int | None:
    return next((v for v in values if isinstance(v, int) and not isinstance(v, bool)), None)


@contextmanager
def _map_errors(provider: str) -> Iterator[None]:
    """Translate the SDK's exceptions (raised after its own retries) to ``tiny_agent.errors``."""
    try:
        yield
    except openai.APITimeoutError as exc:
        raise ProviderTimeout(f"{provider}: request timed out") from exc
    except openai.APIConnectionError as exc:
        raise ProviderConnectionError(f"{provider}: connection failed: {exc.message}") from exc
    except openai.APIStatusError as exc:
        status = exc.status_code
        body = exc.body  # the SDK has already unwrapped {"error": {...}}
        detail = str(body.get("message") or exc.message) if isinstance(body, Mapping) else exc.message
        message = f"{provider}: {status} {exc.type or exc.code or 'error'}: {detail}"
        kind = status_error_class(status, f"{exc.code} {exc.type} {detail}")
        raise kind(message, status_code=status, body=body, headers=dict(exc.response.headers)) from exc
