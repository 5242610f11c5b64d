"""Adapter for the OpenAI Chat Completions wire format, over the official ``openai`` SDK.

One adapter serves every endpoint that speaks Chat Completions: OpenAI itself, DeepSeek, Moonshot
and a llama.cpp server; their usage quirks are read in ``openai_reply``.

One mapping boundary: ``_boundary`` translates the SDK's and ``httpx2``'s exceptions (also those
raised while a stream is read), and the answer is read as raw JSON, whole or accumulated from the
stream's chunks into the same shape, by one ``openai_reply.process``. So the two paths cannot
drift, and no answer can raise anything but ``tiny_agent.errors``. Streams ask for usage
(``stream_options.include_usage``); without it the last chunk carries none.

Before GPT-5.6 the ``CachePlan`` is ignored: these providers cache a repeated prefix automatically,
and the engine's stable-first order is what makes the prefix repeat. GPT-5.6 and later take the
plan's breakpoints, and OpenAI's models a cache key (``openai_cache``).

Retries are ours (``providers/retry``), not the SDK's: its ``max_retries`` is 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import closing
from dataclasses import replace
from typing import Any, Literal, Unpack

import openai

from tiny_agent.errors import ConfigError
from tiny_agent.providers.base import DEFAULT_MAX_TOKENS, Wire, render
from tiny_agent.providers.decode import reading, whole_json
from tiny_agent.providers.endpoint import Endpoint, EndpointFields
from tiny_agent.providers.http_errors import (
    display_url,
)
from tiny_agent.providers.openai import json_tools
from tiny_agent.providers.openai.cache import as_parts, cache_fields, dropping_refused, mark_messages
from tiny_agent.providers.openai.messages import chat_messages
from tiny_agent.providers.openai.reasoning import echoed_reasoning, reasoning_fields, sdk_arguments, with_reasoning
from tiny_agent.providers.openai.reply import Accumulator, process
from tiny_agent.providers.openai.sdk import OpenAIErrors
from tiny_agent.providers.openai.token_count import count_chat_body, counts_offline
from tiny_agent.providers.profile import ProviderProfile, profile_for
from tiny_agent.providers.retry import (
    Call,
    check_timeout,
)
from tiny_agent.providers.streaming import OpenedStream, consume, open_stream
from tiny_agent.providers.thinking import OFF, Thinking
from tiny_agent.providers.thinking_caps import openai_reasons
from tiny_agent.providers.thinking_check import checked
from tiny_agent.types import (
    INVALID_JSON_KEY,
    Message,
    ModelResponse,
    OnProviderEvent,
    Prompt,
)

__all__ = ["INVALID_JSON_KEY", "TOOL_MODES", "OpenAICompatProvider", "ToolMode"]

ToolMode = Literal["native", "json_schema"]
"""How tools reach the model. "native" uses the API's ``tools`` field; "json_schema" constrains the
reply to a JSON schema of the tools (see ``json_tools``), for models that cannot call tools."""

TOOL_MODES: tuple[ToolMode, ...] = ("native", "json_schema")


class OpenAICompatProvider:
    """A model endpoint speaking the OpenAI Chat Completions wire format, at ``endpoint`` (an
    ``Endpoint``, or its fields as keywords: ``api_key``, ``base_url``, ``timeout``, ...)."""

    wire: Wire = "openai"

    def __init__(
        self,
        *,
        model: str,
        endpoint: Endpoint | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        context_window: int | None = None,
        pricing_provider_id: str | None = None,
        tool_mode: str = "native",
        thinking: Thinking = OFF,
        **fields: Unpack[EndpointFields],
    ) -> None:
        # Typed ``str``: the mode usually comes from configuration, and an unknown one is the user's to fix.
        if tool_mode not in TOOL_MODES:
            raise ConfigError(f"tool_mode {tool_mode!r} is not supported; use one of: {', '.join(TOOL_MODES)}")
        self.endpoint = Endpoint.of(endpoint, **fields)
        self.name = name = self.endpoint.name or "openai"
        self.model = model
        self.max_tokens = max_tokens
        """Output cap used when the prompt does not set its own."""
        self.tool_mode = tool_mode
        json_mode = tool_mode == "json_schema"
        self._profile = profile_for(
            name,
            "openai",
            model,
            pricing_id=pricing_provider_id,
            context_window=context_window,
            tool_grammar=json_mode,
            tool_choice_keeps_prefix=json_mode,
            free_count=not json_mode and counts_offline(model),
            max_tokens=max_tokens,
        )
        self._profile = replace(self._profile, thinking=checked(thinking, self._profile.thinking_caps, model))
        self.key_env = key_env = self.endpoint.key_env
        self._timeout = check_timeout(self.endpoint.timeout)
        self._errors = OpenAIErrors(self.name, self._timeout, key_env)
        self._policy = self.endpoint.retry_policy()
        try:
            self._client = openai.OpenAI(**self.endpoint.sdk_options("OPENAI_API_KEY"))
        except openai.OpenAIError as exc:  # no key given and none in the environment
            raise ConfigError(f"{name}: no API key: pass api_key or set {key_env or 'OPENAI_API_KEY'}") from exc
        self.url = display_url(str(self._client.base_url).rstrip("/") + "/chat/completions")
        """Where the calls go, as error messages show it."""

    @property
    def profile(self) -> ProviderProfile:
        return self._profile

    def wire_messages(self, message: Message, names: dict[str, str]) -> list[dict[str, Any]]:
        if self.tool_mode == "json_schema":
            return [json_tools.render_message(message, names)]
        rendered = chat_messages(message)
        if self._profile.thinking_caps.reasoning_content:
            if self._profile.thinks:
                rendered = [with_reasoning(m, message) for m in rendered]
        else:  # a model whose profile declares no reasoning: what it sent back goes back as it came
            rendered = [echoed_reasoning(m, message) for m in rendered]
        return [as_parts(m) for m in rendered] if self._profile.cache.mode == "explicit" else rendered

    def assemble(self, prompt: Prompt, messages: Sequence[Sequence[dict[str, Any]]]) -> dict[str, Any]:
        """The ``/chat/completions`` body for ``prompt`` (non-streaming); on GPT-5.6+ with the plan's
        cache breakpoints (on copies)."""
        if self.tool_mode == "json_schema" and prompt.tools:
            return self._json_tools_body(prompt, [m for group in messages for m in group])
        rules = self._profile.cache
        system = "\n\n".join(text for text in prompt.system if text)
        head = [{"role": "system", "content": system}] if system else []
        if rules.mode == "explicit":
            head = [as_parts(m) for m in head]
        # The SDK: max_tokens "is not compatible with o-series models"; max_completion_tokens counts reasoning too.
        cap = "max_completion_tokens" if openai_reasons(self.model) else "max_tokens"
        body: dict[str, Any] = {
            "model": self.model,
            cap: prompt.max_tokens or self.max_tokens,
            "messages": mark_messages(prompt, messages, head, rules),
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
        body.update(cache_fields(prompt, rules, body["messages"]))
        body.update(reasoning_fields(self._profile.thinking, self._profile.thinking_caps))
        body["stream"] = False
        return body

    def render(self, prompt: Prompt) -> dict[str, Any]:
        """The ``/chat/completions`` body for ``prompt`` (non-streaming)."""
        return render(self, prompt)

    def _json_tools_body(self, prompt: Prompt, messages: list[dict[str, Any]]) -> dict[str, Any]:
        # The tool list goes in the system text (stable, so still a cacheable prefix); the grammar
        # is only attached when tools may be called, so a summary call gets plain prose.
        system = "\n\n".join([*(text for text in prompt.system if text), json_tools.tool_instructions(prompt.tools)])
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": prompt.max_tokens or self.max_tokens,
            "messages": [{"role": "system", "content": system}, *messages],
        }
        if prompt.tool_choice == "auto":
            body["response_format"] = json_tools.response_format(prompt.tools, prompt.tool_grammar)
        body["stream"] = False
        return body

    def send(self, body: dict[str, Any], *, on_event: OnProviderEvent | None = None) -> ModelResponse:
        """Post ``body`` to ``/chat/completions``; every failure comes out as a ``tiny_agent.errors`` class.
        A 400 refusing a cache field is sent again without it (``openai_cache.dropping_refused``)."""
        return dropping_refused(
            body, lambda b: Call(self._policy, self.url, on_event).run(lambda: self._send_once(b)), on_event
        )

    def _send_once(self, body: dict[str, Any]) -> ModelResponse:
        with self._errors.boundary():
            raw = self._client.chat.completions.with_raw_response.create(**sdk_arguments(body))
        with reading(self.name):
            data = whole_json(raw.http_response)
            self._errors.check(None, data)
            return process(data, body.get("model", self.model), json_tools_mode=_json_tools_mode(body))

    def stream(self, body: dict[str, Any], *, on_event: OnProviderEvent | None = None) -> ModelResponse:
        """Post ``body`` as a stream; ``on_event`` gets each ``TextDelta`` as it arrives (in the JSON
        tool mode, the decoded text of the ``answer`` field; a tool call's JSON is not shown).

        Retried only until the first event; a stream cut after it raises, and nothing partial is
        returned. Ctrl-C (``KeyboardInterrupt``) closes the connection and propagates."""
        return dropping_refused(body, lambda b: self._stream_once(b, on_event), on_event)

    def _stream_once(self, body: dict[str, Any], on_event: OnProviderEvent | None) -> ModelResponse:
        call = Call(self._policy, self.url, on_event)
        streaming = {**body, "stream": True, "stream_options": {"include_usage": True}}
        opened = call.run(lambda: self._open(streaming))
        json_mode = _json_tools_mode(body)
        model = body.get("model", self.model)
        with call.finishing(), closing(opened):
            return consume(
                opened,
                provider=self.name,
                boundary=self._errors.boundary,
                accumulator=Accumulator(json_tools_mode=json_mode),
                process=lambda data: process(data, model, json_tools_mode=json_mode),
                on_event=on_event,
            )

    def _open(self, body: dict[str, Any]) -> OpenedStream:
        with self._errors.boundary():
            raw = self._client.chat.completions.with_raw_response.create(**sdk_arguments(body))
            with reading(self.name):
                return open_stream(raw.http_response, self._errors.check)

    def count_tokens(self, prompt: Prompt) -> int | None:
        """tiktoken's o200k count of the body, offline, for the models it knows (``free_count``); else
        None (the engine estimates)."""
        return count_chat_body(self.render(prompt)) if self._profile.free_count else None


def _json_tools_mode(body: Mapping[str, Any]) -> bool:
    """Whether ``body`` asks for the JSON of ``json_tools`` (grammar-constrained tool calls)."""
    response_format = body.get("response_format")
    schema = response_format.get("json_schema") if isinstance(response_format, Mapping) else None
    return isinstance(schema, Mapping) and schema.get("name") == json_tools.SCHEMA_NAME
