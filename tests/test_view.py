"""``tiny-agent view``: the server answers only with its token, and what the page shows is what the
engine recorded: each call's figures and miss cause, and the first divergence where the diagnosis put it."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tiny_agent.observe.view import ViewServer, serve
from tiny_agent.observe.view.data import diagnosed_break, diagnosed_character
from tiny_agent.store import open_store
from tiny_agent.store.base import CallQuery
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.testing import BillingFake

from .recorded import record, tour


def recorded(tmp_path: Path, location: str | None = None) -> tuple[str, str]:
    """A stored session whose system prompt says the time (a miss every call) and that compacts."""
    where = location or str(tmp_path / "s.db")
    with open_store(where) as store, BillingFake([tour(tmp_path, "iota", 4)]) as fake:
        sid = record(store, fake, tmp_path, "anthropic", "r", ["tour the iota files"], stamped=True)
    return where, sid


def get(server: ViewServer, path: str, token: str | None = None) -> tuple[int, bytes]:
    query = "" if token == "" else f"?token={server.token if token is None else token}"
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{server.port}{path}{query}", timeout=30) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def data(server: ViewServer, path: str) -> Any:
    status, body = get(server, path)
    assert status == 200, body
    return json.loads(body)


def test_a_wrong_or_missing_token_gets_403(tmp_path: Path) -> None:
    where, sid = recorded(tmp_path)
    with SQLiteStore(Path(where)) as store, serve(store, sid, open_browser=False) as server:
        assert server.url.startswith(f"http://127.0.0.1:{server.port}/?token=")
        for path in ("/", f"/api/session/{sid}", "/static/view.js", f"/api/session/{sid}/call/0"):
            assert get(server, path, token="")[0] == 403, path
            assert get(server, path, token="not-" + server.token)[0] == 403, path
            assert get(server, path)[0] == 200, path
        _, page = get(server, "/")
        assert server.token in page.decode() and sid in page.decode()
        assert get(server, f"/api/session/{sid}/call/99")[0] == 404
        assert get(server, "/api/session/another/call/0")[0] == 404
        assert get(server, f"/api/session/{sid}/drawn")[0] == 204, "the page's report that it is drawn"
        assert get(server, f"/api/session/{sid}/drawn", token="")[0] == 403


@pytest.mark.parametrize("store_at", ["sqlite", "postgresql"], indirect=True)
def test_the_page_shows_what_the_engine_recorded_and_diagnosed(tmp_path: Path, store_at: str) -> None:
    where, sid = recorded(tmp_path, store_at)
    with open_store(where) as store:
        rows = store.calls(CallQuery(sessions=(sid,)))
        events = store.events(CallQuery(sessions=(sid,)))
        server = serve(store, sid[:8], open_browser=False)
    with server:
        session = data(server, f"/api/session/{sid}")
        calls = session["calls"]
        assert len(calls) == len(rows) >= 5
        for call, row in zip(calls, rows, strict=True):
            assert (call["seq"], call["purpose"], call["miss"]) == (row.seq, row.purpose, row.miss)
            assert (call["input_tokens"], call["cache_read_tokens"], call["cache_write_tokens"]) == (
                row.input_tokens,
                row.cache_read_tokens,
                row.cache_write_tokens,
            )
            assert call["cost_usd"] == pytest.approx(row.cost_usd)
            assert call["uncached_tokens"] == row.input_tokens - row.cache_read_tokens - row.cache_write_tokens
            assert call["changed"] == list(row.changed)
        compactions = [e.seq for e in events if e.kind == "compaction"]
        assert [m["seq"] for m in session["marks"] if m["kind"] == "compaction"] == compactions
        checked = 0
        for call in calls:
            detail = data(server, f"/api/session/{sid}/call/{call['index']}")
            assert detail["ours"] == call["miss"], "the page says the cause the per-call line says"
            said = diagnosed_character(call["miss"])
            if call["purpose"] != "turn" or said is None or detail["between"]:
                continue
            assert detail["request"]["exact"] and detail["before"]["exact"], "redrawn as it was sent"
            divergence = detail["divergence"]
            assert (divergence["path"], divergence["character"]) == ("system[0]", said)
            assert detail["agrees"] is True
            shared = [b["shared"] for b in detail["request"]["blocks"]]
            assert shared[: divergence["block"]] == [True] * divergence["block"] and not any(
                shared[divergence["block"] :]
            )
            checked += 1
        assert checked >= 3


def test_the_what_ifs_are_the_replays(tmp_path: Path) -> None:
    where, sid = recorded(tmp_path)
    with SQLiteStore(Path(where)) as store, serve(store, sid, open_browser=False) as server:
        rows = data(server, f"/api/session/{sid}/whatif")["rows"]
        entries = store.entries(sid)
    from tiny_agent.whatif.replay import Policy, replay

    own = replay(entries, Policy())
    assert rows[0]["policy"] == "as recorded" and rows[0]["cost_usd"] == pytest.approx(own.recorded.cost_usd)
    hour = replay(entries, Policy(cache_ttl="1h")).replayed
    assert next(r for r in rows if r["policy"] == "cache-ttl=1h")["cost_usd"] == pytest.approx(hour.cost_usd)


def test_the_command_prints_the_url_and_serves_until_stopped(tmp_path: Path) -> None:
    where, sid = recorded(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    child = subprocess.Popen(
        [sys.executable, "-m", "tiny_agent", "view", sid[:8], "--no-browser", "--store", where],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert child.stdout is not None
        url = child.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and "?token=" in url
        with urllib.request.urlopen(url, timeout=30) as page:
            assert page.status == 200 and b"view.js" in page.read()
    finally:
        child.terminate()
        child.wait(timeout=30)
    assert child.returncode == 0, child.stderr.read() if child.stderr else ""


def test_a_stop_while_the_url_is_being_printed_stops_the_view_cleanly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """SIGTERM can be handled while the URL line is still being written (the warm-up thread holds the
    interpreter): the reader already has the URL, so that is a stop like any other, exit 0."""
    import click

    from tiny_agent.cli import app

    where, sid = recorded(tmp_path)
    written: list[str] = []
    echo = click.echo

    def echo_then_stopped(message: str, err: bool = False) -> None:
        written.append(message)
        echo(message, err=err)
        if len(written) == 1:
            app._on_sigterm(15, None)  # delivered as the line leaves

    monkeypatch.setattr(click, "echo", echo_then_stopped)
    monkeypatch.setattr(app, "_TERMINATED", [])  # what the handler notes stays in this test
    assert app.main(["view", sid[:8], "--no-browser", "--store", where]) == 0
    assert written[0].startswith("http://127.0.0.1:") and written[-1] == "view stopped"


def test_a_call_that_got_no_answer_is_failed_with_its_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As ``sessions show`` says it ("call failed: ..."), not "open" as if it were still on the wire."""
    from tiny_agent.cli.app import main

    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    where = str(tmp_path / "s.db")
    nowhere = ["--provider", "anthropic", "--base-url", "http://127.0.0.1:9", "--store", where]
    assert main([*nowhere, "--workspace", str(tmp_path), "hi"]) == 1  # nothing listens: connection refused
    with open_store(where) as store, serve(store, None, open_browser=False) as server:
        (call,) = data(server, f"/api/session/{server.view.info.id}")["calls"]
    assert call["status"] == "failed" and "cannot connect" in call["error"]


def test_no_session_to_view_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tiny_agent.cli.app import main

    assert main(["view", "--no-browser", "--store", str(tmp_path / "none.db")]) == 2
    assert "no session store at" in capsys.readouterr().err


def test_lint_the_view_and_the_diagnosis_name_the_same_cause_on_every_call(tmp_path: Path) -> None:
    from tiny_agent.context.byte_cause import leading_break
    from tiny_agent.observe.lint import lint_session
    from tiny_agent.observe.lint_breaks import BREAK_FIXES
    from tiny_agent.providers.cache_breaks import Break

    where, sid = recorded(tmp_path)
    with SQLiteStore(Path(where)) as store, serve(store, sid, open_browser=False) as server:
        findings = lint_session(store, sid)
        calls = server.view.session()["calls"]
        turns = [c for c in calls if c["purpose"] == "turn"]
        compared = 0
        for before, call in itertools.pairwise(turns):
            if call["index"] != before["index"] + 1:
                continue  # a summary call came between: the diagnosis compared with that one
            said = diagnosed_character(call["miss"])
            linted = [f for f in findings if f.source and f.source.endswith(f" call {call['index']}")]
            breaks = data(server, f"/api/session/{sid}/call/{call['index']}")["breaks"]
            changed = [f for f in linted if f.rule == "system-changed"]
            # every rule, not only the system prompt's: the line ends with the simulator's leading break
            lead = leading_break([Break(**b) for b in breaks], "anthropic")
            assert diagnosed_break(call["miss"]) == ((lead.rule, lead.path, lead.character) if lead else None)
            assert sorted((b["rule"], b["path"]) for b in breaks) == sorted(
                (f.rule, f.path) for f in linted if f.rule in BREAK_FIXES
            )
            if said is None:
                assert not changed and not [b for b in breaks if b["rule"] == "system-changed"]
                continue
            assert [(f.path, f"character {said}" in f.message) for f in changed] == [("system[0]", True)]
            assert (breaks[0]["rule"], breaks[0]["path"], breaks[0]["character"]) == (
                "system-changed",
                "system[0]",
                said,
            )
            compared += 1
        assert compared >= 3


def test_lint_reads_a_session_an_export_and_stdin(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    from tiny_agent.cli.app import main

    where, sid = recorded(tmp_path)
    assert main(["lint", "--session", sid[:8], "--store", where, "--json"]) == 1
    stored = json.loads(capsys.readouterr().out)
    assert not stored["clean"] and any(f["rule"] == "system-changed" for f in stored["findings"])
    export = tmp_path / "session.jsonl"
    assert main(["sessions", "export", sid, "--store", where, "-o", str(export)]) == 0
    capsys.readouterr()
    assert main(["lint", str(export), "--json"]) == 1
    exported = json.loads(capsys.readouterr().out)
    assert [(f["rule"], f["path"]) for f in exported["findings"]] == [
        (f["rule"], f["path"]) for f in stored["findings"]
    ]
    body = {"model": "claude-sonnet-4-6", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}
    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps(body, indent=2)))
    assert main(["lint", "-"]) == 0
    assert main(["lint"]) == 2


def test_a_port_in_use_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import socket

    from tiny_agent.cli.app import main

    where, sid = recorded(tmp_path)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code = main(["view", sid[:8], "--no-browser", "--port", str(port), "--store", where])
    err = capsys.readouterr().err
    assert code == 2 and f"cannot serve the view on 127.0.0.1:{port}" in err and "Traceback" not in err
