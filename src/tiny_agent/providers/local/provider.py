"""The embedded local model: a llama.cpp server behind one of the two adapters, no network.

A profile, not a third adapter: llama.cpp speaks OpenAI Chat Completions and Anthropic Messages,
so the local provider is the OpenAI adapter (default) or the Anthropic adapter pointed at a server
it started (or a warm one). What the profile adds: the context window from ``/props``, exact token
counts (``/apply-template`` + ``/tokenize``, or ``/v1/messages/count_tokens`` on the Anthropic
wire), a price of zero, and grammar-constrained JSON tool
calls for small models that cannot call tools by themselves.

The servers it starts (or the warm one) take a random API key that only this process and the warm
server's state file know; it goes with every request, the counting ones included.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Unpack

import httpx2

from tiny_agent.errors import LocalServerError
from tiny_agent.guide.json_guide import guide
from tiny_agent.guide.options import MAX_QUOTE, GuideOptions
from tiny_agent.providers.adapters import wire_adapter
from tiny_agent.providers.base import LOCAL_MAX_TOKENS, Provider, Wire, render
from tiny_agent.providers.cache_rules import DEFAULT_TTL
from tiny_agent.providers.http_errors import check_base_url, display_url
from tiny_agent.providers.local.llama_server import (
    DEFAULT_CTX_SIZE,
    EMBEDDED_MODEL_FILE,
    EMBEDDED_MODEL_NAME,
    LlamaServer,
    auth_headers,
    check_model,
    find_default_model,
    model_name,
    props,
    read_warm_server,
)
from tiny_agent.providers.local.tuning import LOCAL_TIMEOUT, LocalTuning, with_sampling
from tiny_agent.providers.openai.json_tools import SCHEMA_NAME, response_format
from tiny_agent.providers.pricing import FREE
from tiny_agent.providers.profile import ProviderProfile
from tiny_agent.providers.retry import DEFAULT_MAX_RETRIES, check_timeout
from tiny_agent.providers.wire import wire_of
from tiny_agent.types import Message, ModelResponse, OnProviderEvent, Prompt

__all__ = ["LOCAL_TIMEOUT", "LocalProvider", "LocalTuning"]

log = logging.getLogger(__name__)


ANSWER_OVERHEAD = 16
"""Tokens of the JSON around an answer (``{"answer": "...``) and its end."""
QUOTE_CHARS_FLOOR = 40
"""A quote is never bounded below this, however small ``max_tokens`` is."""


class LocalProvider:
    """A Provider over a llama.cpp server. Use it as a context manager: the server it starts stops
    when the block ends, whatever way it ends.

    ``base_url`` uses an existing server (with ``api_key`` if it wants one); otherwise a warm server
    (``tiny-agent local start``) is used if one runs, else a server is started for the lifetime of
    this provider.
    """

    name = "local"

    def __init__(
        self,
        *,
        model_path: str | Path | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        wire: Wire = "openai",
        tool_mode: str = "json_schema",
        max_tokens: int = LOCAL_MAX_TOKENS,
        **tuning: Unpack[LocalTuning],
    ) -> None:
        unknown = [k for k in tuning if k not in LocalTuning.__annotations__]
        if unknown:
            raise TypeError(f"LocalProvider: unknown keyword {unknown[0]!r}")
        guided, sampling = tuning.get("guided"), tuning.get("sampling")
        self.wire: Wire = wire
        self._timeout = check_timeout(tuning.get("timeout", LOCAL_TIMEOUT))
        self._max_retries = tuning.get("max_retries", DEFAULT_MAX_RETRIES)
        self.model_path = check_model(model_path) if model_path else None
        self.model = model_name(self.model_path) if self.model_path else EMBEDDED_MODEL_NAME
        if base_url:
            base_url = check_base_url(base_url, "LLAMA_API_KEY")
        self._given_url = base_url.rstrip("/").removesuffix("/v1") if base_url else None
        """A server the caller runs; the adapters add /v1 themselves, so a URL ending in it is accepted."""
        self._base_url = self._given_url
        self._given_key = api_key
        self._api_key = api_key
        self._tool_mode = tool_mode
        self._ctx_size = tuning.get("ctx_size", DEFAULT_CTX_SIZE)
        self._max_tokens = max_tokens
        self._use_warm = tuning.get("use_warm", True)
        self._guided_given = guided
        self.guided = (
            guided if guided is not None else (self.model_path is None or self.model_path.name == EMBEDDED_MODEL_FILE)
        )
        """Narrow each reply with ``json_guide`` (by default for the embedded 135M model only: it makes
        answers quotes of tool results, which a bigger model does not need)."""
        self.guide_options = dict(tuning.get("guide_options") or {})
        """Keywords for ``json_guide.guide``: each narrowing can be turned off (the benchmark's levers)."""
        self.sampling = dict(sampling or {})
        """Merged into every request body: ``temperature``, ``top_k``, ``top_p``, ``seed``..."""
        self._server: LlamaServer | None = None
        self._inner: Provider | None = None
        self._profile: ProviderProfile | None = None

    # -- lifecycle ----------------------------------------------------------------------------

    def start(self) -> LocalProvider:
        if self._inner is not None:
            return self
        if self._base_url is None:
            warm = read_warm_server() if self._use_warm else None
            if warm is not None and (self.model_path is None or Path(warm.model) == self.model_path):
                log.info("using the warm llama-server on port %d", warm.port)
                self._base_url, self._api_key = warm.base_url, warm.api_key
                self._serving(Path(warm.model))
            else:
                model = self.model_path or find_default_model()
                self._server = LlamaServer(model, ctx_size=self._ctx_size).start()
                self._base_url, self._api_key = self._server.base_url, self._server.api_key
                self._serving(model)
        self._inner = self._adapter(self._base_url)
        return self

    def _serving(self, model: Path) -> None:
        """The model the server really runs (a warm server's, or ``TINY_AGENT_MODEL``'s) names the
        provider, and decides the guide unless the caller did: a bigger model decodes freely."""
        self.model = model_name(model)
        if self._guided_given is None:
            self.guided = model.name == EMBEDDED_MODEL_FILE

    @property
    def _key_env(self) -> str | None:
        """Where a 401 sends the user: only a server they gave has a key they chose."""
        return "LLAMA_API_KEY" if self._given_url else None

    def _adapter(self, base_url: str) -> Provider:
        key = self._api_key or "none"  # the SDKs insist on a key; a server without one ignores it
        wire = wire_of(self.wire)
        return wire_adapter(
            self.wire,
            self.model,
            api_key=key,
            base_url=f"{base_url}{wire.sdk_path}",
            name="local",
            max_tokens=self._max_tokens,
            timeout=self._timeout,
            max_retries=self._max_retries,
            key_env=self._key_env,
            **wire.adapter_options(DEFAULT_TTL, self._tool_mode == "json_schema"),
        )

    def close(self) -> None:
        if self._server is not None:
            self._server.stop()
            self._server = None
        self._inner = None
        self._profile = None
        self._base_url, self._api_key = self._given_url, self._given_key

    def __enter__(self) -> LocalProvider:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def base_url(self) -> str:
        self.start()
        assert self._base_url is not None
        return self._base_url

    @property
    def inner(self) -> Provider:
        self.start()
        assert self._inner is not None
        return self._inner

    # -- the Provider protocol ----------------------------------------------------------------

    @property
    def profile(self) -> ProviderProfile:
        """The inner adapter's profile (free, a cache that lives in the server's slot) with what only
        the server knows: its window (``/props``), its address, and that it counts tokens exactly."""
        if self._profile is not None:
            return self._profile
        inner = self.inner.profile
        try:
            window = self._server_window()
        except LocalServerError as exc:  # not up (yet): its first call will say so; ask again next time
            log.debug("the window of %s is unknown for now: %s", self.base_url, exc)
            window = None
        profile = replace(
            inner,
            prices=FREE,  # a genuine zero: the model runs on this machine
            pricing_id=None,
            context_window=window or inner.context_window,
            counts_tokens=True,
            cache_home=display_url(self.base_url),
            model_is_display_name=True,
        )
        if window is not None:
            self._profile = profile
        return profile

    def wire_messages(self, message: Message, names: dict[str, str]) -> list[dict[str, Any]]:
        return self.inner.wire_messages(message, names)

    def assemble(self, prompt: Prompt, messages: Sequence[Sequence[dict[str, Any]]]) -> dict[str, Any]:
        body = self.inner.assemble(prompt, messages)
        if self.guided and body.get("response_format", {}).get("json_schema", {}).get("name") == SCHEMA_NAME:
            # Decoding only: the messages, and so the cached prefix, stay as the adapter rendered them.
            allowed = guide(prompt, GuideOptions(**{"max_quote": self._quote_chars, **self.guide_options}))
            body["response_format"] = response_format(allowed.tools, allowed.grammar, answer=allowed.answer)
        if self.sampling:
            body = with_sampling(body, self.sampling, self.wire)
        return body

    @property
    def _quote_chars(self) -> int:
        """The longest quote the reply can hold: a JSON answer within ``max_tokens`` (two characters a
        token is the worst case of short words and escaped newlines)."""
        return max(QUOTE_CHARS_FLOOR, min(MAX_QUOTE, (self._max_tokens - ANSWER_OVERHEAD) * 2))

    def render(self, prompt: Prompt) -> dict[str, Any]:
        return render(self, prompt)

    def send(self, body: dict[str, Any], *, on_event: OnProviderEvent | None = None) -> ModelResponse:
        return self.inner.send(body, on_event=on_event)

    def stream(self, body: dict[str, Any], *, on_event: OnProviderEvent | None = None) -> ModelResponse:
        return self.inner.stream(body, on_event=on_event)

    def _server_window(self) -> int | None:
        info = props(self.base_url, self._api_key)
        settings = info.get("default_generation_settings") or {}
        n_ctx = settings.get("n_ctx") or info.get("n_ctx")
        return int(n_ctx) if n_ctx else None

    def count_tokens(self, prompt: Prompt) -> int | None:
        """Exact: the server applies its chat template to the rendered messages and tokenizes it."""
        body = self.render(prompt)
        # /apply-template takes the OpenAI shape; an Anthropic body is counted by its own endpoint.
        return _COUNTERS.get(self.wire, LocalProvider._templated_count)(self, body)

    def _templated_count(self, body: dict[str, Any]) -> int | None:
        payload: dict[str, Any] = {"messages": body["messages"]}
        if body.get("tools"):
            payload["tools"] = body["tools"]
        text = self._post("/apply-template", payload).get("prompt", "")
        tokens = self._post("/tokenize", {"content": text, "add_special": True}).get("tokens", [])
        return len(tokens)

    def _messages_count(self, body: dict[str, Any]) -> int | None:
        return self._post("/v1/messages/count_tokens", body).get("input_tokens")

    def _post(self, path: str, payload: dict[str, Any]) -> dict[str, Any]:
        try:
            url = f"{self.base_url}{path}"
            response = httpx2.post(url, json=payload, headers=auth_headers(self._api_key), timeout=30.0)
            response.raise_for_status()
            return dict(response.json())
        except httpx2.HTTPError as exc:
            raise LocalServerError(f"llama-server {path} failed: {exc}") from exc


_COUNTERS: dict[Wire, Callable[[LocalProvider, dict[str, Any]], int | None]] = {
    "anthropic": LocalProvider._messages_count,
    "openai": LocalProvider._templated_count,
}
"""How llama-server counts a body of each wire exactly."""
