"""The call index: filled by the append that writes the entries, backfilled by the migration, the same
either way; sums and rows read it without parsing an entry body. The tests that take ``store`` run
against both backends (a SQLite file, a PostgreSQL database): the same SQL, spelled for each."""

from __future__ import annotations

import dataclasses
import datetime
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from tiny_agent.context.session import Session
from tiny_agent.store import open_store
from tiny_agent.store.base import CallQuery
from tiny_agent.store.migrations import SCHEMA_VERSION
from tiny_agent.store.sql_store import SqlStore
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.testing import ScriptedProvider
from tiny_agent.types import Message, ModelResponse, Usage

FIXTURE_V1 = Path(__file__).parent / "data" / "store_v1.db"


def reply(text: str, i: int) -> ModelResponse:
    usage = Usage(1000 + 100 * i, 20, 900 if i else 0, 100)
    return ModelResponse(Message.assistant(text), usage, "end_turn", "claude-sonnet-4-6")


def chat(store: SqlStore, turns: int, *, stamp_system: bool = False, compact_after: int | None = None) -> str:
    """A stored session of ``turns`` turns; with ``stamp_system`` the system prompt changes before each."""
    session = Session.start(store, workspace="/w", system="You are terse.", settings={"provider": "anthropic"})
    ctx = session.context
    provider = ScriptedProvider([reply(f"answer {i}", i) for i in range(turns)], model="claude-sonnet-4-6")
    for i in range(turns):
        if stamp_system:
            ctx.system = f"You are terse. Current time: 2026-12-01T10:{i:02d}:00Z."
        ctx.add_user(f"question {i} " + "words " * 40)
        ctx.complete(provider)
        if compact_after is not None and i == compact_after:
            ctx.compact(lambda transcript: "the user asked questions", keep_turns=1)
    session.close()
    return session.id


@pytest.fixture
def store(store_at: str) -> Iterator[SqlStore]:
    opened = open_store(store_at)
    yield opened
    opened.close()


def test_every_call_gets_a_row_with_its_usage_and_cost(store: SqlStore) -> None:
    sid = chat(store, 3)
    rows = store.calls(CallQuery(sessions=(sid,)))
    dones = [e for e in store.entries(sid) if e.kind == "call_done"]
    assert [r.seq for r in rows] == [e.body["call"] for e in dones]
    for row, done in zip(rows, dones, strict=True):
        assert row.status == "done" and row.provider == "anthropic" and row.workspace == "/w"
        assert row.input_tokens == done.body["usage"]["input_tokens"]
        assert row.cache_read_tokens == done.body["usage"]["cache_read_tokens"]
        assert row.cost_usd == done.body["cost_usd"]
    assert [r.shared_messages for r in rows] == [None, 1, 3], "each request extends the one before"
    assert [r.changed for r in rows] == [(), (), ()], "a steady session changes no layer"


def test_a_changing_system_prompt_is_flagged_on_every_call_after_the_first(store: SqlStore) -> None:
    sid = chat(store, 4, stamp_system=True)
    rows = store.calls(CallQuery(sessions=(sid,)))
    assert [r.changed for r in rows] == [(), ("system",), ("system",), ("system",)]
    (totals,) = store.call_totals(CallQuery(sessions=(sid,)))
    assert totals.system_changed == 3 and totals.tools_changed == 0 and totals.messages_changed == 0
    assert totals.compared == 3


def test_a_compaction_is_an_event_and_the_next_call_an_expected_messages_change(store: SqlStore) -> None:
    sid = chat(store, 4, compact_after=1)
    rows = store.calls(CallQuery(sessions=(sid,)))
    after = rows[2]
    assert after.changes == ("compaction",) and after.changed == ("messages",) and after.expected
    decision, event = store.events(CallQuery(sessions=(sid,)))
    assert event.kind == "compaction" and event.model == "claude-sonnet-4-6"
    assert (decision.kind, decision.reason, decision.count) == ("decision", "compact", event.count), "what led to it"
    assert decision.tokens_before == event.tokens_before and decision.tokens_after is None
    (totals,) = store.call_totals(CallQuery(sessions=(sid,)))
    assert totals.messages_changed == totals.messages_expected == 1 and totals.after_compaction == 1


def test_sums_agree_with_the_rows_and_group_by_key(store: SqlStore) -> None:
    ids = [chat(store, 3), chat(store, 2, stamp_system=True)]
    rows = store.calls(CallQuery())
    (whole,) = store.call_totals(CallQuery())
    assert whole.calls == len(rows) == 5
    assert whole.input_tokens == sum(r.input_tokens or 0 for r in rows)
    assert whole.cost_usd == pytest.approx(sum(r.cost_usd or 0 for r in rows))
    per = {t.key[0]: t for t in store.call_totals(CallQuery(), by=["session"])}
    assert {k: t.calls for k, t in per.items()} == {ids[0]: 3, ids[1]: 2}
    days = store.call_totals(CallQuery(), by=["day", "model"])
    recorded_days = {datetime.date.fromtimestamp(r.at).isoformat() for r in rows}  # one, unless past midnight
    assert {t.key[0] for t in days} == recorded_days and {t.key[1] for t in days} == {"claude-sonnet-4-6"}
    assert sum(t.calls for t in days) == 5
    assert store.call_totals(CallQuery(model="gpt-nothing")) == []
    assert store.call_totals(CallQuery(since=rows[-1].at + 1)) == []


def test_a_forks_first_call_is_compared_with_its_parents_last(store: SqlStore) -> None:
    parent = chat(store, 2)
    fork = Session.fork(store, parent)
    session = Session.resume(store, fork.id)
    session.context.system = "You are verbose."
    session.context.add_user("go on")
    session.context.complete(ScriptedProvider([reply("more", 1)], model="claude-sonnet-4-6"))
    session.close()
    (row,) = store.calls(CallQuery(sessions=(fork.id,)))
    assert row.changed == ("system",) and row.provider == "anthropic"
    store.delete(parent)
    assert len(store.calls(CallQuery(sessions=(fork.id,)))) == 3, "the fork keeps a copy of the inherited calls"


def test_the_migration_backfills_what_the_appends_wrote(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with SQLiteStore(path) as store:
        chat(store, 4, compact_after=1)
        chat(store, 3, stamp_system=True)
        live_calls, live_events = store.calls(CallQuery()), store.events(CallQuery())
    db = sqlite3.connect(path)
    db.execute("DROP TABLE calls")
    db.execute("DROP TABLE events")
    db.execute("ALTER TABLE sessions DROP COLUMN provider")
    db.execute("ALTER TABLE sessions DROP COLUMN host")  # m004's
    db.execute("PRAGMA user_version = 2")
    db.commit()
    db.close()
    with SQLiteStore(path) as store:
        assert store.calls(CallQuery()) == live_calls
        assert store.events(CallQuery()) == live_events


def test_a_v1_store_gets_its_call_indexed(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    shutil.copy(FIXTURE_V1, path)
    with SQLiteStore(path) as store:
        (row,) = store.calls(CallQuery())
        (totals,) = store.call_totals(CallQuery())
    assert row.status == "done" and row.model == "claude-sonnet-4-6" and row.provider is None
    assert (row.input_tokens, row.output_tokens, row.cost_usd) == (120, 20, pytest.approx(0.00066))
    assert row.changes == () and row.shared_messages is None, "no compaction before it; sharing not recorded"
    assert totals.calls == 1 and totals.compared == 0
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    db.close()


def test_a_call_lost_in_a_crash_stays_open_then_failed(store: SqlStore) -> None:
    info = store.create()
    call = {"v": 1, "purpose": "turn", "model": "m", "chars": 10, "fingerprint": {}, "changes": []}
    store.append(info.id, [("call", call)], expected_head=-1)
    assert store.calls(CallQuery())[0].status == "open"
    store.append(info.id, [("call_failed", {"v": 1, "call": 0, "error": "gone"})], expected_head=0)
    (totals,) = store.call_totals(CallQuery())
    assert (totals.calls, totals.failed, totals.open, totals.input_tokens) == (1, 1, 0, 0)


def test_entries_of_some_kinds_only(store: SqlStore) -> None:
    sid = chat(store, 2, stamp_system=True)
    configs = store.entries(sid, kinds=["config"])
    assert configs and {e.kind for e in configs} == {"config"}
    assert [e.seq for e in configs] == [e.seq for e in store.entries(sid) if e.kind == "config"]


def test_rows_are_plain_values(store: SqlStore) -> None:
    chat(store, 1)
    (row,) = store.calls(CallQuery())
    assert dataclasses.asdict(row)["purpose"] == "turn"


def test_a_clearing_is_an_event_and_the_next_call_is_counted_after_it(store: SqlStore) -> None:
    from tiny_agent.context.entries import Clearing

    session = Session.start(store, workspace="/w", system="You are terse.", settings={"provider": "anthropic"})
    ctx = session.context
    provider = ScriptedProvider([reply(f"answer {i}", i) for i in range(3)], model="claude-sonnet-4-6")
    for i in range(3):
        if i == 2:
            ctx.append([Clearing({"toolu_1": "[cleared]", "toolu_2": "[cleared]"})])
        ctx.add_user(f"question {i}")
        ctx.complete(provider)
    session.close()
    rows = store.calls(CallQuery(sessions=(session.id,)))
    assert [r.changes for r in rows] == [(), (), ("clear",)] and rows[2].expected
    (event,) = store.events(CallQuery(sessions=(session.id,)))
    assert (event.kind, event.count, event.provider) == ("clear", 2, "anthropic")
    (totals,) = store.call_totals(CallQuery(sessions=(session.id,)))
    assert totals.after_clear == 1 and rows[2].cost_usd is None and totals.after_clear_cost_usd == 0, "unpriced"
