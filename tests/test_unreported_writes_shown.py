"""A cache write no call reported (DeepSeek, Kimi and llama.cpp report none) shows as ``?`` in the
``--by`` usage tables and the view's totals, ``null`` in JSON: never a 0 the provider did not say."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tiny_agent.context.entries import CallDone, CallOpened
from tiny_agent.context.entry_codec import encode
from tiny_agent.context.tokens import CallRecord
from tiny_agent.observe.usage import usage_lines, usage_table
from tiny_agent.observe.view.data import SessionView
from tiny_agent.store import sqlite as sqlite_store
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.types import Usage

T0 = 1_796_119_200.0  # 2026-12-01T10:00:00Z
CALLS = [  # (hours after T0, model, input, cache read, cache write or None when not reported, thinking)
    (0.5, "deepseek-v4-flash", 1000, 600, None, None),
    (1.0, "deepseek-v4-flash", 1200, 900, None, None),
    (30.0, "claude-sonnet-5", 1500, 1000, 400, 40),  # the next day: writes reported, and thinking
]


@pytest.fixture
def store_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    clock = [T0]
    monkeypatch.setattr(sqlite_store.time, "time", lambda: clock[0])
    with SQLiteStore(tmp_path / "t.db") as store:
        sid = store.create(workspace=str(tmp_path)).id
        head = -1
        for hours, model, given, read, write, thinking in CALLS:
            clock[0] = T0 + hours * 3600
            opened = CallOpened("turn", model, given * 4, {"messages": 1}, "", "deepseek")
            record = CallRecord(
                Usage(given, 50, read, write, reasoning_tokens=thinking),
                0.01,
                1.0,
                model,
                None,
                "turn",
                stop_reason="end_turn",
            )
            done = store.append(sid, [encode(opened)], expected_head=head)
            store.append(sid, [encode(CallDone(done[0].seq, record))], expected_head=done[0].seq)
            head = done[0].seq + 1
    return tmp_path / "t.db"


def test_the_usage_table_shows_unreported_writes_as_unknown(store_path: Path) -> None:
    with SQLiteStore(store_path) as store:
        days = usage_table(store, "day", timezone="UTC")
    first, second = days.rows
    assert (first.cache_create, second.cache_create, days.total.cache_create) == (None, 400, None)
    assert first.total_tokens == 1000 + 1200 + 100, "the unreported writes stay in the input, counted once"
    text = usage_lines(days)
    assert text[2].split(" │ ")[5].strip() == "?" and text[3].split(" │ ")[5].strip() == "400"
    assert text[-1].split(" │ ")[5].strip() == "?"
    body = json.loads(usage_lines(days, "json")[0])
    assert [r["cache_creation_tokens"] for r in body["rows"]] == [None, 400]
    assert body["total"]["cache_creation_tokens"] is None
    csv_rows = usage_lines(days, "csv")
    assert [r.split(",")[5] for r in csv_rows[1:]] == ["", "400", ""]


def test_the_views_totals_show_unreported_writes_as_unknown(store_path: Path) -> None:
    with SQLiteStore(store_path) as store:
        info = store.sessions()[0]
        totals = SessionView.of(info, store.entries(info.id)).session()["totals"]
    assert totals["cache_write_tokens"] is None
    assert totals["cache_read_tokens"] == 600 + 900 + 1000
    assert totals["input_tokens"] == 1000 + 1200 + 1500
    assert totals["reasoning_tokens"] == 40, "as stats sums it: a call that did not think is no unknown"
