"""Adapter for the Anthropic Messages API, over the official ``anthropic`` SDK.

``render`` turns a ``Prompt`` into the exact ``/v1/messages`` body, ``cache_control`` markers
included; ``send`` posts it and ``stream`` posts it with ``stream: true``. The same adapter serves
llama.cpp's ``/v1/messages`` endpoint, which ignores the markers.

One mapping boundary: ``_boundary`` translates the SDK's and ``httpx2``'s exceptions (also those
raised while a stream is read, which the SDK leaves unwrapped), and the answer is read as raw JSON,
whole or accumulated from the stream's events into the same shape, by one ``_process``. So the two
paths cannot drift, and no answer can raise anything but ``tiny_agent.errors``.

Retries are ours (``providers/retry``), not the SDK's: its ``max_retries`` is 0.

Usage is normalised here: Anthropic's ``input_tokens`` EXCLUDES cached tokens, so the cache reads
and writes are added back to give ``Usage.input_tokens`` the whole prompt.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager, closing
from dataclasses import replace
from typing import Any, Unpack

import anthropic

from tiny_agent.errors import ConfigError
from tiny_agent.providers.anthropic.betas import request_betas, with_betas
from tiny_agent.providers.anthropic.compaction import (
    checked_trigger,
    compaction_fields,
    is_compaction,
    since_compaction,
)
from tiny_agent.providers.anthropic.reply import Accumulator, process
from tiny_agent.providers.anthropic.thinking import (
    THINKING_TYPES,
    rendered_thinking,
    thinking_fields,
    without_thinking,
)
from tiny_agent.providers.base import DEFAULT_MAX_TOKENS, Wire, render
from tiny_agent.providers.cache_rules import DEFAULT_TTL, Ttl
from tiny_agent.providers.decode import reading, sdk_boundary, whole_json
from tiny_agent.providers.endpoint import Endpoint, EndpointFields
from tiny_agent.providers.http_errors import (
    display_url,
    http_error,
    one_line,
    payload_error,
    status_error_class,
)
from tiny_agent.providers.profile import ProviderProfile, profile_for
from tiny_agent.providers.retry import (
    Call,
    check_timeout,
)
from tiny_agent.providers.streaming import OpenedStream, consume, open_stream
from tiny_agent.providers.thinking import OFF, Thinking, is_on
from tiny_agent.providers.thinking_check import checked
from tiny_agent.providers.thinking_sent import sent_max_tokens
from tiny_agent.providers.wire import checked_ttl
from tiny_agent.types import Message, ModelResponse, OnProviderEvent, Prompt, ReasoningBlock

__all__ = ["AnthropicProvider"]

log = logging.getLogger(__name__)


class AnthropicProvider:
    """A model endpoint speaking the Anthropic Messages wire format, at ``endpoint`` (an
    ``Endpoint``, or its fields as keywords: ``api_key``, ``base_url``, ``timeout``, ...).
    ``compact_threshold`` asks the server to compact past that many input tokens (at least 50,000)."""

    wire: Wire = "anthropic"

    def __init__(
        self,
        *,
        model: str,
        endpoint: Endpoint | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        context_window: int | None = None,
        cache_ttl: str = DEFAULT_TTL,
        thinking: Thinking = OFF,
        compact_threshold: int | None = None,
        **fields: Unpack[EndpointFields],
    ) -> None:
        self.endpoint = Endpoint.of(endpoint, **fields)
        self.compact_threshold = checked_trigger(compact_threshold, model)
        self.name = name = self.endpoint.name or "anthropic"
        self.cache_ttl: Ttl = checked_ttl(cache_ttl, "anthropic", name)
        """Lifetime of the cache entries this adapter asks for; a 1h entry costs 2x the input price to write."""
        self.model = model
        self.max_tokens = max_tokens
        """Output cap used when the prompt does not set its own."""
        self.key_env = key_env = self.endpoint.key_env
        self._profile = profile_for(
            name,
            "anthropic",
            model,
            cache_ttl=self.cache_ttl,
            context_window=context_window,
            free_count=True,
            max_tokens=max_tokens,
        )
        self._profile = replace(self._profile, thinking=checked(thinking, self._profile.thinking_caps, model))
        self._timeout = check_timeout(self.endpoint.timeout)
        self._policy = self.endpoint.retry_policy()
        self._client = anthropic.Anthropic(**self.endpoint.sdk_options("ANTHROPIC_API_KEY"))
        if self._client.api_key is None and self._client.auth_token is None and self._client.credentials is None:
            raise ConfigError(f"{name}: no API key: pass api_key or set {key_env or 'ANTHROPIC_API_KEY'}")
        self.url = display_url(str(self._client.base_url).rstrip("/") + "/v1/messages")
        """Where the calls go, as error messages show it."""
        official = str(self._client.base_url).rstrip("/") == "https://api.anthropic.com"
        self.cache_diagnostics = official
        """Ask the API why a cache missed (a beta that only api.anthropic.com knows; set it to ask
        another endpoint too)."""

    @property
    def profile(self) -> ProviderProfile:
        return self._profile

    def wire_messages(self, message: Message, names: dict[str, str]) -> list[dict[str, Any]]:
        # Thinking and compaction blocks go back exactly as received, in place; another wire's reasoning
        # has no field here.
        if not any(isinstance(b, ReasoningBlock) for b in message.content):
            return [message.to_dict()]
        content = [
            dict(b.item or {}) if isinstance(b, ReasoningBlock) else b.to_dict()
            for b in message.content
            if not isinstance(b, ReasoningBlock) or is_compaction(b.item)
        ]
        return [{"role": message.role, "content": content}]

    def assemble(self, prompt: Prompt, messages: Sequence[Sequence[dict[str, Any]]]) -> dict[str, Any]:
        """The ``/v1/messages`` body for ``prompt``, with at most four cache markers (on copies)."""
        system: list[dict[str, Any]] = [{"type": "text", "text": text} for text in prompt.system if text]
        tools: list[dict[str, Any]] = [
            {"name": t.name, "description": t.description, "input_schema": dict(t.input_schema)} for t in prompt.tools
        ]
        flat: list[dict[str, Any]] = [m for group in messages for m in group]
        marker: dict[str, Any] = {"type": "ephemeral", "ttl": "1h"} if self.cache_ttl == "1h" else {"type": "ephemeral"}
        room = self._profile.cache.max_breakpoints
        if prompt.cache.tools and tools and room:
            tools[-1]["cache_control"] = dict(marker)
            room -= 1
        if prompt.cache.system and system and room:
            system[-1]["cache_control"] = dict(marker)
            room -= 1
        indices = sorted({_message_index(i, len(flat)) for i in prompt.cache.message_indices})
        indices = [i for i in indices if _markable(flat[i]["content"]) is not None]
        # The newest breakpoints cover the longest prefix, so the oldest are the ones to give up.
        for i in indices[max(0, len(indices) - room) :] if room else ():
            content = list(flat[i]["content"])
            at = _markable(content)
            assert at is not None
            content[at] = {**content[at], "cache_control": dict(marker)}
            flat[i] = {**flat[i], "content": content}

        body: dict[str, Any] = {"model": self.model, "max_tokens": prompt.max_tokens or self.max_tokens}
        if system:
            body["system"] = system
        if tools:
            body["tools"] = tools
            if prompt.tool_choice == "none":
                body["tool_choice"] = {"type": "none"}
        body["messages"] = since_compaction(flat)  # the API drops what comes before the newest one
        caps = self._profile.thinking_caps
        # Thinking starts when a loop begun without it ends.
        thinking = rendered_thinking(self._profile.thinking, caps, body["messages"])
        if caps.thinks:  # a model without thinking is sent no switch for it, not even off
            body.update(thinking_fields(thinking, caps.switch_only))
        if not is_on(thinking, caps):
            body["messages"] = without_thinking(body["messages"])
        body.update(compaction_fields(self.compact_threshold))
        body["max_tokens"] = sent_max_tokens(body["max_tokens"], self._profile.thinking, caps)
        if self.cache_diagnostics:
            body["diagnostics"] = {"previous_message_id": prompt.previous_response_id}
        return body

    def render(self, prompt: Prompt) -> dict[str, Any]:
        """The ``/v1/messages`` body for ``prompt``, with at most four cache markers."""
        return render(self, prompt)

    def send(self, body: dict[str, Any], *, on_event: OnProviderEvent | None = None) -> ModelResponse:
        """Post ``body`` to ``/v1/messages``; every failure comes out as a ``tiny_agent.errors`` class."""
        return Call(self._policy, self.url, on_event).run(lambda: self._send_once(body))

    def _send_once(self, body: dict[str, Any]) -> ModelResponse:
        with self._boundary():
            raw = self._client.messages.with_raw_response.create(**self._sdk_arguments(body))
        with reading(self.name):
            data = whole_json(raw.http_response)
            self._check(None, data)
            return process(data, body.get("model", self.model))

    def stream(self, body: dict[str, Any], *, on_event: OnProviderEvent | None = None) -> ModelResponse:
        """Post ``body`` with ``stream: true``; ``on_event`` gets each ``TextDelta`` as it arrives.

        Retried only until the first event; a stream cut after it raises, and nothing partial is
        returned. Ctrl-C (``KeyboardInterrupt``) closes the connection and propagates."""
        call = Call(self._policy, self.url, on_event)
        opened = call.run(lambda: self._open({**body, "stream": True}))
        with call.finishing(), closing(opened):
            return consume(
                opened,
                provider=self.name,
                boundary=self._boundary,
                accumulator=Accumulator(),
                process=lambda data: process(data, body.get("model", self.model)),
                on_event=on_event,
            )

    def _open(self, body: dict[str, Any]) -> OpenedStream:
        with self._boundary():
            raw = self._client.messages.with_raw_response.create(**self._sdk_arguments(body))
            with reading(self.name):
                return open_stream(raw.http_response, self._check)

    def _sdk_arguments(self, body: dict[str, Any]) -> dict[str, Any]:
        """The body as the SDK's ``create`` takes it, with the beta headers its fields need."""
        return with_betas(_sdk_arguments(body), self._betas(body))

    def _betas(self, body: Mapping[str, Any]) -> list[str]:
        return request_betas(body, self._profile.thinking_caps.interleaved_header)

    def _check(self, event: str | None, payload: object) -> None:
        """Raise the error an answer or a stream event carries (``event: error``), if any."""
        error = payload_error(self.name, event, payload, status=200, key_env=self.key_env)
        if error is not None:
            raise error

    def _boundary(self) -> AbstractContextManager[None]:
        """The SDK's and ``httpx2``'s exceptions, during the call or while a stream is read, as ours."""
        sdk = (anthropic.APIStatusError, anthropic.APIConnectionError, anthropic.AnthropicError)
        return sdk_boundary(self.name, self._timeout, sdk, self._status_error)

    def _status_error(self, exc: anthropic.APIStatusError) -> Exception:
        body = exc.body
        error = body.get("error") if isinstance(body, Mapping) else None
        label = error.get("type") if isinstance(error, Mapping) else None
        detail = error.get("message") if isinstance(error, Mapping) else None
        if not isinstance(detail, str):
            detail = one_line(exc.response.text)[:200] if isinstance(body, str) else exc.message
        label = label if isinstance(label, str) else "error"
        kind = status_error_class(exc.status_code, f"{label} {detail}")
        return http_error(
            self.name,
            kind,
            status=exc.status_code,
            label=label,
            detail=detail,
            body=body,
            headers=dict(exc.response.headers),
            key_env=self.key_env,
        )

    def count_tokens(self, prompt: Prompt) -> int | None:
        """The API's own count (``/v1/messages/count_tokens``, free): one round trip, so the engine asks
        only after a compaction. None when the endpoint does not answer it (the estimate stands)."""
        body = self.render(prompt)
        asked: dict[str, Any] = {k: body[k] for k in _COUNTED if k in body}
        try:
            counted = self._client.messages.count_tokens(**with_betas(asked, self._betas(asked)))
        except anthropic.AnthropicError as exc:
            log.debug("count_tokens failed, the estimate stands: %s", exc)
            return None
        return int(counted.input_tokens)


_COUNTED = ("model", "messages", "system", "tools", "tool_choice", "thinking")
"""The body fields ``count_tokens`` takes."""
_UNKNOWN_TO_SDK = ("diagnostics", "context_management")
"""Body fields the SDK's ``messages.create`` does not take yet: they travel in ``extra_body``."""


def _sdk_arguments(body: dict[str, Any]) -> dict[str, Any]:
    """The body as the SDK's ``create`` takes it: fields it does not know yet travel in ``extra_body``."""
    extra = {k: body[k] for k in _UNKNOWN_TO_SDK if k in body}
    if not extra:
        return body
    return {**{k: v for k, v in body.items() if k not in extra}, "extra_body": extra}


def _markable(content: Sequence[Mapping[str, Any]]) -> int | None:
    """The last block of a message a cache breakpoint may go on: never a thinking block (a 400)."""
    return next((i for i in range(len(content) - 1, -1, -1) if content[i].get("type") not in THINKING_TYPES), None)


def _message_index(index: int, count: int) -> int:
    if not -count <= index < count:
        raise ValueError(f"cache plan marks message {index}, but the prompt has {count} messages")
    return index % count
