"""Credentials never shown: in a base URL, in the debug log, in what a server echoes back.

Credentials in ``--base-url`` (``http://user:pass@host``) are refused before anything is sent: the
HTTP client would send them as ``Authorization: Basic ...``, which replaces the API key's header.
A key in the base URL's query, and any ``Basic``/``Bearer`` value a server echoes back, is hidden
wherever keys are: the screen, the debug log, the stored ``call_failed`` entry, ``show``, ``export``.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.faults import server as faults
from tests.faults.kit import KITS, cli_env
from tests.faults.server import FaultServer, Handler
from tiny_agent.errors import ProviderHTTPError
from tiny_agent.providers.openai.adapter import OpenAICompatProvider
from tiny_agent.types import Message, Prompt

ANTHROPIC, OPENAI = KITS
SHORT_KEY = "k-7chr"
"""Shorter than a key redaction registers: only the Bearer pattern can hide it."""


def echo_authorization(status: int) -> faults.Fault:
    """An error that quotes the Authorization header the request came with, as some servers do."""

    def fault(h: Handler, body: dict[str, Any]) -> None:
        sent = h.headers.get("authorization", "(none)")
        faults.status(status, OPENAI.error("invalid_request_error", f"you sent Authorization: {sent}"))(h, body)

    return fault


def tiny_agent(tmp_path: Path, *argv: str, key: str = SHORT_KEY) -> subprocess.CompletedProcess[str]:
    env = cli_env(tmp_path, TINY_AGENT_STORE=str(tmp_path / "sessions.db"), OPENAI_API_KEY=key)
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    done = subprocess.run(
        [sys.executable, "-m", "tiny_agent", *argv],
        env=env,
        cwd=workspace,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Traceback" not in done.stderr, done.stderr
    return done


def written(tmp_path: Path) -> bytes:
    return b"".join(p.read_bytes() for p in tmp_path.rglob("*") if p.is_file())


def test_credentials_in_the_base_url_are_refused_before_anything_is_sent(server: FaultServer, tmp_path: Path) -> None:
    url = server.route(faults.reply(OPENAI.text("never")))
    with_credentials = url.replace("http://", "http://alice:pw-1234@") + "/v1"
    for argv in (["--provider", "openai", "--base-url", with_credentials], ["--base-url", with_credentials]):
        done = tiny_agent(tmp_path, *argv, "-v", "hello")
        lines = done.stderr.strip().splitlines()
        assert done.returncode == 2 and len(lines) == 1, done.stderr
        assert "OPENAI_API_KEY" in lines[0] and "user name and password" in lines[0]
        assert "pw-1234" not in done.stderr + done.stdout and "alice" not in done.stderr
    assert server.seen(url) == [], "nothing was sent"
    assert b"pw-1234" not in written(tmp_path)


def test_a_key_in_the_base_url_query_is_refused_and_never_logged(server: FaultServer, tmp_path: Path) -> None:
    """The SDKs put a base URL's query in the middle of every request path (``/v1?api_key=Qchat/completions``),
    and httpx logs that URL at -v: it is refused, like credentials, without showing it."""
    url = server.route(faults.reply(OPENAI.text("All fine.")))
    done = tiny_agent(
        tmp_path, "--provider", "openai", "--base-url", f"{url}/v1?api_key=query-s3cret-value", "-v", "hi"
    )
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert "has a query string (api_key)" in lines[0] and "OPENAI_API_KEY" in lines[0]
    assert "query-s3cret-value" not in done.stderr + done.stdout
    assert server.seen(url) == []
    assert b"query-s3cret-value" not in written(tmp_path)


def test_the_debug_log_shows_no_key_of_a_good_run(server: FaultServer, tmp_path: Path) -> None:
    url = server.route(faults.reply(OPENAI.text("All fine.")))
    done = tiny_agent(
        tmp_path, "--provider", "openai", "--base-url", f"{url}/v1", "-v", "hi", key="sk-debug-s3cret-key"
    )
    assert done.returncode == 0 and "DEBUG" in done.stderr and "HTTP Request: POST" in done.stderr
    assert "sk-debug-s3cret-key" not in done.stderr + done.stdout


def test_an_echoed_bearer_value_is_hidden_on_screen_in_the_store_and_in_exports(
    server: FaultServer, tmp_path: Path
) -> None:
    url = server.route(echo_authorization(500))
    done = tiny_agent(tmp_path, "--provider", "openai", "--base-url", f"{url}/v1", "--max-retries", "0", "hi")
    assert done.returncode == 1
    assert "you sent Authorization: Bearer [REDACTED]" in done.stderr, done.stderr
    assert SHORT_KEY in server.seen(url)[0].headers["authorization"], "the key was really sent"
    shown = tiny_agent(tmp_path, "sessions", "show", "--json", json.loads(listing(tmp_path))[0]["id"])
    exported = tiny_agent(tmp_path, "sessions", "export", json.loads(listing(tmp_path))[0]["id"])
    assert "Bearer [REDACTED]" in shown.stdout and "call_failed" in exported.stdout
    for text in (done.stderr, done.stdout, shown.stdout, exported.stdout):
        assert SHORT_KEY not in text
    assert SHORT_KEY.encode() not in written(tmp_path)


def listing(tmp_path: Path) -> str:
    return tiny_agent(tmp_path, "sessions", "list", "--json").stdout


def test_an_echoed_basic_value_is_hidden(server: FaultServer) -> None:
    """A client that does send Basic credentials (the library, given an HTTP client with auth)."""
    url = server.route(echo_authorization(400))
    basic = base64.b64encode(b"alice:pw").decode()
    provider = OpenAICompatProvider(
        model="m",
        api_key=SHORT_KEY,
        base_url=f"{url}/v1",
        max_retries=0,
        http_client=httpx2.Client(auth=("alice", "pw")),
    )
    body = provider.render(Prompt(("s",), (), (Message.user("hi"),)))
    with pytest.raises(ProviderHTTPError) as failed:
        provider.send(body)
    assert server.seen(url)[0].headers["authorization"] == f"Basic {basic}"
    assert "Basic [REDACTED]" in str(failed.value)
    assert basic not in str(failed.value) + json.dumps(failed.value.body)
