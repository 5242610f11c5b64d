"""``stats`` counts reasoning (thinking) tokens: in all, per group, in the ``--by`` tables, as text and
JSON; a store from before the reasoning column gets it filled from its entries on open."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tiny_agent.cli.app import main
from tiny_agent.context.entries import CallDone, CallOpened
from tiny_agent.context.entry_codec import encode
from tiny_agent.context.tokens import CallRecord
from tiny_agent.observe import stats
from tiny_agent.observe.usage import usage_table
from tiny_agent.store import sqlite as sqlite_store
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.types import Usage

T0 = 1_796_119_200.0  # 2026-12-01T10:00:00Z
CALLS = [  # (hours after T0, model, input, output, reasoning of the output or None when not reported)
    (0.5, "claude-sonnet-4-6", 1000, 400, 300),
    (1.0, "claude-sonnet-4-6", 1200, 250, 200),
    (2.0, "gpt-4o-mini", 800, 60, None),  # thinking off: not reported
    (30.0, "claude-sonnet-4-6", 1500, 900, 700),  # the next day
]


@pytest.fixture
def thinking_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    clock = [T0]
    monkeypatch.setattr(sqlite_store.time, "time", lambda: clock[0])
    with SQLiteStore(tmp_path / "t.db") as store:
        sid = store.create(workspace=str(tmp_path)).id
        head = -1
        for hours, model, given, out, reasoning in CALLS:
            clock[0] = T0 + hours * 3600
            opened = CallOpened("turn", model, given * 4, {"messages": 1}, "", "anthropic")
            usage = Usage(given, out, 0, 0, reasoning_tokens=reasoning)
            record = CallRecord(usage, 0.01, 1.0, model, None, "turn", stop_reason="end_turn")
            done = store.append(sid, [encode(opened)], expected_head=head)
            store.append(sid, [encode(CallDone(done[0].seq, record))], expected_head=done[0].seq)
            head = done[0].seq + 1
    return tmp_path / "t.db"


def test_stats_sums_the_thinking_tokens(thinking_store: Path) -> None:
    with SQLiteStore(thinking_store) as store:
        result = stats(store, by="model")
        days = usage_table(store, "day", timezone="UTC")
    assert result.total.reasoning_tokens == 300 + 200 + 700
    assert result.total.output_tokens == 400 + 250 + 60 + 900, "thinking is part of the output, not added to it"
    assert result.groups["claude-sonnet-4-6"].reasoning_tokens == 1200
    assert result.groups["gpt-4o-mini"].reasoning_tokens is None, "unknown, never a made-up 0"
    assert result.to_dict()["reasoning_tokens"] == 1200
    assert [(r.key, r.reasoning_tokens) for r in days.rows] == [("2026-12-01", 500), ("2026-12-02", 700)]
    assert days.total.reasoning_tokens == 1200


def test_the_command_shows_a_thinking_column(thinking_store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["stats", "--store", str(thinking_store)]) == 0
    assert "output     1,610 tokens (thinking 1,200)" in capsys.readouterr().out
    assert main(["stats", "--store", str(thinking_store), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["reasoning_tokens"] == 1200
    assert main(["stats", "--store", str(thinking_store), "--by", "workspace"]) == 0
    head, row = capsys.readouterr().out.splitlines()[-2:]
    assert "thinking" in head and "1,200" in row
    assert main(["stats", "--store", str(thinking_store), "--by", "day", "--timezone", "UTC", "--format", "csv"]) == 0
    rows = capsys.readouterr().out.splitlines()
    assert rows[0].split(",")[4] == "Thinking"
    assert [r.split(",")[4] for r in rows[1:]] == ["500", "700", "1200"]


def test_an_older_store_gets_the_column_filled_from_its_entries(thinking_store: Path) -> None:
    db = sqlite3.connect(thinking_store)
    db.execute("ALTER TABLE calls DROP COLUMN reasoning_tokens")
    db.execute("PRAGMA user_version = 4")
    db.commit()
    db.close()
    with SQLiteStore(thinking_store) as store:
        result = stats(store)
    assert result.total.reasoning_tokens == 1200
