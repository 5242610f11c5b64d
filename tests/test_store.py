"""The SQLite session store: append-only entries, one writer at a time, migrations, bad files."""

from __future__ import annotations

import multiprocessing
import os
import shutil
import sqlite3
import stat
from pathlib import Path

import pytest

from tiny_agent.errors import SessionConflict, SessionNotFound, StoreError
from tiny_agent.store.migrations import SCHEMA_VERSION
from tiny_agent.store.sqlite import SQLiteStore

FIXTURE_V1 = Path(__file__).parent / "data" / "store_v1.db"


@pytest.fixture
def store(tmp_path: Path) -> SQLiteStore:
    opened = SQLiteStore(tmp_path / "s.db")
    yield opened  # type: ignore[misc]
    opened.close()


def user(text: str) -> tuple[str, dict[str, object]]:
    return "user", {"v": 1, "content": [{"type": "text", "text": text}]}


def test_entries_round_trip_in_order_with_contiguous_seqs(store: SQLiteStore) -> None:
    info = store.create(workspace="/w")
    first = store.append(info.id, [user("one"), ("note", {"v": 1, "text": "é ✓ \u2028"})], expected_head=-1)
    second = store.append(info.id, [user("two")], expected_head=1)
    read = store.entries(info.id)
    assert [e.seq for e in read] == [0, 1, 2]
    assert read == [*first, *second]
    assert read[1].body == {"v": 1, "text": "é ✓ \u2028"}
    assert store.entries(info.id, after=1) == second
    assert store.get(info.id).title == "one"


def test_a_stale_head_is_a_conflict_and_writes_nothing(tmp_path: Path) -> None:
    a, b = SQLiteStore(tmp_path / "s.db"), SQLiteStore(tmp_path / "s.db")
    info = a.create()
    a.append(info.id, [user("from a")], expected_head=-1)
    with pytest.raises(SessionConflict, match="another process appended"):
        b.append(info.id, [user("from b"), user("b again")], expected_head=-1)
    assert [e.body["content"][0]["text"] for e in a.entries(info.id)] == ["from a"]  # type: ignore[index]
    a.close()
    b.close()


def _writer(path: str, session_id: str, count: int) -> None:
    store = SQLiteStore(path)
    for i in range(count):
        head = store.get(session_id).head
        store.append(session_id, [user(f"{os.getpid()}-{i}")], expected_head=head)
    store.close()


def test_processes_writing_their_own_sessions_do_not_corrupt_the_file(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with SQLiteStore(path) as store:
        ids = [store.create().id for _ in range(4)]
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(path), sid, 40)) for sid in ids]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    with SQLiteStore(path) as store:
        for sid in ids:
            assert [e.seq for e in store.entries(sid)] == list(range(40))
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    db.close()


def test_one_writer_per_session(tmp_path: Path) -> None:
    a, b = SQLiteStore(tmp_path / "s.db"), SQLiteStore(tmp_path / "s.db")
    info = a.create()
    a.acquire(info.id)
    with pytest.raises(SessionConflict, match=f"pid {os.getpid()}"):
        b.acquire(info.id)
    b.acquire(info.id, force=True)
    a.release(info.id)  # no longer a's: harmless, and b keeps it
    with pytest.raises(SessionConflict):
        a.acquire(info.id)
    b.release(info.id)
    a.acquire(info.id)
    a.close()
    b.close()


def test_a_dead_writer_does_not_block(tmp_path: Path, store: SQLiteStore) -> None:
    info = store.create()
    dead = multiprocessing.get_context("spawn").Process(target=int)
    dead.start()
    dead.join()
    db = sqlite3.connect(tmp_path / "s.db")
    db.execute("UPDATE sessions SET writer = ? WHERE id = ?", (f"{os.uname().nodename}:{dead.pid}:x", info.id))
    db.commit()
    db.close()
    store.acquire(info.id)  # the mark names a process that is gone


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


def test_a_store_from_a_newer_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    SQLiteStore(path).close()
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 7}")
    db.close()
    with pytest.raises(StoreError, match=rf"{path}.*newer than this tiny-agent"):
        SQLiteStore(path)


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
    with pytest.raises(StoreError, match=rf"{path} is read-only"):
        SQLiteStore(path)


def test_sessions_by_prefix(store: SQLiteStore) -> None:
    ids = [store.create().id for _ in range(17)]  # 17 ids, 16 hex digits: two share a first digit
    assert store.get(ids[0][:8]).id == ids[0]
    assert store.get(ids[0].upper()).id == ids[0]
    with pytest.raises(SessionNotFound):
        store.get("zz")
    shared = next(i[0] for i in ids if sum(j[0] == i[0] for j in ids) > 1)
    with pytest.raises(SessionNotFound, match="several"):
        store.get(shared)


def test_a_fork_shares_a_prefix_and_survives_its_parent(store: SQLiteStore) -> None:
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
