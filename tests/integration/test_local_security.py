"""The real llama.cpp server tiny-agent starts serves tiny-agent only: its key, and no web page.

A browser sends any page's requests to 127.0.0.1 too. The page cannot read the key (it lives in the
server's environment and in this process), so it is refused; and since the only CORS origin allowed
is the server's own, a browser would not let a page read an answer even if it had the key.
"""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tiny_agent.errors import AuthenticationError
from tiny_agent.providers.local.llama_server import LlamaServer, auth_headers
from tiny_agent.providers.local.provider import LocalProvider
from tiny_agent.types import Message, Prompt

pytestmark = pytest.mark.integration

EVIL = "http://evil.example"
CHAT = {"model": "m", "max_tokens": 1, "messages": [{"role": "user", "content": "hi"}]}
ENDPOINTS: list[tuple[str, str, dict[str, Any] | None]] = [
    ("POST", "/v1/chat/completions", CHAT),
    ("POST", "/v1/messages", CHAT),
    ("POST", "/completion", {"prompt": "hi", "n_predict": 1}),
    ("POST", "/tokenize", {"content": "hi"}),
    ("POST", "/apply-template", {"messages": CHAT["messages"]}),
    ("POST", "/v1/messages/count_tokens", CHAT),
    ("GET", "/props", None),
    ("GET", "/v1/models", None),
    ("GET", "/slots", None),
    ("GET", "/metrics", None),
]
"""What tiny-agent uses, and what a stranger would like to probe."""


def request(
    server: LlamaServer, method: str, path: str, body: dict[str, Any] | None, **headers: str
) -> httpx2.Response:
    return httpx2.request(method, f"{server.base_url}{path}", json=body, headers=headers, timeout=60.0)


@pytest.mark.parametrize(("method", "path", "body"), ENDPOINTS, ids=[e[1] for e in ENDPOINTS])
def test_a_request_without_the_key_is_refused(
    llama_server: LlamaServer, method: str, path: str, body: dict[str, Any] | None
) -> None:
    response = request(llama_server, method, path, body)
    assert response.status_code == 401, response.text
    assert "Invalid API Key" in response.text


@pytest.mark.parametrize(
    "headers",
    [{"Authorization": "Bearer not-the-key"}, {"X-Api-Key": "not-the-key"}, {"Authorization": "not-the-key"}],
    ids=["bearer", "x-api-key", "bare"],
)
def test_a_wrong_key_is_refused(llama_server: LlamaServer, headers: dict[str, str]) -> None:
    for method, path, body in ENDPOINTS[:3]:
        assert request(llama_server, method, path, body, **headers).status_code == 401, path


def test_the_right_key_is_served_on_every_endpoint_the_provider_uses(llama_server: LlamaServer) -> None:
    key = llama_server.api_key
    for wire in ("openai", "anthropic"):
        provider = LocalProvider(base_url=llama_server.base_url, api_key=key, wire=wire, max_tokens=2)
        prompt = Prompt(("Be brief.",), (), (Message.user("Say hi."),))
        assert provider.profile.context_window == llama_server.ctx_size  # /props
        counted = provider.count_tokens(prompt)  # /apply-template + /tokenize, or /v1/messages/count_tokens
        response = provider.send(provider.render(prompt))
        assert counted is not None and counted == response.usage.input_tokens
    assert request(llama_server, "GET", "/props", None, **auth_headers(key)).status_code == 200


def test_the_provider_with_a_wrong_key_fails_plainly(llama_server: LlamaServer) -> None:
    provider = LocalProvider(base_url=llama_server.base_url, api_key="not-the-key", max_tokens=2)
    prompt = Prompt(("Be brief.",), (), (Message.user("Say hi."),))
    assert provider.profile.context_window is None, "/props refused the key: the window is unknown"
    with pytest.raises(AuthenticationError):
        provider.send(provider.render(prompt))


def test_a_browser_style_cross_origin_request_is_refused(llama_server: LlamaServer) -> None:
    # A page may POST text/plain anywhere without a preflight; it cannot add the key.
    simple = httpx2.post(
        f"{llama_server.base_url}/v1/chat/completions",
        content=b'{"messages": [{"role": "user", "content": "hi"}], "max_tokens": 1}',
        headers={"Origin": EVIL, "Content-Type": "text/plain"},
        timeout=60.0,
    )
    assert simple.status_code == 401
    assert simple.headers.get("Access-Control-Allow-Origin") != EVIL

    # To send the key it must ask first (a preflight); the answer does not name its origin.
    preflight = httpx2.options(
        f"{llama_server.base_url}/v1/chat/completions",
        headers={
            "Origin": EVIL,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization, content-type",
        },
        timeout=10.0,
    )
    assert preflight.headers.get("Access-Control-Allow-Origin") == llama_server.base_url

    # Even a page that had the key could not read the answer.
    keyed = request(
        llama_server, "POST", "/tokenize", {"content": "hi"}, Origin=EVIL, **auth_headers(llama_server.api_key)
    )
    assert keyed.status_code == 200
    assert keyed.headers.get("Access-Control-Allow-Origin") == llama_server.base_url


def test_the_slots_endpoint_is_off_even_with_the_key(llama_server: LlamaServer) -> None:
    response = request(llama_server, "GET", "/slots", None, **auth_headers(llama_server.api_key))
    assert response.status_code != 200, response.text


def test_health_stays_public(llama_server: LlamaServer) -> None:
    """The one thing a stranger learns: whether the model has loaded."""
    assert httpx2.get(f"{llama_server.base_url}/health", timeout=5.0).status_code == 200


def test_the_key_is_not_on_the_command_line(llama_server: LlamaServer) -> None:
    assert llama_server.process is not None
    proc = Path(f"/proc/{llama_server.process.pid}")
    assert llama_server.api_key.encode() not in (proc / "cmdline").read_bytes()
    # Where it is: the environment, which only the owner (and root) may read.
    assert llama_server.api_key.encode() in (proc / "environ").read_bytes()
    assert stat.S_IMODE((proc / "environ").stat().st_mode) == 0o400
