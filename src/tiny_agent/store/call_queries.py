"""Reading the call index (``store.call_index``): rows for one session's story, sums for many.

Sums are SQL ``GROUP BY``s over the index, so a look over the whole store reads each call's row
once and never an entry body.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

from tiny_agent.store.base import (
    GROUP_KEYS,
    CallQuery,
    CallRow,
    CallTotals,
    EventRow,
    EventTotals,
    GroupKey,
    UnitPrices,
)
from tiny_agent.store.call_index import EVENT_COLUMNS

__all__ = ["CallIndexReads", "call_rows", "call_totals", "event_rows", "event_totals", "miss_counts", "models"]

_KEYS: dict[str, str] = {
    "session": "session_id",
    "day": "date(at, 'unixepoch', 'localtime')",
    "model": "model",
    "provider": "provider",
    "workspace": "workspace",
    "miss": "miss",
}

_ROW_COLUMNS = (
    "session_id, seq, at, status, purpose, model, response_model, provider, workspace, input_tokens,"
    " output_tokens, cache_read_tokens, cache_write_tokens, cost_usd, seconds, stop_reason, miss, messages,"
    " shared_messages, changes, tools_changed, system_changed, pins_changed, messages_changed, expected"
)

_SUMS = """
    count(*), total(purpose = 'turn'), total(purpose = 'compaction'), total(status = 'failed'), total(status = 'open'),
    total(status = 'done' AND input_tokens IS NULL),
    total(input_tokens), total(output_tokens), total(cache_read_tokens), total(cache_write_tokens),
    total(CASE WHEN cache_read_tokens IS NOT NULL THEN input_tokens END),
    count(cache_read_tokens), count(cache_write_tokens),
    total(cost_usd), count(cost_usd), {uncached},
    total(seconds), count(miss), count(tools_changed),
    total(tools_changed), total(system_changed), total(pins_changed), total(messages_changed),
    total(messages_changed = 1 AND expected = 1),
    total(CASE WHEN purpose = 'compaction' THEN cost_usd END),
    total(instr(changes, 'compaction') > 0), total(CASE WHEN instr(changes, 'compaction') > 0 THEN cost_usd END),
    total(instr(changes, 'clear') > 0), total(CASE WHEN instr(changes, 'clear') > 0 THEN cost_usd END),
    min(at), max(at), max(workspace)
"""
_FLOAT_AT = {13, 15, 16, 18, 26, 28, 30}
"""Indices of the dollar and second sums; the other sums are counts (``total`` answers floats)."""


def _where(query: CallQuery, *, events: bool = False) -> tuple[str, list[Any]]:
    parts: list[str] = []
    args: list[Any] = []
    if query.sessions:
        parts.append(f"session_id IN ({', '.join('?' * len(query.sessions))})")
        args.extend(query.sessions)
    if query.since is not None:
        parts.append("at >= ?")
        args.append(query.since)
    if query.until is not None:
        parts.append("at < ?")
        args.append(query.until)
    if query.workspace is not None:
        parts.append("workspace = ?")
        args.append(query.workspace)
    if query.model is not None:
        parts.append("model = ?" if events else "(model = ? OR response_model = ?)")
        args.extend([query.model] if events else [query.model, query.model])
    return (" WHERE " + " AND ".join(parts)) if parts else "", args


def _keys(by: Sequence[GroupKey], *, events: bool = False) -> list[str]:
    unknown = [k for k in by if k not in GROUP_KEYS]
    if unknown:
        raise ValueError(f"cannot group by {unknown[0]!r}; choose from {', '.join(GROUP_KEYS)}")
    return ["NULL" if events and k == "miss" else _KEYS[k] for k in by]  # an event has no miss


def call_totals(
    db: sqlite3.Connection, query: CallQuery, by: Sequence[GroupKey] = (), prices: UnitPrices | None = None
) -> list[CallTotals]:
    keys = _keys(by)
    where, args = _where(query)
    uncached, price_args = _uncached(prices or {})
    select = ", ".join([*keys, _SUMS.format(uncached=uncached)])
    # By session alone the primary key's order serves the grouping: no sort of every row.
    group = f" GROUP BY {', '.join(keys)}" if keys else ""
    rows = db.execute(f"SELECT {select} FROM calls{where}{group}", [*price_args, *args]).fetchall()
    out: list[CallTotals] = []
    for row in rows:
        key, sums = tuple(row[: len(keys)]), row[len(keys) :]
        if not sums[0]:
            continue  # no key: one row of nothing when nothing matched
        values = [v if i in _FLOAT_AT else int(v) for i, v in enumerate(sums[:-3])]
        out.append(CallTotals(*(key, *values, *sums[-3:])))
    return out


def _uncached(prices: UnitPrices) -> tuple[str, list[Any]]:
    """The three sums behind what caching saved (uncached price, real cost, calls), each model's unit
    prices inlined: one pass over the rows, however many models."""
    if not prices:
        return "0.0, 0.0, 0", []
    unknown = "WHEN cost_usd IS NULL OR input_tokens IS NULL OR output_tokens IS NULL THEN NULL"
    which = "WHEN provider IS ? AND model = ?"
    price = " ".join(f"{which} THEN input_tokens * ? + output_tokens * ?" for _ in prices)
    cost = " ".join(f"{which} THEN cost_usd" for _ in prices)
    count = " ".join(f"{which} THEN 1" for _ in prices)
    sql = f"total(CASE {unknown} {price} END), total(CASE {unknown} {cost} END), count(CASE {unknown} {count} END)"
    args: list[Any] = []
    for (provider, model), (per_in, per_out) in prices.items():
        args += [provider, model, per_in, per_out]
    pairs = [x for (provider, model) in prices for x in (provider, model)]
    return sql, [*args, *pairs, *pairs]


def models(db: sqlite3.Connection, query: CallQuery) -> list[tuple[str | None, str]]:
    where, args = _where(query)
    return [(r[0], r[1]) for r in db.execute(f"SELECT DISTINCT provider, model FROM calls{where}", args)]


def miss_counts(
    db: sqlite3.Connection, query: CallQuery, by: Sequence[GroupKey] = ()
) -> list[tuple[tuple[str | None, ...], str, int]]:
    keys = _keys(by)
    where, args = _where(query)
    where = f"{where} AND miss IS NOT NULL" if where else " WHERE miss IS NOT NULL"
    select = ", ".join([*keys, "miss", "count(*)"])
    group = ", ".join([*keys, "miss"])
    rows = db.execute(f"SELECT {select} FROM calls{where} GROUP BY {group}", args).fetchall()
    n = len(keys)
    return [(tuple(r[:n]), r[n], int(r[n + 1])) for r in rows]


def call_rows(db: sqlite3.Connection, query: CallQuery) -> list[CallRow]:
    where, args = _where(query)
    rows = db.execute(f"SELECT {_ROW_COLUMNS} FROM calls{where} ORDER BY session_id, seq", args).fetchall()
    out = []
    for row in rows:
        *head, changes, tools, system, pins, messages, expected = row
        flags = (("tools", tools), ("system", system), ("pins", pins), ("messages", messages))
        listed = None if changes is None else tuple(c for c in changes.split(",") if c)
        changed = tuple(name for name, flag in flags if flag)
        out.append(CallRow(*(*head, listed, changed, bool(expected))))
    return out


def event_rows(db: sqlite3.Connection, query: CallQuery) -> list[EventRow]:
    where, args = _where(query, events=True)
    rows = db.execute(f"SELECT {EVENT_COLUMNS} FROM events{where} ORDER BY session_id, seq", args).fetchall()
    return [EventRow(*row) for row in rows]


def event_totals(db: sqlite3.Connection, query: CallQuery, by: Sequence[GroupKey] = ()) -> list[EventTotals]:
    keys = _keys(by, events=True)
    where, args = _where(query, events=True)
    select = ", ".join(
        [
            *keys,
            "kind",
            "reason",
            "count(*)",
            "total(CASE WHEN tokens_after IS NOT NULL THEN tokens_before - tokens_after END)",
        ]
    )
    group = ", ".join([*keys, "kind", "reason"])
    rows = db.execute(f"SELECT {select} FROM events{where} GROUP BY {group}", args).fetchall()
    n = len(keys)
    return [EventTotals(tuple(r[:n]), r[n], r[n + 1], int(r[n + 2]), int(r[n + 3])) for r in rows]


class CallIndexReads:
    """The ``Store`` methods that read the call index, for a store on one SQLite connection
    (``SQLiteStore``): every SQLite failure becomes the store's one-line ``StoreError``."""

    _db: sqlite3.Connection

    def _errors(self, action: str) -> AbstractContextManager[None]:
        raise NotImplementedError

    def calls(self, query: CallQuery) -> list[CallRow]:
        with self._errors("read the calls"):
            return call_rows(self._db, query)

    def call_totals(
        self, query: CallQuery, by: Sequence[GroupKey] = (), *, prices: UnitPrices | None = None
    ) -> list[CallTotals]:
        with self._errors("sum the calls"):
            return call_totals(self._db, query, by, prices)

    def models(self, query: CallQuery) -> list[tuple[str | None, str]]:
        with self._errors("list the models"):
            return models(self._db, query)

    def miss_counts(
        self, query: CallQuery, by: Sequence[GroupKey] = ()
    ) -> list[tuple[tuple[str | None, ...], str, int]]:
        with self._errors("count the misses"):
            return miss_counts(self._db, query, by)

    def events(self, query: CallQuery) -> list[EventRow]:
        with self._errors("read the events"):
            return event_rows(self._db, query)

    def event_totals(self, query: CallQuery, by: Sequence[GroupKey] = ()) -> list[EventTotals]:
        with self._errors("sum the events"):
            return event_totals(self._db, query, by)
