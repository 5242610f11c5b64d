"""What the MCP and hook tests share: the test server's command lines, HTTP servers on 127.0.0.1 that
the tests start and stop, and the CLI run against the billing fake."""

from __future__ import annotations

import shlex
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.recorded import ENV, MODELS
from tiny_agent.cli.app import main
from tiny_agent.context.entry_codec import read
from tiny_agent.context.legality import check_anthropic_body
from tiny_agent.context.session import Session
from tiny_agent.providers.anthropic.adapter import AnthropicProvider
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.testing import BillingFake

SERVER = Path(__file__).resolve().parent / "server.py"
STARTUP = 60.0
"""Seconds an HTTP test server may take to listen (a loaded machine imports the SDK slowly)."""


def stdio(*args: str) -> str:
    """The ``--mcp`` command line of the test server."""
    return shlex.join([sys.executable, str(SERVER), *args])


@contextmanager
def http_server(*args: str) -> Iterator[str]:
    """The test server over streamable HTTP on 127.0.0.1; its URL. Stopped on the way out, also when
    the test failed."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, str(SERVER), "--port", str(port), *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + STARTUP
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the test MCP server did not listen on port {port}") from None
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@dataclass
class Ran:
    code: int
    out: str
    err: str

    @property
    def lines(self) -> list[str]:
        return self.err.splitlines()


class Cli:
    """``tiny-agent`` against the billing fake (the Anthropic wire), on one store and workspace."""

    def __init__(self, fake: BillingFake, root: Path, capsys: pytest.CaptureFixture[str], route: str = "r") -> None:
        self.fake, self.capsys, self.route = fake, capsys, route
        self.store = root / "sessions.db"
        self.workspace = root / "ws"
        self.workspace.mkdir(exist_ok=True)

    def __call__(self, *args: str) -> Ran:
        self.capsys.readouterr()
        flags = ["--provider", "anthropic", "--model", MODELS["anthropic"], "--no-stream"]
        flags += ["--base-url", self.fake.url(self.route, "anthropic"), "--store", str(self.store)]
        code = main([*flags, "--workspace", str(self.workspace), *args])
        seen = self.capsys.readouterr()
        return Ran(code, seen.out, seen.err)

    def session(self) -> str:
        with SQLiteStore(self.store) as store:
            return store.sessions(limit=1)[0].id


@pytest.fixture
def cli(fake: BillingFake, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Cli:
    """The CLI against the test's ``fake`` fixture, with the fake's keys in the environment."""
    for key, value in ENV.items():
        monkeypatch.setenv(key, value)
    return Cli(fake, tmp_path, capsys)


def assert_legal_and_stored(store_path: Path, fake: BillingFake, route: str) -> None:
    """The store is sound, every entry reads, every request the server got was legal, and a resume
    renders a legal request with nothing to repair."""
    with sqlite3.connect(store_path) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    for bill in fake.bills(route):
        assert check_anthropic_body(bill.body) == [], bill.body
    with SQLiteStore(store_path) as store:
        sid = store.sessions(limit=1)[0].id
        for entry in store.entries(sid):
            read(entry)
        with Session.resume(store, sid) as session:
            assert session.interrupted == [] and session.lost_calls == 0
            context = session.context
            context.add_user("go on")
            provider = AnthropicProvider(model=MODELS["anthropic"], api_key="unused")
            rendered = context.renderer.render(context.prompt(), provider)
            assert rendered.problems == ()
