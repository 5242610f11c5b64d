"""PostgreSQL as the store of the real CLI: one history that several hosts append to, sessions moved
between backends, and each way the server can fail: one line naming the server (never the password),
before a model call is paid where that is possible, and a paid reply never lost.

The provider is scripted; the server is a real PostgreSQL (``tests/conftest.py``: the one
``scripts/test`` started, or a throwaway cluster of this test run).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.conftest import PgServer
from tests.expect import one_line
from tests.pg_cluster import Cluster, free_port
from tests.test_cli_sessions import Script, feed, script, workspace
from tiny_agent.cli import main
from tiny_agent.errors import StoreUnavailable
from tiny_agent.redaction import display_url
from tiny_agent.store import open_store
from tiny_agent.store.location import shown_location
from tiny_agent.testing import tool_call
from tiny_agent.types import Entry, Message

__all__ = ["script", "workspace"]  # fixtures


def password_of(url: str) -> str:
    return url.split("://", 1)[1].split("@", 1)[0].split(":", 1)[1]


def entry_kinds(url: str, session_id: str) -> list[str]:
    with open_store(url) as store:
        return [e.kind for e in store.entries(session_id)]


def test_runs_continue_on_the_server_and_the_list_names_their_host(
    pg_url: str, workspace: Path, script: Script, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TINY_AGENT_STORE", pg_url)
    feed(script, tool_call("read_file", "c1", path="notes.txt"), Message.assistant("It says buy milk."))
    assert main(["what is in notes.txt?"]) == 0
    feed(script, Message.assistant("Still milk."))
    assert main(["-c", "and now?"]) == 0
    assert "buy milk" in json.dumps(script[-1].requests[0]["messages"]), "the first run's turns, read back"
    runs = capsys.readouterr()
    assert main(["sessions", "list"]) == 0
    out = capsys.readouterr()
    (row,) = out.out.splitlines()
    assert f"  {socket.gethostname()[:12]}" in row and "3 calls" in row and "what is in notes.txt?" in row
    assert password_of(pg_url) not in runs.out + runs.err + out.out + out.err
    with psycopg.connect(pg_url) as db:
        stored = db.execute("SELECT string_agg(body, '') FROM entries").fetchone()[0]
    assert password_of(pg_url) not in stored


def test_a_session_moves_between_backends_and_renders_byte_identical(
    pg_url: str, workspace: Path, script: Script, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    here = str(tmp_path / "here.db")
    feed(script, tool_call("read_file", "c1", path="notes.txt"), Message.assistant("It says buy milk."))
    assert main(["--store", here, "what is in notes.txt?"]) == 0
    feed(script, Message.assistant("Nothing else."))
    assert main(["--store", here, "-c", "anything else?"]) == 0
    sid = json.loads(_out(capsys, ["sessions", "list", "--store", here, "--json"]))[0]["id"]

    def export(store: str, fmt: str) -> str:
        return _out(capsys, ["sessions", "export", sid, "--store", store, "--format", fmt])

    original = {fmt: export(here, fmt) for fmt in ("jsonl", "anthropic", "openai")}
    (tmp_path / "s.jsonl").write_text(original["jsonl"])
    assert main(["sessions", "import", str(tmp_path / "s.jsonl"), "--store", pg_url]) == 0
    assert f"imported session {sid[:12]} (" in capsys.readouterr().out
    there = str(tmp_path / "back.db")
    for store in (pg_url, there):
        moved = {fmt: export(store, fmt) for fmt in original}
        assert moved == original, f"the session as {store} holds it is not the one exported"
        (tmp_path / "s.jsonl").write_text(moved["jsonl"])
        if store == pg_url:
            assert main(["sessions", "import", str(tmp_path / "s.jsonl"), "--store", there]) == 0
            capsys.readouterr()
    assert main(["sessions", "import", str(tmp_path / "s.jsonl"), "--store", pg_url]) == 2
    one_line(capsys, display_url(pg_url), sid[:12], "already in")
    lines = original["jsonl"].splitlines(keepends=True)
    (tmp_path / "cut.jsonl").write_text("".join(lines[:6]))  # cut at the end of a line
    assert main(["sessions", "import", str(tmp_path / "cut.jsonl"), "--store", str(tmp_path / "cut.db")]) == 2
    one_line(capsys, "holds 5 entries", f"says {len(lines) - 1}", "cut short")
    feed(script, Message.assistant("Milk, still."))
    assert main(["--store", pg_url, "--resume", sid, "and now?"]) == 0, "an imported session goes on"


def test_an_import_of_something_else_is_one_line(
    pg_url: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bad = tmp_path / "bad.jsonl"
    cases = {
        "not json\n": "line 1 is not JSON",
        '{"format": "other"}\n': "line 1: not the header of a session export",
        '{"format": "tiny-agent-session", "version": 1, "schema": 1, "session": {"id": "ab", "created_at": 1,'
        ' "updated_at": 1}}\n{"seq": 1}\n': "line 2: expected entry #0, found #1",
        '{"format": "tiny-agent-session", "version": 1, "schema": 1, "session": {"id": "ab", "created_at": 1,'
        ' "updated_at": 1}}\n{"seq": 0, "id": "x", "kind": "spell", "at": 1, "body": {"v": 1}}\n': "unknown",
    }
    for text, expected in cases.items():
        bad.write_text(text)
        assert main(["sessions", "import", str(bad), "--store", pg_url]) == 2
        one_line(capsys, str(bad), expected)
    with open_store(pg_url) as store:
        assert store.sessions() == [], "nothing was half-imported"


HOLDER = """
import sys, time
from tiny_agent.store import open_store
store = open_store(sys.argv[1])
store.acquire(sys.argv[2])
print("held", flush=True)
time.sleep(120)
"""


def test_a_second_writer_on_another_process_is_refused_with_its_pid_and_host(
    pg_url: str, workspace: Path, script: Script, capsys: pytest.CaptureFixture[str]
) -> None:
    feed(script, Message.assistant("first"))
    assert main(["--store", pg_url, "hello"]) == 0
    sid = json.loads(_out(capsys, ["sessions", "list", "--store", pg_url, "--json"]))[0]["id"]
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, pg_url, sid], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        for argv in (["--resume", sid, "more"], ["-c", "more"]):
            assert main(["--store", pg_url, *argv]) == 2
            one_line(capsys, sid[:12], f"pid {holder.pid} on {socket.gethostname()}", "--force")
        assert [len(p.requests) for p in script] == [1], "nothing was sent for the refused runs"
        holder.kill()  # SIGKILL: no release; the server drops the lock with the connection
        holder.wait(30)
        feed(script, Message.assistant("second"))
        assert main(["--store", pg_url, "--resume", sid, "more"]) == 0
    finally:
        holder.kill()
        holder.wait(30)


def test_the_password_comes_from_pgpassword_or_pgpass_and_is_never_shown(
    pg_server: PgServer,
    pg_url: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    secret = "Pg-secret-4711-xyzzy"
    database = pg_url.rsplit("/", 1)[1]
    with contextlib.suppress(psycopg.errors.DuplicateObject):
        pg_server.admin.execute(f"CREATE ROLE alice LOGIN PASSWORD '{secret}'")
    pg_server.admin.execute(f"ALTER DATABASE {database} OWNER TO alice")
    port = pg_url.split("@", 1)[1].split("/", 1)[0].split(":")[1]
    url = f"postgresql://alice@127.0.0.1:{port}/{database}"
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("PGPASSWORD", raising=False)
    monkeypatch.delenv("PGPASSFILE", raising=False)

    assert main(["sessions", "list", "--store", url]) == 2
    one_line(capsys, f"postgresql://127.0.0.1:{port}/{database}", "asks for a password", "PGPASSWORD")
    monkeypatch.setenv("PGPASSWORD", "wrong-password-123")
    assert main(["sessions", "list", "--store", url]) == 2
    line = one_line(capsys, "refused the password", "PGPASSWORD")
    assert "wrong-password-123" not in line
    monkeypatch.setenv("PGPASSWORD", secret)
    assert main(["sessions", "list", "--store", url]) == 0
    monkeypatch.delenv("PGPASSWORD")
    pgpass = tmp_path / ".pgpass"
    pgpass.write_text(f"127.0.0.1:{port}:{database}:alice:{secret}\n")
    pgpass.chmod(0o600)
    assert main(["sessions", "list", "--store", url]) == 0
    out = capsys.readouterr()
    assert secret not in out.out + out.err
    with_password = f"postgresql://alice:{secret}@127.0.0.1:{port}/nosuchdb"
    assert main(["sessions", "list", "--store", with_password]) == 2
    line = one_line(capsys, f"postgresql://127.0.0.1:{port}/nosuchdb", "does not exist")
    assert secret not in line


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        (
            "127.0.0.1:1/agents?colour=blue",
            'not a PostgreSQL URL libpq can read (invalid URI query parameter: "colour")',
        ),
        ("127.0.0.1:1/agents?connect_timeout=soon", "connect_timeout is a number of seconds, not 'soon'"),
        ("db.invalid/agents", "cannot connect: unknown host"),  # .invalid never resolves (RFC 2606)
    ],
)
def test_a_url_that_leads_nowhere_is_one_line(where: str, expected: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sessions", "list", "--store", f"postgresql://agent:pw-7654321@{where}"]) == 2
    line = one_line(capsys, f"session store postgresql://{where.split('?')[0]}: ", expected)
    assert "pw-7654321" not in line


@pytest.mark.parametrize(
    ("url", "shown", "bad"),
    [
        ("postgresql://tiny:S3c ret@127.0.0.1:1/agents", "postgresql://127.0.0.1:1/agents", "' '"),
        ("postgresql://tiny:p@ss@127.0.0.1:1/agents", "postgresql://127.0.0.1:1/agents", "'@'"),
        ("postgresql://tiny:pa#ss@127.0.0.1:1/agents", "postgresql://127.0.0.1:1/agents", "'#'"),
    ],
)
def test_a_password_a_url_must_encode_is_refused_without_showing_it(
    url: str, shown: str, bad: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """libpq would quote a short password back in its error, or take its tail for the host."""
    assert main(["sessions", "list", "--store", url]) == 2
    line = one_line(capsys, f"session store {shown}: ", f"holds {bad}", "percent-encode", "PGPASSWORD")
    assert not any(part in line for part in ("S3c", "ret@", "p@ss", "ss@", "pa#"))


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://", "postgresql://(local socket)"),
        ("postgresql://user@/agents", "postgresql://(local socket)/agents"),
        ("postgresql:///agents", "postgresql://(local socket)/agents"),
        ("postgresql://db.example:notaport/agents", "postgresql://db.example:(port?)"),
    ],
)
def test_a_url_without_a_host_is_named_by_where_libpq_goes(
    url: str, shown: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PGHOST", raising=False)
    assert shown_location(url) == shown
    monkeypatch.setenv("PGHOST", "db.internal")
    assert shown_location("postgresql:///agents") == "postgresql://db.internal/agents"


def test_a_user_who_may_not_create_tables_is_told_what_to_ask_for(
    pg_server: PgServer, pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with contextlib.suppress(psycopg.errors.DuplicateObject):
        pg_server.admin.execute("CREATE ROLE guest LOGIN PASSWORD 'guest-password-1'")
    host, database = pg_url.split("@", 1)[1].rsplit("/", 1)
    assert main(["sessions", "list", "--store", f"postgresql://guest:guest-password-1@{host}/{database}"]) == 2
    line = one_line(capsys, f"postgresql://{host}/{database}", "may not", "permission denied", "createdb -O")
    assert "guest-password-1" not in line


def test_a_server_that_is_down_is_one_line_before_anything_is_paid(
    workspace: Path, script: Script, capsys: pytest.CaptureFixture[str]
) -> None:
    port = free_port()
    url = f"postgresql://tiny:not-this-one-42@127.0.0.1:{port}/agents"
    assert main(["--store", url, "hello"]) == 2
    line = one_line(capsys, f"postgresql://127.0.0.1:{port}/agents", "connection refused")
    assert "not-this-one-42" not in line
    assert script == [], "no provider was even built"


def test_without_psycopg_a_database_url_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for module in [m for m in sys.modules if m == "psycopg" or m.startswith(("psycopg.", "tiny_agent.store.postgres"))]:
        monkeypatch.delitem(sys.modules, module)
    monkeypatch.setitem(sys.modules, "psycopg", None)  # as if the extra were not installed
    assert main(["sessions", "list", "--store", "postgresql://agent:pw-123456@db.internal/agents"]) == 2
    line = one_line(capsys, "postgresql://db.internal/agents", "pip install 'tiny-agent[postgres]'")
    assert "pw-123456" not in line


def test_a_statement_timeout_is_one_line_before_anything_is_paid(
    pg_url: str, workspace: Path, script: Script, capsys: pytest.CaptureFixture[str]
) -> None:
    open_store(pg_url).close()  # the tables
    with psycopg.connect(pg_url) as locker:
        locker.execute("LOCK TABLE entries IN ACCESS EXCLUSIVE MODE")  # held until the block ends
        impatient = pg_url + "?options=-c%20statement_timeout%3D300"
        assert main(["--store", impatient, "hello"]) == 2
    one_line(capsys, display_url(pg_url), "statement_timeout", "nothing was written")
    assert all(not p.requests for p in script), "nothing was sent"


def _backend_waiting_on_a_lock(db: psycopg.Connection[Any], deadline: float) -> int:
    while time.monotonic() < deadline:
        row = db.execute(
            "SELECT pid FROM pg_stat_activity WHERE application_name = 'tiny-agent' AND wait_event_type = 'Lock'"
        ).fetchone()
        if row:
            return int(row[0])
        time.sleep(0.05)
    raise AssertionError("the append never waited on the lock")


def test_a_connection_dropped_in_the_middle_of_an_append_writes_nothing(pg_url: str) -> None:
    with open_store(pg_url) as store:
        info = store.create()
        store.append(info.id, [("note", {"v": 1, "text": "before"})], expected_head=-1)
        failed: list[BaseException] = []

        def append() -> None:
            try:
                store.append(info.id, [("note", {"v": 1, "text": f"n{i}"}) for i in range(3)], expected_head=0)
            except BaseException as exc:
                failed.append(exc)

        with psycopg.connect(pg_url, autocommit=True) as admin, psycopg.connect(pg_url) as locker:
            locker.execute("LOCK TABLE entries IN SHARE MODE")  # an INSERT waits behind it
            writer = threading.Thread(target=append)
            writer.start()
            pid = _backend_waiting_on_a_lock(admin, time.monotonic() + 30)
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
            writer.join(30)
        (error,) = failed
        assert isinstance(error, StoreUnavailable) and "\n" not in str(error)
        assert str(error).startswith(f"session store {display_url(pg_url)}: append failed: the connection")
        assert [e.body["text"] for e in store.entries(info.id)] == ["before"], "nothing of it was written"
        assert store.get(info.id).head == 0
        store.append(info.id, [("note", {"v": 1, "text": "after"})], expected_head=0)  # a new connection
        assert [e.body["text"] for e in store.entries(info.id)] == ["before", "after"]


def test_a_full_disk_on_the_server_is_one_line_before_anything_is_paid(
    pg_server: PgServer, pg_url: str, workspace: Path, script: Script, capsys: pytest.CaptureFixture[str]
) -> None:
    """The tables live on a 1 MiB tmpfs (a tablespace), filled up: the server's disk is really full."""
    import pwd
    import tempfile

    disk = Path(tempfile.mkdtemp(prefix="tiny-agent-full-"))
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(disk)], capture_output=True)
    if mounted.returncode != 0:
        if os.environ.get("TINY_AGENT_TEST_PG"):
            pytest.fail(f"cannot mount a small tmpfs for the full disk: {mounted.stderr.decode().strip()}")
        pytest.skip(f"mounting a small tmpfs needs root: {mounted.stderr.decode().strip()}")
    database = pg_url.rsplit("/", 1)[1]
    space = f"full_{database}"
    try:
        owner = pwd.getpwnam("postgres") if os.geteuid() == 0 else None
        if owner is not None:
            os.chown(disk, owner.pw_uid, owner.pw_gid)
        pg_server.admin.execute(f"CREATE TABLESPACE {space} LOCATION '{disk}'")
        pg_server.admin.execute(f"ALTER DATABASE {database} SET default_tablespace = {space}")
        with open_store(pg_url) as store:
            info = store.create()
        filler = os.open(disk / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
        with contextlib.suppress(OSError):
            while os.write(filler, b"\0" * 65536):
                pass
        os.close(filler)
        with open_store(pg_url) as store, pytest.raises(StoreUnavailable, match="disk is full"):
            store.append(info.id, [("note", {"v": 1, "text": "x" * 20000})], expected_head=-1)
        assert main(["--store", pg_url, "hello"]) == 2
        one_line(capsys, display_url(pg_url), "the server's disk is full", "No space left on device")
        assert all(not p.requests for p in script), "nothing was sent"
    finally:
        pg_server.drop(database)
        pg_server.admin.execute(f"DROP TABLESPACE IF EXISTS {space}")
        subprocess.run(["umount", str(disk)], check=False)
        disk.rmdir()


def test_a_restart_in_the_middle_of_a_run_reconnects_and_says_so(
    own_cluster: Cluster, workspace: Path, script: Script, capsys: pytest.CaptureFixture[str]
) -> None:
    url = own_cluster.url()

    def restart_then_read(body: dict[str, Any]) -> Message:
        own_cluster.restart()  # pg_ctl restart -m fast: every connection is cut
        return tool_call("read_file", "c1", path="notes.txt")

    feed(script, restart_then_read, Message.assistant("It says buy milk."))
    assert main(["--store", url, "what is in notes.txt?"]) == 0
    err = capsys.readouterr().err
    assert "the connection holding session" in err and "was lost" in err and "reconnected" in err, err
    sid = json.loads(_out(capsys, ["sessions", "list", "--store", url, "--json"]))[0]["id"]
    kinds = entry_kinds(url, sid)
    assert kinds.count("call_done") == len(script[-1].requests) == 2, kinds
    assert "tool_result" in kinds and kinds[-1] == "stop"


def test_a_session_taken_while_the_server_restarted_keeps_the_paid_reply_in_a_file(
    own_cluster: Cluster, workspace: Path, script: Script, capsys: pytest.CaptureFixture[str]
) -> None:
    """The restart ends this run's lease; another process opens the session before this one is back:
    the reply it paid for cannot follow the other's entries, so it goes to a file the line names."""
    url = own_cluster.url()
    holders: list[subprocess.Popen[str]] = []

    def restart_and_take(body: dict[str, Any]) -> Message:
        own_cluster.restart()
        with open_store(url) as store:
            (info,) = store.sessions()
        holder = subprocess.Popen([sys.executable, "-c", HOLDER, url, info.id], stdout=subprocess.PIPE, text=True)
        holders.append(holder)
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        return tool_call("read_file", "c1", path="notes.txt")

    feed(script, restart_and_take, Message.assistant("never asked"))
    try:
        assert main(["--store", url, "what is in notes.txt?"]) == 2
        err = capsys.readouterr().err
        (line,) = [x for x in err.splitlines() if "taken over" in x]
        assert f"taken over by pid {holders[0].pid} on {socket.gethostname()}" in line and "--force" not in line
        kept = next(Path(word) for word in line.split() if word.endswith(".jsonl"))
        kinds = [json.loads(row)["kind"] for row in kept.read_text().splitlines()]
        assert kinds == ["response", "call_done"], "the paid reply is in the file the line names"
        assert len(script[-1].requests) == 1, "nothing more was sent"
    finally:
        for holder in holders:
            holder.kill()
            holder.wait()


def test_entries_kept_for_a_session_that_moved_on_stay_in_their_file(
    pg_url: str, workspace: Path, script: Script, capsys: pytest.CaptureFixture[str]
) -> None:
    from tiny_agent.store.spool import Spool

    with open_store(pg_url) as store:
        info = store.create(workspace=str(workspace))
        store.append(info.id, [("user", {"v": 1, "content": [{"type": "text", "text": "hi"}]})], expected_head=-1)
        spool = Spool(store.location, info.id)
        spool.add([Entry("note", {"v": 1, "text": "kept while the store was away"}, "a" * 32, 1, 1.0)])
        store.append(info.id, [("note", {"v": 1, "text": "written by another host meanwhile"})], expected_head=0)
    assert main(["--store", pg_url, "--resume", info.id, "go on"]) == 2
    one_line(capsys, f"session {info.id[:12]} moved on", "were not written: they stay in", str(spool.path))
    assert spool.entries() and all(not p.requests for p in script), "nothing was sent, nothing was dropped"


MOMENTS = {
    "the call entry, before it is committed": "call",
    "a paid reply, between its response and its call_done": "call_done",
    "a tool's result, before it is committed": "tool_result",
}


@pytest.mark.parametrize("kind", MOMENTS.values(), ids=MOMENTS.keys())
def test_a_restart_in_the_middle_of_an_append_loses_nothing(
    own_cluster: Cluster,
    workspace: Path,
    script: Script,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    kind: str,
) -> None:
    """``pg_ctl restart -m fast`` while the transaction of an append is open: it fails, is written again
    on a new connection (the same entries), and the run goes on."""
    from tiny_agent.store import postgres

    url = own_cluster.url()
    restarts: list[str] = []
    execute = postgres.QmarkDb.execute

    def restart_once(self: Any, sql: str, parameters: Any = (), /) -> Any:
        if not restarts and sql.startswith("INSERT INTO entries") and parameters[3] == kind:
            restarts.append(kind)
            own_cluster.restart()
        return execute(self, sql, parameters)

    monkeypatch.setattr(postgres.QmarkDb, "execute", restart_once)
    feed(script, tool_call("read_file", "c1", path="notes.txt"), Message.assistant("It says buy milk."))
    assert main(["--store", url, "what is in notes.txt?"]) == 0
    err = capsys.readouterr().err
    assert restarts == [kind]
    assert "append failed: the connection to the server was lost" in err and "trying once more" in err, err
    sid = json.loads(_out(capsys, ["sessions", "list", "--store", url, "--json"]))[0]["id"]
    kinds = entry_kinds(url, sid)
    assert kinds.count("call") == kinds.count("call_done") == len(script[-1].requests) == 2, kinds
    assert kinds.count("tool_result") == 1 and kinds[-1] == "stop"


def test_a_store_that_stays_down_keeps_the_paid_reply_and_a_resume_writes_it(
    own_cluster: Cluster, workspace: Path, script: Script, capsys: pytest.CaptureFixture[str]
) -> None:
    url = own_cluster.url() + "?connect_timeout=2"

    def stop_then_read(body: dict[str, Any]) -> Message:
        own_cluster.stop_server()  # the reply is paid for; the store is gone
        return tool_call("read_file", "c1", path="notes.txt")

    feed(script, stop_then_read, Message.assistant("never asked"))
    assert main(["--store", url, "what is in notes.txt?"]) == 2
    err = capsys.readouterr().err
    assert len(script[-1].requests) == 1, "the next call was not sent: its call entry could not be stored"
    spooled = [line for line in err.splitlines() if "kept entries" in line]
    assert spooled and "(response, call_done)" in spooled[0], err
    assert "the model was not called" in err and "tiny-agent --resume" in err
    spool = next(Path(word) for word in err.split() if word.endswith(".jsonl"))
    assert spool.exists(), "the entries wait in the file the message names"
    own_cluster.start_server()
    sid = json.loads(_out(capsys, ["sessions", "list", "--store", url, "--json"]))[0]["id"]
    for command in (["show", sid], ["export", sid]):
        assert main(["sessions", *command, "--store", url]) == 0
        told = capsys.readouterr().err
        assert "are not in the store yet" in told and str(spool) in told, "show and export say what waits"
    feed(script, Message.assistant("It says buy milk."))
    assert main(["--store", url, "--resume", sid, "go on"]) == 0
    assert "wrote entries" in capsys.readouterr().err
    assert not spool.exists()
    kinds = entry_kinds(url, sid)
    assert kinds.count("call_done") == sum(len(p.requests) for p in script) == 2, kinds
    assert kinds.count("tool_result") == 1, "the tool that ran is recorded once"


def test_a_reply_kept_while_the_server_was_away_is_written_by_the_next_append(
    own_cluster: Cluster,
    workspace: Path,
    script: Script,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tiny_agent.store.spool import Spool

    url = own_cluster.url() + "?connect_timeout=2"
    keep = Spool.add

    def keep_then_come_back(self: Spool, entries: Any) -> None:
        keep(self, entries)
        own_cluster.start_server()  # back before the next append (the tool's result)

    def stop_then_read(body: dict[str, Any]) -> Message:
        own_cluster.stop_server()
        return tool_call("read_file", "c1", path="notes.txt")

    monkeypatch.setattr(Spool, "add", keep_then_come_back)
    feed(script, stop_then_read, Message.assistant("It says buy milk."))
    assert main(["--store", url, "what is in notes.txt?"]) == 0
    err = capsys.readouterr().err
    kept = next(line for line in err.splitlines() if "kept entries" in line)
    assert "(response, call_done)" in kept
    assert "wrote entries" in err, err
    spool = next(Path(word) for word in kept.split() if word.endswith(".jsonl"))
    assert not spool.exists()
    sid = json.loads(_out(capsys, ["sessions", "list", "--store", url, "--json"]))[0]["id"]
    kinds = entry_kinds(url, sid)
    assert kinds.count("call_done") == len(script[-1].requests) == 2 and kinds[-1] == "stop", kinds


def _out(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    """What the command printed on stdout (what was printed before it is dropped)."""
    capsys.readouterr()
    assert main(argv) == 0
    return capsys.readouterr().out
