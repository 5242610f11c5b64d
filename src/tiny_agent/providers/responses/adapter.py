"""Adapter for the OpenAI Responses API, over the official ``openai`` SDK (``client.responses.create``).

Stateless by default, as the seed says the client owns the state: ``store: false``, the whole
``input`` rendered from the log each turn, and (for reasoning models) ``include:
["reasoning.encrypted_content"]`` so the reasoning items come back encrypted and are sent back as
received. ``previous_response_id`` is an opt-in (``stateful=True``): then the server keeps the
history and only the items after the last answer are sent, while the log still holds every item, so
a session survives a server that lost its state (turn it off and the whole input is rendered again).

The neutral model on this wire (``items``): an assistant's text is a ``message`` item (its ``phase``
kept), a tool call a ``function_call`` item (``call_id`` = the ``ToolUseBlock``'s id), a result a
``function_call_output``; a ``ReasoningBlock`` holding a reasoning or compaction item is sent as it
came, but only to the model that wrote it (encrypted content cannot be read by another: after a model
switch those items are left out, and the first request says so in one line that counts each item
once, as the count is a value of the prompt: ``items.unreadable``). Caching (``cache``): the
session's ``prompt_cache_key``, and on GPT-5.6+ explicit breakpoints on input blocks,
``prompt_cache_options`` and, from the second call on, the previous answer's id as
``comparison_response_id`` so the server says why it missed.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import closing
from dataclasses import replace
from typing import Any, Unpack

import openai

from tiny_agent.errors import ConfigError
from tiny_agent.providers.base import DEFAULT_MAX_TOKENS, Wire, render
from tiny_agent.providers.decode import reading, whole_json
from tiny_agent.providers.endpoint import Endpoint, EndpointFields
from tiny_agent.providers.http_errors import display_url
from tiny_agent.providers.openai.cache import dropping_refused
from tiny_agent.providers.openai.sdk import OpenAIErrors
from tiny_agent.providers.profile import ProviderProfile, profile_for
from tiny_agent.providers.responses import cache, items
from tiny_agent.providers.responses.reply import Accumulator, process
from tiny_agent.providers.retry import Call, check_timeout
from tiny_agent.providers.settings_check import checked_threshold
from tiny_agent.providers.streaming import OpenedStream, consume, open_stream
from tiny_agent.providers.thinking import OFF, Thinking, sent_effort
from tiny_agent.providers.thinking_caps import openai_reasons
from tiny_agent.providers.thinking_check import checked
from tiny_agent.types import Message, ModelResponse, OnProviderEvent, Prompt, ProviderNote

__all__ = ["ResponsesProvider"]


class ResponsesProvider:
    """A model endpoint speaking the OpenAI Responses API.

    ``thinking``'s effort is ``reasoning.effort`` (reasoning models only); ``stateful`` sends
    ``previous_response_id`` with ``store: true``; ``compact_threshold`` asks the server to compact the
    context once the input passes that many tokens (``context_management``). The rest is as for
    ``OpenAICompatProvider``."""

    wire: Wire = "responses"

    def __init__(
        self,
        *,
        model: str,
        endpoint: Endpoint | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        context_window: int | None = None,
        pricing_provider_id: str | None = None,
        thinking: Thinking | None = None,
        stateful: bool = False,
        compact_threshold: int | None = None,
        **fields: Unpack[EndpointFields],
    ) -> None:
        self.endpoint = Endpoint.of(endpoint, **fields)
        self.name = name = self.endpoint.name or "openai"
        self.model = model
        self.max_tokens = max_tokens
        self.stateful = stateful
        self.compact_threshold = checked_threshold(compact_threshold)
        self._profile = profile_for(
            name,
            "responses",
            model,
            pricing_id=pricing_provider_id,
            context_window=context_window,
            max_tokens=max_tokens,
        )
        # In the profile, as on the other wires: the call's fingerprint names it, so a redraw from the
        # log (diagnosis, lint, replay) renders the effort each request was sent with.
        caps = self._profile.thinking_caps
        self._profile = replace(self._profile, thinking=checked(thinking or OFF, caps, model))
        self.effort = sent_effort(self._profile.thinking, caps)
        self.key_env = key_env = self.endpoint.key_env
        self._timeout = check_timeout(self.endpoint.timeout)
        self._policy = self.endpoint.retry_policy()
        self._errors = OpenAIErrors(name, self._timeout, key_env)
        try:
            self._client = openai.OpenAI(**self.endpoint.sdk_options("OPENAI_API_KEY"))
        except openai.OpenAIError as exc:  # no key given and none in the environment
            raise ConfigError(f"{name}: no API key: pass api_key or set {key_env or 'OPENAI_API_KEY'}") from exc
        self.url = display_url(str(self._client.base_url).rstrip("/") + "/responses")
        self.dropped: dict[str, int] = {}
        """Reasoning items the newest render left out because another model wrote them, by that model:
        set (never added to) by each ``assemble``, so rendering a prompt again changes nothing."""
        self._told = False

    @property
    def profile(self) -> ProviderProfile:
        return self._profile

    def wire_messages(self, message: Message, names: dict[str, str]) -> list[dict[str, Any]]:
        explicit = self._profile.cache.mode == "explicit"
        return items.render_message(message, self.model, parts=explicit)

    def assemble(self, prompt: Prompt, messages: Sequence[Sequence[dict[str, Any]]]) -> dict[str, Any]:
        """The ``responses.create`` body for ``prompt`` (non-streaming); breakpoints on copies."""
        rules = self._profile.cache
        system = "\n\n".join(text for text in prompt.system if text)
        head = [items.system_item(system)] if system else []
        rendered = [list(g) for g in messages]
        groups = items.since_compaction(rendered)
        self.dropped = items.unreadable(prompt.messages[items.compaction_at(rendered) :], self.model)
        body: dict[str, Any] = {"model": self.model, "max_output_tokens": prompt.max_tokens or self.max_tokens}
        if self.stateful and prompt.previous_response_id:
            body["previous_response_id"] = prompt.previous_response_id
            body["input"] = items.after_last_answer(groups)
        else:
            body["input"] = cache.mark_items(prompt, groups, head, rules)
        if prompt.tools:
            body["tools"] = [items.tool(t) for t in prompt.tools]
            if prompt.tool_choice == "none":
                body["tool_choice"] = "none"
        body["store"] = self.stateful
        if openai_reasons(self.model):
            body["include"] = ["reasoning.encrypted_content"]
            if self.effort:
                body["reasoning"] = {"effort": self.effort}
        if self.compact_threshold:
            body["context_management"] = [{"type": "compaction", "compact_threshold": self.compact_threshold}]
        body.update(cache.cache_fields(prompt, rules, body["input"]))
        body["stream"] = False
        return body

    def render(self, prompt: Prompt) -> dict[str, Any]:
        return render(self, prompt)

    def send(self, body: dict[str, Any], *, on_event: OnProviderEvent | None = None) -> ModelResponse:
        """Post ``body`` to ``/responses``; every failure comes out as a ``tiny_agent.errors`` class.
        A 400 refusing a cache field is sent again without it (``openai.cache.dropping_refused``)."""
        self._tell_dropped(on_event)
        return dropping_refused(
            body, lambda b: Call(self._policy, self.url, on_event).run(lambda: self._send_once(b)), on_event
        )

    def _send_once(self, body: dict[str, Any]) -> ModelResponse:
        with self._errors.boundary():
            raw = self._client.responses.with_raw_response.create(**body)
        with reading(self.name):
            data = whole_json(raw.http_response)
            self._errors.check(None, data)
            return process(data, body.get("model", self.model))

    def stream(self, body: dict[str, Any], *, on_event: OnProviderEvent | None = None) -> ModelResponse:
        """Post ``body`` as a stream; ``on_event`` gets each ``TextDelta``. Retried only until the
        first event; a stream cut after it raises, and nothing partial is returned."""
        self._tell_dropped(on_event)
        return dropping_refused(body, lambda b: self._stream_once(b, on_event), on_event)

    def _stream_once(self, body: dict[str, Any], on_event: OnProviderEvent | None) -> ModelResponse:
        call = Call(self._policy, self.url, on_event)
        opened = call.run(lambda: self._open({**body, "stream": True}))
        model = body.get("model", self.model)
        with call.finishing(), closing(opened):
            return consume(
                opened,
                provider=self.name,
                boundary=self._errors.boundary,
                accumulator=Accumulator(),
                process=lambda data: process(data, model),
                on_event=on_event,
            )

    def _open(self, body: dict[str, Any]) -> OpenedStream:
        with self._errors.boundary():
            raw = self._client.responses.with_raw_response.create(**body)
            with reading(self.name):
                return open_stream(raw.http_response, self._errors.check)

    def _tell_dropped(self, on_event: OnProviderEvent | None) -> None:
        """One line, the first time: which reasoning this model could not read and was not sent."""
        if self.dropped and not self._told and on_event is not None:
            self._told = True
            on_event(ProviderNote(f"left out {items.cannot_read(self.model, self.dropped)}"))

    def count_tokens(self, prompt: Prompt) -> int | None:
        return None  # the engine estimates; the Responses API has no free count
