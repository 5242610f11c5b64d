"""Bytes that are not UTF-8, in every place a run takes text from: a file name, a file's contents, the
task on stdin, an argument, an environment value, an MCP server's output and a hook's. Each run
ends without a traceback, ``--json`` prints its object, and no empty session is left behind. The
CLI runs against the billing fake (the Anthropic wire, through the real SDK)."""

from __future__ import annotations

import json
import os
import shlex
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.mcp_servers import kit
from tests.mcp_servers.kit import SERVER, Cli, Ran
from tests.recorded import ENV
from tiny_agent.testing import BillingFake, Task
from tiny_agent.text import decode, from_os, scrub

TASKS = [
    Task("list the sub folder", [[("list_dir", {"path": "sub"})]], "Listed."),
    Task("read the escaped name", [[("read_file", {"path": "sub/bad\\xffname.txt"})]], "Read it."),
    Task("read the latin file", [[("read_file", {"path": "latin.txt"})]], "Read."),
    Task("review this", [], "Reviewed."),
    Task("echo through the server", [[("echo", {"text": "café"})]], "Echoed."),
    Task("write the plan", [[("write_file", {"path": "plan.txt", "content": "x"})]], "Tried."),
]
LATIN_WRAPPER = """\
import subprocess, sys
child = subprocess.Popen([sys.executable, {server!r}], stdout=subprocess.PIPE)
for line in child.stdout:  # the server's UTF-8 (or escaped) é, sent as one Latin-1 byte
    sys.stdout.buffer.write(line.replace(b"\\xc3\\xa9", b"\\xe9").replace(b"\\\\u00e9", b"\\xe9"))
    sys.stdout.buffer.flush()
"""
REFUSE_LATIN = "import sys; sys.stdin.read(); sys.stderr.buffer.write(b'no caf\\xe9 today'); sys.exit(2)"


@pytest.fixture
def fake() -> Iterator[BillingFake]:
    with BillingFake(TASKS) as server:
        yield server


cli = kit.cli


def requests_text(fake: BillingFake, route: str = "r") -> str:
    return "\n".join(json.dumps(bill.body, ensure_ascii=False) for bill in fake.bills(route))


def sessions(cli: Cli) -> int:
    with sqlite3.connect(cli.store) as db:
        return int(db.execute("SELECT count(*) FROM sessions").fetchone()[0])


def answered(ran: Ran) -> dict[str, object]:
    assert "Traceback" not in ran.err, ran.err
    payload: dict[str, object] = json.loads(ran.out)
    return payload


def test_the_rule() -> None:
    assert decode("café".encode()).encoding == "utf-8"
    latin = decode("café crème".encode("latin-1"))
    assert latin == "café crème" and latin.encoding == "cp1252"
    assert decode(b"\x81\xe9").encoding == "latin-1", "a byte cp1252 leaves undefined"
    assert decode("naïve".encode("utf-16")).encoding == "utf-16"
    assert from_os("review caf\udce9") == "review café", "argv's escaped byte decoded again"
    assert from_os("plain") == "plain"
    assert scrub("a\ud800b") == "a\ufffdb"


def test_a_file_name_with_byte_ff_in_a_listed_folder(cli: Cli, fake: BillingFake) -> None:
    (cli.workspace / "sub").mkdir()
    with open(os.fsencode(cli.workspace) + b"/sub/bad\xffname.txt", "wb") as out:
        out.write(b"inside\n")
    assert answered(cli("--json", "list the sub folder"))["stop"] == "done"
    assert "bad\\\\xffname.txt  7 bytes" in requests_text(fake)
    assert answered(cli("--json", "read the escaped name"))["stop"] == "done"
    assert "inside" in json.dumps(fake.bills("r")[-1].body)


def test_a_latin1_file_is_read_and_said_so(cli: Cli, fake: BillingFake) -> None:
    (cli.workspace / "latin.txt").write_bytes("café crème brûlée\n".encode("latin-1"))
    assert answered(cli("--json", "read the latin file"))["stop"] == "done"
    assert "café crème brûlée\\n[latin.txt is not UTF-8: read as cp1252]" in requests_text(fake)


def test_a_latin1_task_on_stdin(cli: Cli, fake: BillingFake, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``git diff | tiny-agent "review this"`` on a Latin-1 repository."""
    piped = tmp_path / "diff.txt"
    piped.write_bytes("-caf\xe9\n+caf\xe9 cr\xe8me\n".encode("latin-1"))
    with piped.open() as stdin:
        monkeypatch.setattr(sys, "stdin", stdin)
        payload = answered(cli("--json", "review this"))
    assert payload["stop"] == "done" and payload["exit_code"] == 0
    assert "+café crème" in requests_text(fake)


def test_an_argument_that_is_not_utf8(cli: Cli, fake: BillingFake) -> None:
    """Python hands such a word over with its byte as a lone surrogate (surrogateescape)."""
    payload = answered(cli("--json", "review this caf\udce9"))
    assert payload["stop"] == "done"
    assert "review this café" in requests_text(fake)
    with sqlite3.connect(cli.store) as db:
        assert db.execute("SELECT title FROM sessions").fetchone()[0] == "review this café"


def test_an_environment_value_that_is_not_utf8(cli: Cli, fake: BillingFake, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-caf\udce9")
    ran = cli("--json", "review this")
    assert answered(ran)["exit_code"] == 2 and fake.bills("r") == []
    expected = "ANTHROPIC_API_KEY holds a character that no API key has (at position 7): copy the key again"
    assert ran.err == f"tiny-agent: {expected}, without quotes or spaces around it\n"
    monkeypatch.setenv("ANTHROPIC_API_KEY", ENV["ANTHROPIC_API_KEY"])
    monkeypatch.setenv("TINY_AGENT_MODEL", "m\udcff.gguf")
    monkeypatch.setenv("TINY_AGENT_STORE", "elsewhere\udcff.db")  # --store is given: not used
    assert answered(cli("--json", "review this"))["stop"] == "done"


def test_an_mcp_server_that_sends_latin1(cli: Cli, fake: BillingFake, tmp_path: Path) -> None:
    wrapper = tmp_path / "latin_mcp.py"
    wrapper.write_text(LATIN_WRAPPER.format(server=str(SERVER)))
    payload = answered(cli("--json", "--mcp", shlex.join([sys.executable, str(wrapper)]), "echo through the server"))
    assert payload["stop"] == "done"
    assert "echo: caf\ufffd" in requests_text(fake), "the byte is a replacement character, the run goes on"


def test_a_hook_that_answers_in_latin1(cli: Cli, fake: BillingFake) -> None:
    hook = f"PreToolUse={shlex.join([sys.executable, '-c', REFUSE_LATIN])}"
    payload = answered(cli("--json", "--hook", hook, "write the plan"))
    assert payload["stop"] == "done"
    assert "refused by a hook: no caf\ufffd today" in requests_text(fake)
    assert not (cli.workspace / "plan.txt").exists()


def test_a_run_that_fails_before_its_first_call_leaves_no_session_and_json_prints(cli: Cli, fake: BillingFake) -> None:
    ran = cli("--json", "--context-window", "10", "review this")
    assert ran.code == 2 and "Traceback" not in ran.err
    payload = json.loads(ran.out)
    assert payload["stop"] == "error" and payload["exit_code"] == 2 and "between 1,024" in str(payload["message"])
    ran = cli("--json", "--context-window", "2000", "review this")  # the default reply (4,096) cannot fit
    payload = json.loads(ran.out)
    assert payload["stop"] == "error" and "--max-tokens 4,096 (the default) leaves no room" in ran.err
    assert fake.bills("r") == [] and sessions(cli) == 0
