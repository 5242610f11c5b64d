"""The session store: append-only entries, one writer at a time, migrations, bad files.

The tests that take ``store`` or ``store_at`` run against both backends, a SQLite file and a
PostgreSQL database (``tests/conftest.py``); the rest are about what only a file can do wrong.
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import socket
import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from tiny_agent.errors import SessionConflict, SessionNotFound, StoreError
from tiny_agent.store import open_store
from tiny_agent.store.migrations import SCHEMA_VERSION
from tiny_agent.store.sql_store import SqlStore
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.types import Entry

FIXTURE_V1 = Path(__file__).parent / "data" / "store_v1.db"


@pytest.fixture
def store(store_at: str) -> Iterator[SqlStore]:
    opened = open_store(store_at)
    yield opened
    opened.close()


def user(text: str) -> tuple[str, dict[str, object]]:
    return "user", {"v": 1, "content": [{"type": "text", "text": text}]}


def test_entries_round_trip_in_order_with_contiguous_seqs(store: SqlStore) -> None:
    info = store.create(workspace="/w")
    first = store.append(info.id, [user("one"), ("note", {"v": 1, "text": "é ✓ \u2028"})], expected_head=-1)
    second = store.append(info.id, [user("two")], expected_head=1)
    read = store.entries(info.id)
    assert [e.seq for e in read] == [0, 1, 2]
    assert read == [*first, *second]
    assert read[1].body == {"v": 1, "text": "é ✓ \u2028"}
    assert store.entries(info.id, after=1) == second
    assert store.get(info.id).title == "one"
    assert store.get(info.id).host == socket.gethostname()


def test_a_stale_head_is_a_conflict_and_writes_nothing(store_at: str) -> None:
    a, b = open_store(store_at), open_store(store_at)
    info = a.create()
    a.append(info.id, [user("from a")], expected_head=-1)
    with pytest.raises(SessionConflict, match="another process appended"):
        b.append(info.id, [user("from b"), user("b again")], expected_head=-1)
    assert [e.body["content"][0]["text"] for e in a.entries(info.id)] == ["from a"]  # type: ignore[index]
    a.close()
    b.close()


def _writer(path: str, session_id: str, count: int) -> None:
    store = open_store(path)
    for i in range(count):
        head = store.get(session_id).head
        store.append(session_id, [user(f"{os.getpid()}-{i}")], expected_head=head)
    store.close()


def test_processes_writing_their_own_sessions_do_not_corrupt_the_store(store_at: str) -> None:
    with open_store(store_at) as store:
        ids = [store.create().id for _ in range(4)]
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(store_at, sid, 40)) for sid in ids]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    with open_store(store_at) as store:
        for sid in ids:
            assert [e.seq for e in store.entries(sid)] == list(range(40))
    if isinstance(store, SQLiteStore):
        db = sqlite3.connect(store_at)
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        db.close()


def test_one_writer_per_session(store_at: str) -> None:
    a, b = open_store(store_at), open_store(store_at)
    info = a.create()
    a.acquire(info.id)
    with pytest.raises(SessionConflict, match=f"pid {os.getpid()} on {socket.gethostname()}"):
        b.acquire(info.id)
    assert b.acquire(info.id, force=True) == f"pid {os.getpid()} on {socket.gethostname()}"
    a.release(info.id)  # no longer a's: harmless, and b keeps it
    with pytest.raises(SessionConflict):
        a.acquire(info.id)
    b.release(info.id)
    a.acquire(info.id)
    a.close()
    b.close()


def _hold_and_die(location: str, session_id: str) -> None:
    open_store(location).acquire(session_id)
    os._exit(0)  # no release, no close: as a killed process leaves it


def test_a_dead_writer_does_not_block(store_at: str, store: SqlStore) -> None:
    info = store.create()
    dead = multiprocessing.get_context("spawn").Process(target=_hold_and_die, args=(store_at, info.id))
    dead.start()
    dead.join(60)
    assert dead.exitcode == 0
    assert store.get(info.id).writer == f"{socket.gethostname()}:{dead.pid}", "its mark is still there"
    assert store.acquire(info.id) is None  # the mark names a process that is gone


def test_the_file_and_folder_are_private(tmp_path: Path) -> None:
    path = tmp_path / "new" / "sessions.db"
    with SQLiteStore(path) as store:
        store.append(store.create().id, [user("x")], expected_head=-1)
        for name in ("sessions.db", "sessions.db-wal", "sessions.db-shm"):
            assert stat.S_IMODE((path.parent / name).stat().st_mode) == 0o600, name
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


def test_an_older_store_is_upgraded(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    shutil.copy(FIXTURE_V1, path)
    with SQLiteStore(path) as store:
        (info,) = store.sessions()
        assert info.title == "what is in notes.txt?", "m002 fills the title from the first user entry"
        assert info.calls == 1 and info.cost_usd == pytest.approx(0.00066)
        entries = store.entries(info.id)
        assert [e.kind for e in entries] == ["config", "user", "call", "response", "call_done", "tool_result"]
        store.append(info.id, [user("and now?")], expected_head=5)
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    db.close()


def test_a_store_from_a_newer_version_is_refused(store_at: str) -> None:
    with open_store(store_at) as store:
        if isinstance(store, SQLiteStore):
            store._db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 7}")
        else:
            with store._transaction("test") as db:
                db.execute("INSERT INTO tiny_agent_migrations VALUES (?, 0)", (SCHEMA_VERSION + 7,))
        location = store.location
    with pytest.raises(StoreError, match=rf"{location}.*newer than this tiny-agent"):
        open_store(store_at)


def test_a_file_that_is_not_a_database(tmp_path: Path) -> None:
    path = tmp_path / "junk.db"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match=rf"{path}.*damaged"):
        SQLiteStore(path)
    assert path.read_bytes() == b"this is not sqlite" * 100, "nothing is overwritten"


def test_a_truncated_store(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    with SQLiteStore(path) as store:
        sid = store.create().id
        store.append(sid, [user("x" * 3000) for _ in range(50)], expected_head=-1)
    db = sqlite3.connect(path)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(StoreError, match=str(path)):
        SQLiteStore(path)


def test_a_locked_store(tmp_path: Path) -> None:
    path = tmp_path / "l.db"
    SQLiteStore(path).close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(StoreError, match=rf"{path} is locked"):
            SQLiteStore(path, busy_timeout=0.2)
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_a_read_only_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "r.db"
    SQLiteStore(path).close()
    # The tests run as root, which permission bits do not stop: ask the check the way a user's
    # process would see a 0400 file.
    monkeypatch.setattr(os, "access", lambda p, mode: not (mode & os.W_OK))
    with SQLiteStore(path) as store, pytest.raises(StoreError, match=rf"{path} is read-only"):
        store.create()


@pytest.mark.parametrize("folder_writable", [True, False])
def test_a_read_only_store_opens_for_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, folder_writable: bool
) -> None:
    """Issue 30, finding 4: a copied 0444 file or a read-only folder (a mounted backup) was refused."""
    path = tmp_path / "backup" / "r.db"
    with SQLiteStore(path) as store:
        sid = store.create().id
        store.append(sid, [user("hi")], expected_head=-1)
    real = os.access
    monkeypatch.setattr(
        os,
        "access",
        lambda p, mode: real(p, mode) and not (mode & os.W_OK and (Path(p) == path or not folder_writable)),
    )
    with SQLiteStore(path) as store:
        assert store.read_only
        assert [s.id for s in store.sessions()] == [sid] and len(store.entries(sid)) == 1
        with pytest.raises(StoreError, match=r"read-only \(opened for reading\): cannot append"):
            store.append(sid, [user("x")], expected_head=0)
    # SQLite itself was told: the root the tests run as would otherwise write through the bits.
    with SQLiteStore(path) as store, pytest.raises(sqlite3.Error):
        store._db.execute("DELETE FROM sessions")


def test_sessions_by_prefix(store: SqlStore) -> None:
    ids = [store.create().id for _ in range(17)]  # 17 ids, 16 hex digits: two share a first digit
    assert store.get(ids[0][:8]).id == ids[0]
    assert store.get(ids[0].upper()).id == ids[0]
    with pytest.raises(SessionNotFound):
        store.get("zz")
    shared = next(i[0] for i in ids if sum(j[0] == i[0] for j in ids) > 1)
    with pytest.raises(SessionNotFound, match="several"):
        store.get(shared)


def test_a_fork_shares_a_prefix_and_survives_its_parent(store: SqlStore) -> None:
    parent = store.create(workspace="/w")
    store.append(parent.id, [user(f"p{i}") for i in range(5)], expected_head=-1)
    fork = store.create(parent=(parent.id, 2))
    assert fork.head == 2 and fork.title == "p0"
    store.append(fork.id, [user("f3")], expected_head=2)
    store.append(parent.id, [user("p5")], expected_head=4)
    texts = lambda sid: [e.body["content"][0]["text"] for e in store.entries(sid)]  # type: ignore[index]  # noqa: E731
    assert texts(fork.id) == ["p0", "p1", "p2", "f3"]
    assert texts(parent.id) == ["p0", "p1", "p2", "p3", "p4", "p5"]
    grandchild = store.create(parent=(fork.id, 3))
    store.delete(parent.id)
    assert texts(fork.id) == ["p0", "p1", "p2", "f3"]
    assert texts(grandchild.id) == ["p0", "p1", "p2", "f3"]
    store.delete(fork.id)
    assert texts(grandchild.id) == ["p0", "p1", "p2", "f3"]
    with pytest.raises(SessionNotFound):
        store.get(parent.id)


def test_entries_written_again_after_a_lost_commit_are_skipped(store: SqlStore) -> None:
    info = store.create()
    first = store.append(info.id, [user("a"), user("b")], expected_head=-1)
    # The process saw its commit fail (the connection went) and kept #0-#1 and #2 to write again.
    extra = Entry("user", user("c")[1], "e" * 32, 2, 1.5)
    assert store.append_entries(info.id, [*first, extra]) == 1, "#0 and #1 are there already"
    assert store.entries(info.id) == [*first, extra]
    assert store.append_entries(info.id, [extra]) == 0
    other = Entry("user", user("d")[1], "f" * 32, 2, 1.5)
    with pytest.raises(SessionConflict, match="moved on"):
        store.append_entries(info.id, [other])  # another entry #2 is there: nothing is written
    with pytest.raises(SessionConflict, match="moved on"):
        store.append_entries(info.id, [Entry("user", user("e")[1], "0" * 32, 5, 1.5)])  # a gap
    assert store.entries(info.id) == [*first, extra]


def test_a_restored_session_is_the_same_session(store: SqlStore, tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "elsewhere.db") as source:
        made = source.create(workspace="/w")
        source.append(made.id, [user("moved"), ("call_done", {"v": 1, "call": 0, "cost_usd": 0.25})], expected_head=-1)
        info, entries = source.get(made.id), source.entries(made.id)
    restored = store.restore(info, entries)
    assert restored == info, "the same id, times, title, head, calls, cost and host"
    assert store.entries(info.id) == entries
    with pytest.raises(SessionConflict, match="already in"):
        store.restore(info, entries)
