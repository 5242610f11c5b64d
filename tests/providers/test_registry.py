"""Provider selection from an explicit environment mapping; requests go to ``httpx2.MockTransport``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx2
import pytest

from tiny_agent.errors import ConfigError
from tiny_agent.providers.anthropic.adapter import AnthropicProvider
from tiny_agent.providers.base import Provider
from tiny_agent.providers.openai.adapter import OpenAICompatProvider
from tiny_agent.providers.registry import PROFILES, resolve_provider
from tiny_agent.types import Message, Prompt

# The SDK warns that the profile's default model (claude-sonnet-4-5) is deprecated; that is a
# product decision for the profile table, not something these selection tests check.
pytestmark = pytest.mark.filterwarnings("ignore:The model .* is deprecated:DeprecationWarning")

ANTHROPIC_REPLY = {
    "id": "msg_01",
    "type": "message",
    "role": "assistant",
    "model": "claude-haiku-4-5-20251001",
    "content": [{"type": "text", "text": "hi"}],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {"input_tokens": 3, "output_tokens": 1},
}
OPENAI_REPLY = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 1741569952,
    "model": "m",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
}


def first_request(provider: Provider, seen: list[httpx2.Request]) -> httpx2.Request:
    provider.send(provider.render(Prompt((), (), (Message.user("hello"),))))
    return seen[0]


def resolve(name: str | None, env: dict[str, str], **kwargs: Any) -> tuple[Provider, list[httpx2.Request]]:
    """Resolve, wiring in a mock transport that records what the provider sends."""
    seen: list[httpx2.Request] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        return httpx2.Response(200, json=ANTHROPIC_REPLY if request.url.path.endswith("/messages") else OPENAI_REPLY)

    client = httpx2.Client(transport=httpx2.MockTransport(handler))
    return resolve_provider(name, env=env, http_client=client, max_retries=0, **kwargs), seen


def credential(request: httpx2.Request) -> str:
    return request.headers.get("x-api-key") or request.headers.get("authorization") or ""


@pytest.mark.parametrize(
    ("env", "expected_name", "expected_url"),
    [
        ({"ANTHROPIC_API_KEY": "sk-a", "OPENAI_API_KEY": "sk-o"}, "anthropic", "https://api.anthropic.com/v1/messages"),
        (
            {"OPENAI_API_KEY": "sk-o", "DEEPSEEK_API_KEY": "sk-d"},
            "openai",
            "https://api.openai.com/v1/chat/completions",
        ),
        (
            {"DEEPSEEK_API_KEY": "sk-d", "MOONSHOT_API_KEY": "sk-m"},
            "deepseek",
            "https://api.deepseek.com/chat/completions",
        ),
        ({"MOONSHOT_API_KEY": "sk-m"}, "moonshot", "https://api.moonshot.ai/v1/chat/completions"),
        (
            {"ANTHROPIC_API_KEY": "", "MOONSHOT_API_KEY": "sk-m"},
            "moonshot",
            "https://api.moonshot.ai/v1/chat/completions",
        ),
    ],
)
def test_automatic_selection_follows_the_documented_order(
    env: dict[str, str], expected_name: str, expected_url: str
) -> None:
    provider, seen = resolve(None, env)
    assert provider.name == expected_name
    assert provider.model == PROFILES[expected_name].default_model
    request = first_request(provider, seen)
    assert str(request.url) == expected_url
    assert env[PROFILES[expected_name].key_env] in credential(request)


def test_the_wire_follows_the_profile() -> None:
    assert isinstance(resolve("anthropic", {"ANTHROPIC_API_KEY": "k"})[0], AnthropicProvider)
    for name in ("openai", "deepseek", "moonshot"):
        provider, _ = resolve(name, {PROFILES[name].key_env: "k"})
        assert isinstance(provider, OpenAICompatProvider)
        assert provider.wire == "openai"


def test_a_custom_openai_server_needs_no_key() -> None:
    provider, seen = resolve(None, {"OPENAI_BASE_URL": "http://127.0.0.1:8080/v1"}, model="qwen3-8b")
    assert provider.name == "openai"
    request = first_request(provider, seen)
    assert str(request.url) == "http://127.0.0.1:8080/v1/chat/completions"
    assert credential(request) == "Bearer not-needed"
    assert provider.model == "qwen3-8b"


def test_an_explicit_base_url_wins_over_the_environment() -> None:
    env = {"ANTHROPIC_API_KEY": "sk-a", "ANTHROPIC_BASE_URL": "http://gateway.internal"}
    provider, seen = resolve("anthropic", env)
    assert str(first_request(provider, seen).url) == "http://gateway.internal/v1/messages"
    provider, seen = resolve("anthropic", env, base_url="http://other.internal")
    assert str(first_request(provider, seen).url) == "http://other.internal/v1/messages"


def test_adapter_options_pass_through() -> None:
    provider, _ = resolve("Anthropic", {"ANTHROPIC_API_KEY": "k"}, model="claude-haiku-4-5", max_tokens=321)
    body = provider.render(Prompt((), (), (Message.user("x"),)))
    assert (provider.model, body["model"], body["max_tokens"]) == ("claude-haiku-4-5", "claude-haiku-4-5", 321)


def test_nothing_configured_falls_back_to_the_local_model() -> None:
    from tiny_agent.providers.local.provider import LocalProvider

    provider = resolve_provider(None, env={"ANTHROPIC_API_KEY": "", "HOME": "/root"})
    assert isinstance(provider, LocalProvider)
    assert (provider.name, provider.wire) == ("local", "openai")


def test_local_takes_a_gguf_path_not_a_model_name(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="gguf"):
        resolve_provider("local", model="gpt-4o", env={})
    not_gguf = tmp_path / "weights.gguf"
    not_gguf.write_bytes(b"nope")
    with pytest.raises(ConfigError, match="not a GGUF"):
        resolve_provider("local", model=str(not_gguf), env={})


def test_an_unknown_name_lists_the_known_ones() -> None:
    with pytest.raises(ConfigError) as caught:
        resolve_provider("gemini", env={})
    message = str(caught.value)
    assert "'gemini'" in message
    assert all(name in message for name in PROFILES)


@pytest.mark.parametrize("name", ["anthropic", "openai", "deepseek", "moonshot"])
def test_a_chosen_remote_profile_needs_its_key(name: str) -> None:
    others = {p.key_env: "k" for p in PROFILES.values() if p.name != name}
    with pytest.raises(ConfigError, match=f"^provider '{name}' needs {PROFILES[name].key_env}$"):
        resolve_provider(name, env=others)


@pytest.mark.parametrize("name", ["anthropic", "openai", "deepseek", "moonshot"])
def test_an_api_key_given_needs_no_variable_and_wins_over_it(name: str) -> None:
    provider, seen = resolve(name, {}, api_key="sk-given")
    assert "sk-given" in credential(first_request(provider, seen))
    provider, seen = resolve(name, {PROFILES[name].key_env: "sk-env"}, api_key="sk-given")
    assert "sk-given" in credential(first_request(provider, seen))
    with pytest.raises(ConfigError, match=r"^api_key holds a character that no API key has \(at position 3\)"):
        resolve_provider(name, env={}, api_key="sk\u00a0x")


def test_only_the_openai_profile_accepts_a_custom_server_without_key() -> None:
    with pytest.raises(ConfigError, match="DEEPSEEK_API_KEY"):
        resolve_provider("deepseek", env={}, base_url="http://127.0.0.1:8080")
    assert resolve_provider("openai", env={}, base_url="http://127.0.0.1:8080/v1").name == "openai"


@pytest.mark.parametrize("name", ["anthropic", "openai", "deepseek", "moonshot"])
def test_the_adapter_knows_which_variable_holds_its_key(name: str) -> None:
    provider, _ = resolve(name, {PROFILES[name].key_env: "k"})
    assert provider.key_env == PROFILES[name].key_env  # type: ignore[attr-defined]


@pytest.mark.parametrize("url", ["not a url", "localhost:8080", "ftp://host/v1", "http:///v1", "http://h:99999999/"])
def test_a_base_url_that_is_not_http_is_refused_before_anything_else(url: str) -> None:
    with pytest.raises(ConfigError, match=r"is not an http\(s\) URL with a host"):
        resolve_provider("anthropic", env={"ANTHROPIC_API_KEY": "k"}, base_url=url)
    with pytest.raises(ConfigError, match=r"is not an http\(s\) URL"):
        resolve_provider(None, env={}, base_url=url)  # before choosing the keyless OpenAI-compatible server


def test_a_bad_base_url_from_the_environment_names_the_variable() -> None:
    with pytest.raises(ConfigError, match=r"^OPENAI_BASE_URL: base URL 'not a url' is not an http\(s\) URL"):
        resolve_provider(None, env={"OPENAI_BASE_URL": "not a url"})


def test_timeout_and_retries_reach_the_adapter() -> None:
    provider, _ = resolve("openai", {"OPENAI_API_KEY": "k"}, timeout=7.5, max_retry_wait=3)
    assert provider._timeout == 7.5  # type: ignore[attr-defined]
    assert provider._policy.max_retries == 0  # type: ignore[attr-defined]  # resolve() passes max_retries=0
    assert provider._policy.max_retry_wait == 3  # type: ignore[attr-defined]
    with pytest.raises(ConfigError, match="timeout"):
        resolve("anthropic", {"ANTHROPIC_API_KEY": "k"}, timeout=0)


def test_the_local_provider_gets_only_the_options_it_takes() -> None:
    from tiny_agent.providers.local.provider import LocalProvider

    provider = resolve_provider("local", env={}, max_tokens=99, timeout=300, max_retries=1, http_client=None)
    assert isinstance(provider, LocalProvider)
    assert provider._max_tokens == 99


@pytest.mark.parametrize(
    ("cls", "variable"), [(AnthropicProvider, "ANTHROPIC_API_KEY"), (OpenAICompatProvider, "OPENAI_API_KEY")]
)
def test_an_adapter_without_any_key_is_a_config_error(
    monkeypatch: pytest.MonkeyPatch, cls: type[Any], variable: str
) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY", "OPENAI_ADMIN_KEY"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ConfigError, match=f"no API key: pass api_key or set {variable}$"):
        cls(model="m", base_url="http://127.0.0.1:9")
