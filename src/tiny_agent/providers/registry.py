"""Provider profiles and the choice of one: which endpoint, which key, which adapter.

A profile is an endpoint over an adapter (see ``base``): DeepSeek and Moonshot are profiles over the
OpenAI-compatible adapter, not adapters of their own. ``resolve_provider`` reads a mapping of
environment variables rather than ``os.environ`` directly, so selection is testable and explicit.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tiny_agent.errors import ConfigError
from tiny_agent.providers.adapters import wire_adapter
from tiny_agent.providers.base import Provider, Wire
from tiny_agent.providers.cache_rules import DEFAULT_TTL
from tiny_agent.providers.http_errors import check_base_url
from tiny_agent.providers.pricing import FREE, TokenPrices, maker_of, token_prices
from tiny_agent.providers.profile import PRICING_IDS, ProviderProfile, profile_for
from tiny_agent.providers.settings_check import SERVER_COMPACTION, check_settings
from tiny_agent.providers.thinking import OFF, as_thinking
from tiny_agent.providers.thinking_caps import openai_reasons
from tiny_agent.providers.thinking_check import SettingRefused
from tiny_agent.providers.wire import checked_ttl, wire_of

__all__ = [
    "APIS",
    "AUTO_ORDER",
    "LOCAL",
    "LOCAL_KEY_ENV",
    "PLACEHOLDER_KEY",
    "PROFILES",
    "PROVIDER_NAMES",
    "Profile",
    "choose_api",
    "offline_adapter",
    "offline_profile",
    "resolve_provider",
    "token_prices_at",
]

PLACEHOLDER_KEY = "not-needed"
"""Sent to a custom OpenAI-compatible server (such as llama.cpp) that needs no key; the SDK insists on one."""


@dataclass(frozen=True)
class Profile:
    """A named endpoint: where it is, how to authenticate, what to run by default."""

    name: str
    wire: Wire
    """The adapter that speaks to it."""
    base_url: str
    """Default endpoint, used when neither the caller nor ``base_url_env`` gives one."""
    key_env: str
    """Environment variable holding the API key."""
    default_model: str
    base_url_env: str | None = None
    """Environment variable that overrides ``base_url``, where the provider's own SDK honours one."""
    keyless_with_base_url: bool = False
    """A custom ``base_url`` may point at a server that needs no key (llama.cpp, vLLM, ...)."""


PROFILES: Mapping[str, Profile] = {
    p.name: p
    for p in (
        Profile(
            "anthropic",
            "anthropic",
            "https://api.anthropic.com",
            "ANTHROPIC_API_KEY",
            "claude-sonnet-4-6",
            base_url_env="ANTHROPIC_BASE_URL",
        ),
        Profile(
            "openai",
            "openai",
            "https://api.openai.com/v1",
            "OPENAI_API_KEY",
            "gpt-4o-mini",
            base_url_env="OPENAI_BASE_URL",
            keyless_with_base_url=True,
        ),
        # Served today (2026-12), thinking on by default; kimi-k2-0905-preview was discontinued in 2026.
        Profile("deepseek", "openai", "https://api.deepseek.com", "DEEPSEEK_API_KEY", "deepseek-v4-flash"),
        Profile("moonshot", "openai", "https://api.moonshot.ai/v1", "MOONSHOT_API_KEY", "kimi-k2.6"),
    )
}

LOCAL = "local"
LOCAL_KEY_ENV = "LLAMA_API_KEY"
"""The key of a llama.cpp server given with ``--provider local --base-url``: llama-server reads its
own key from the same variable."""
"""The embedded llama.cpp model: chosen when no remote provider is configured."""

AUTO_ORDER: tuple[tuple[tuple[str, ...], str], ...] = (
    (("ANTHROPIC_API_KEY",), "anthropic"),
    (("OPENAI_API_KEY", "OPENAI_BASE_URL"), "openai"),
    (("DEEPSEEK_API_KEY",), "deepseek"),
    (("MOONSHOT_API_KEY",), "moonshot"),
)
"""Automatic selection: the first profile with any of its variables set wins; with none, the local model."""

PROVIDER_NAMES: tuple[str, ...] = (*sorted(PROFILES), LOCAL)


def resolve_provider(
    name: str | None,
    *,
    model: str | None = None,
    base_url: str | None = None,
    env: Mapping[str, str] = os.environ,
    **kwargs: Any,
) -> Provider:
    """Build the provider called ``name``, or pick one from ``env`` when ``name`` is None.

    ``kwargs`` go to the adapter (``max_tokens``, ``timeout``, ``max_retries``, ``max_retry_wait``,
    ``http_client``, ...; the local provider gets those its constructor takes). Raises ``ConfigError``
    for an unknown name, a missing key, a base URL that is not an http(s) URL with a host, or when
    nothing is configured at all. ``api_key`` is the key (else the profile's variable holds it); the
    adapter is told the key's variable, for the message of a 401.
    ``thinking`` is a ``Thinking`` or what ``--thinking`` takes ("adaptive", "off", 4096).
    """
    if "thinking" in kwargs:
        kwargs["thinking"] = as_thinking(kwargs["thinking"])
    if name is None and not any(env.get(v) for variables, _ in AUTO_ORDER for v in variables):
        name = "openai" if base_url else LOCAL  # a server URL with no key: an OpenAI-compatible server
    local = name is not None and name.strip().lower() == LOCAL
    profile = None if local else _auto_profile(env) if name is None else _named_profile(name)
    if base_url is not None:
        base_url = check_base_url(base_url, LOCAL_KEY_ENV if profile is None else profile.key_env)
    if profile is None:
        check_settings(LOCAL, None, model or "the local model", kwargs)
        kwargs.pop("cache_ttl", None)  # llama.cpp keeps a prefix in its slot until another replaces it
        return _local(model, base_url, kwargs.pop("api_key", None) or env.get(LOCAL_KEY_ENV) or None, kwargs)
    url, key = _url_and_key(profile, base_url, kwargs.pop("api_key", None), env)
    common: dict[str, Any] = {
        "model": model or profile.default_model,
        "api_key": key,
        "base_url": url or profile.base_url,
        "name": profile.name,
        "key_env": profile.key_env,
    }
    wire = (
        "responses"
        if choose_api(profile.name, common["model"], url, kwargs.pop("api", None)) == "responses"
        else profile.wire
    )
    check_settings(profile.name, wire, common["model"], kwargs)
    for option, wires in WIRE_OPTIONS.items():  # options only some wires' adapters take
        if wire not in wires:
            kwargs.pop(option, None)
    ttl = checked_ttl(kwargs.pop("cache_ttl", DEFAULT_TTL), wire, profile.name)
    options = wire_of(wire).adapter_options(ttl, False)
    return wire_adapter(wire, **{**options, **common, **kwargs})


def _url_and_key(
    profile: Profile, base_url: str | None, given: str | None, env: Mapping[str, str]
) -> tuple[str | None, str]:
    """The endpoint given (or from the profile's URL variable, checked) and the API key (``api_key``
    given, else the profile's variable; a placeholder where the profile needs none at a URL of the user's)."""
    url = base_url or (env.get(profile.base_url_env) if profile.base_url_env else None) or None
    if url is not None and not base_url and profile.base_url_env:
        try:
            url = check_base_url(url, profile.key_env)
        except ConfigError as exc:
            raise ConfigError(f"{profile.base_url_env}: {exc}") from None
    key = given or env.get(profile.key_env) or None
    if key is not None and not (key.isascii() and key.isprintable()):
        at = next(i for i, ch in enumerate(key) if not (ch.isascii() and ch.isprintable()))
        raise ConfigError(
            f"{'api_key' if given else profile.key_env} holds a character that no API key has (at position {at + 1}): "
            "copy the key again, without quotes or spaces around it"
        )
    if key is None:
        if not (profile.keyless_with_base_url and url):
            raise ConfigError(f"provider {profile.name!r} needs {profile.key_env}")
        key = PLACEHOLDER_KEY
    return url, key


APIS = ("responses", "chat")
"""``--api`` for OpenAI: the Responses API or Chat Completions."""
WIRE_OPTIONS = {"stateful": ("responses",), "compact_threshold": tuple(SERVER_COMPACTION)}
"""Adapter options that only the adapters of these wires take (server-side compaction, state)."""


def choose_api(profile: str, model: str, base_url: str | None, api: str | None) -> str:
    """``api`` if given (OpenAI only), else ``responses`` for OpenAI's own reasoning models at OpenAI's
    own endpoint (their reasoning carries over between calls only there), ``chat`` for the rest."""
    if api is not None and api not in APIS:
        raise ConfigError(f"api must be one of {', '.join(APIS)}, not {api!r}")
    if profile != "openai":
        if api == "responses":
            raise ConfigError(f"--api responses is OpenAI's; {profile!r} speaks chat completions")
        return "chat"
    if api is not None:
        return api

    own = base_url is None or base_url.rstrip("/") == PROFILES["openai"].base_url
    return "responses" if own and openai_reasons(model) else "chat"


def offline_profile(
    name: str,
    model: str | None = None,
    *,
    cache_ttl: str = DEFAULT_TTL,
    context_window: int | None = None,
    api: str | None = None,
) -> ProviderProfile:
    """The profile of the provider called ``name`` without building it (no key, no server): what a
    replay prices and renders with. The local model's is the embedded model's (free, JSON tools)."""
    if name == LOCAL:
        from tiny_agent.providers.local.llama_process import EMBEDDED_MODEL_NAME

        return profile_for(
            LOCAL,
            "openai",
            model or EMBEDDED_MODEL_NAME,
            context_window=context_window,
            prices=FREE,
            tool_grammar=True,
            tool_choice_keeps_prefix=True,
        )
    known = PROFILES.get(name)
    if known is None:
        raise ConfigError(f"unknown provider {name!r}; known providers: {', '.join(PROVIDER_NAMES)}")
    ttl = checked_ttl(cache_ttl, known.wire, name)
    model = model or known.default_model
    wire: Wire = "responses" if choose_api(name, model, None, api) == "responses" else known.wire
    return profile_for(name, wire, model, cache_ttl=ttl, context_window=context_window)


def offline_adapter(profile: ProviderProfile, max_tokens: int | None = None) -> Provider:
    """An adapter that renders for ``profile``, its thinking settings too, and sends nothing (a key it
    never uses); ``max_tokens``: the output cap a run gave (None: the adapter's default)."""
    options = profile.wire_format.adapter_options(profile.cache_ttl, profile.tool_grammar)
    if max_tokens is not None:
        options["max_tokens"] = max_tokens
    if profile.thinking == OFF:
        return wire_adapter(profile.wire, profile.model, name=profile.name, **options)
    try:
        return wire_adapter(profile.wire, profile.model, name=profile.name, thinking=profile.thinking, **options)
    except SettingRefused:
        # A replay renders what a recording sent, which the model's declaration may refuse today (a
        # budget sent to Claude 5 before tiny-agent declared it takes none): set, not checked.
        adapter = wire_adapter(profile.wire, profile.model, name=profile.name, **options)
        adapter._profile = dataclasses.replace(adapter.profile, thinking=profile.thinking)  # type: ignore[attr-defined]
        return adapter


def token_prices_at(provider: str | None, model: str) -> TokenPrices | None:
    """Per-token prices of ``model`` at the endpoint named ``provider``: the local model is free; a
    library session that did not record its provider is priced at the model's maker (genai-prices)."""
    if provider == LOCAL:
        return FREE
    return token_prices(model, maker_of(model) if provider is None else PRICING_IDS.get(provider))


def _local(model: str | None, base_url: str | None, api_key: str | None, kwargs: dict[str, Any]) -> Provider:
    """The embedded model on a llama.cpp server on loopback. ``model`` is a GGUF path. A server it
    starts gets a fresh key of its own; a server at ``base_url`` gets ``api_key`` if it wants one."""
    from tiny_agent.providers.local.llama_process import EMBEDDED_MODEL_NAME
    from tiny_agent.providers.local.provider import LocalProvider, LocalTuning

    if model == EMBEDDED_MODEL_NAME:
        model = None  # sessions stored before 2026-11-30 remember the embedded model by its name
    if model is not None and not model.endswith(".gguf") and not os.path.isfile(model):
        raise ConfigError(f"the local provider takes --model PATH to a .gguf file, not {model!r}")
    # Only what its constructor takes (max_tokens, wire, tool_mode, ctx_size, ...): adapter options
    # such as an http_client do not apply to a server it starts itself.
    accepted = {*LocalTuning.__annotations__, "wire", "tool_mode", "max_tokens"}
    allowed = {k: v for k, v in kwargs.items() if k in accepted}
    return LocalProvider(model_path=model, base_url=base_url, api_key=api_key if base_url else None, **allowed)


def _named_profile(name: str) -> Profile:
    profile = PROFILES.get(name.strip().lower())
    if profile is None:
        known = ", ".join(PROVIDER_NAMES)
        raise ConfigError(f"unknown provider {name!r}; known providers: {known}")
    return profile


def _auto_profile(env: Mapping[str, str]) -> Profile:
    for variables, profile_name in AUTO_ORDER:
        if any(env.get(v) for v in variables):
            return PROFILES[profile_name]
    raise AssertionError("resolve_provider picks the local provider when nothing is configured")
