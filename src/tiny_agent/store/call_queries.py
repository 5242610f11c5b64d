"""Reading the call index (``store.call_index``): rows for one session's story, sums for many.

Sums are SQL ``GROUP BY``s over the index, so a look over the whole store reads each call's row
once and never an entry body.
"""

from __future__ import annotations

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
from tiny_agent.store.dialect import SQLITE, Db, Dialect

__all__ = [
    "USAGE_BUCKET_S",
    "CallIndexReads",
    "call_rows",
    "call_totals",
    "event_rows",
    "event_totals",
    "miss_counts",
    "models",
    "usage_sums",
]

USAGE_BUCKET_S = 900
"""The time buckets usage is summed in: every time zone's offset is a multiple of 15 minutes."""

_KEYS: dict[str, str] = {
    "session": "session_id",
    "model": "model",
    "provider": "provider",
    "workspace": "workspace",
    "miss": "miss",
}

_ROW_COLUMNS = (
    "session_id, seq, at, status, purpose, model, response_model, provider, workspace, input_tokens,"
    " output_tokens, cache_read_tokens, cache_write_tokens, cost_usd, seconds, stop_reason, miss, messages,"
    " shared_messages, changes, tools_changed, system_changed, pins_changed, messages_changed, expected,"
    " reasoning_tokens"
)


def _sums(d: Dialect, uncached: str) -> str:
    """The sums of a ``CallTotals``, in its field order."""
    total, count = d.total, d.count_of
    compaction, clear = d.has("changes", "compaction"), d.has("changes", "clear")
    return ", ".join(
        [
            "count(*)", count("purpose = 'turn'"), count("purpose = 'compaction'"), count("status = 'failed'"),
            count("status = 'open'"), count("status = 'done' AND input_tokens IS NULL"),
            total("input_tokens"), total("output_tokens"), total("cache_read_tokens"), total("cache_write_tokens"),
            total("CASE WHEN cache_read_tokens IS NOT NULL THEN input_tokens END"),
            "count(cache_read_tokens)", "count(cache_write_tokens)",
            total("cost_usd"), "count(cost_usd)", uncached,
            total("seconds"), "count(miss)", "count(tools_changed)",
            total("tools_changed"), total("system_changed"), total("pins_changed"), total("messages_changed"),
            count("messages_changed = 1 AND expected = 1"),
            total("CASE WHEN purpose = 'compaction' THEN cost_usd END"),
            count(compaction), total(f"CASE WHEN {compaction} THEN cost_usd END"),
            count(clear), total(f"CASE WHEN {clear} THEN cost_usd END"),
            total("reasoning_tokens"), "count(reasoning_tokens)",
            "min(at)", "max(at)", "max(workspace)",
        ]
    )  # fmt: skip


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


def _keys(d: Dialect, by: Sequence[GroupKey], *, events: bool = False) -> list[str]:
    unknown = [k for k in by if k not in GROUP_KEYS]
    if unknown:
        raise ValueError(f"cannot group by {unknown[0]!r}; choose from {', '.join(GROUP_KEYS)}")
    # an event has no miss
    return ["NULL" if events and k == "miss" else d.day_of_at if k == "day" else _KEYS[k] for k in by]


def call_totals(
    db: Db, d: Dialect, query: CallQuery, by: Sequence[GroupKey] = (), prices: UnitPrices | None = None
) -> list[CallTotals]:
    keys = _keys(d, by)
    where, args = _where(query)
    uncached, price_args = _uncached(d, prices or {})
    select = ", ".join([*keys, _sums(d, uncached)])
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


def _uncached(d: Dialect, prices: UnitPrices) -> tuple[str, list[Any]]:
    """The three sums behind what caching saved (uncached price, real cost, calls), each model's unit
    prices inlined: one pass over the rows, however many models."""
    if not prices:
        return "0.0, 0.0, 0", []
    unknown = "WHEN cost_usd IS NULL OR input_tokens IS NULL OR output_tokens IS NULL THEN NULL"
    which = f"WHEN provider {d.same} ? AND model = ?"
    price = " ".join(f"{which} THEN input_tokens * ? + output_tokens * ?" for _ in prices)
    cost = " ".join(f"{which} THEN cost_usd" for _ in prices)
    count = " ".join(f"{which} THEN 1" for _ in prices)
    sums = [d.total(f"CASE {unknown} {price} END"), d.total(f"CASE {unknown} {cost} END")]
    sql = f"{sums[0]}, {sums[1]}, count(CASE {unknown} {count} END)"
    args: list[Any] = []
    for (provider, model), (per_in, per_out) in prices.items():
        args += [provider, model, per_in, per_out]
    pairs = [x for (provider, model) in prices for x in (provider, model)]
    return sql, [*args, *pairs, *pairs]


def models(db: Db, query: CallQuery) -> list[tuple[str | None, str]]:
    where, args = _where(query)
    return [(r[0], r[1]) for r in db.execute(f"SELECT DISTINCT provider, model FROM calls{where}", args)]


def miss_counts(
    db: Db, d: Dialect, query: CallQuery, by: Sequence[GroupKey] = ()
) -> list[tuple[tuple[str | None, ...], str, int]]:
    keys = _keys(d, by)
    where, args = _where(query)
    where = f"{where} AND miss IS NOT NULL" if where else " WHERE miss IS NOT NULL"
    select = ", ".join([*keys, "miss", "count(*)"])
    group = ", ".join([*keys, "miss"])
    rows = db.execute(f"SELECT {select} FROM calls{where} GROUP BY {group}", args).fetchall()
    n = len(keys)
    return [(tuple(r[:n]), r[n], int(r[n + 1])) for r in rows]


def call_rows(db: Db, query: CallQuery) -> list[CallRow]:
    where, args = _where(query)
    rows = db.execute(f"SELECT {_ROW_COLUMNS} FROM calls{where} ORDER BY session_id, seq", args).fetchall()
    out = []
    for row in rows:
        *head, changes, tools, system, pins, messages, expected, reasoning = row
        flags = (("tools", tools), ("system", system), ("pins", pins), ("messages", messages))
        listed = None if changes is None else tuple(c for c in changes.split(",") if c)
        changed = tuple(name for name, flag in flags if flag)
        out.append(CallRow(*(*head, listed, changed, bool(expected), reasoning)))
    return out


def usage_sums(db: Db, d: Dialect, query: CallQuery, *, by_session: bool = False) -> list[tuple[Any, ...]]:
    """The answered calls summed per 15-minute bucket and model (and session): (bucket, first call's
    time, model, session or None, calls, uncached input, output, cache read, cache write, dollars,
    reasoning (of output), calls that reported their cache writes).
    A month of calls is a few thousand rows, whatever the number of calls."""
    where, args = _where(query)
    where = f"{where} AND status = 'done'" if where else " WHERE status = 'done'"
    bucket = f"CAST(at / {USAGE_BUCKET_S} AS INTEGER)" if d is SQLITE else f"FLOOR(at / {USAGE_BUCKET_S})::bigint"
    read, write = "coalesce(cache_read_tokens, 0)", "coalesce(cache_write_tokens, 0)"
    uncached = f"coalesce(input_tokens, 0) - {read} - {write}"
    session = "session_id" if by_session else "NULL"
    select = ", ".join(
        [
            bucket, "min(at)", "coalesce(response_model, model)", session, "count(*)",
            d.total(f"CASE WHEN {uncached} > 0 THEN {uncached} ELSE 0 END"), d.total("output_tokens"),
            d.total("cache_read_tokens"), d.total("cache_write_tokens"), d.total("cost_usd"),
            d.total("reasoning_tokens"), "count(cache_write_tokens)",
        ]
    )  # fmt: skip
    group = f"1, 3{', 4' if by_session else ''}"
    rows = db.execute(f"SELECT {select} FROM calls{where} GROUP BY {group} ORDER BY 1", args).fetchall()
    return [tuple(r) for r in rows]


def event_rows(db: Db, query: CallQuery) -> list[EventRow]:
    where, args = _where(query, events=True)
    rows = db.execute(f"SELECT {EVENT_COLUMNS} FROM events{where} ORDER BY session_id, seq", args).fetchall()
    return [EventRow(*row) for row in rows]


def event_totals(db: Db, d: Dialect, query: CallQuery, by: Sequence[GroupKey] = ()) -> list[EventTotals]:
    keys = _keys(d, by, events=True)
    where, args = _where(query, events=True)
    saved = d.total("CASE WHEN tokens_after IS NOT NULL THEN tokens_before - tokens_after END")
    select = ", ".join([*keys, "kind", "reason", "count(*)", saved])
    group = ", ".join([*keys, "kind", "reason"])
    rows = db.execute(f"SELECT {select} FROM events{where} GROUP BY {group}", args).fetchall()
    n = len(keys)
    return [EventTotals(tuple(r[:n]), r[n], r[n + 1], int(r[n + 2]), int(r[n + 3])) for r in rows]


class CallIndexReads:
    """The ``Store`` methods that read the call index, for a store whose ``_reading`` gives a connection
    and turns every database failure into the store's one-line ``StoreError``."""

    _dialect: Dialect

    def _reading(self, action: str) -> AbstractContextManager[Db]:
        raise NotImplementedError

    def calls(self, query: CallQuery) -> list[CallRow]:
        with self._reading("read the calls") as db:
            return call_rows(db, query)

    def call_totals(
        self, query: CallQuery, by: Sequence[GroupKey] = (), *, prices: UnitPrices | None = None
    ) -> list[CallTotals]:
        with self._reading("sum the calls") as db:
            return call_totals(db, self._dialect, query, by, prices)

    def models(self, query: CallQuery) -> list[tuple[str | None, str]]:
        with self._reading("list the models") as db:
            return models(db, query)

    def miss_counts(
        self, query: CallQuery, by: Sequence[GroupKey] = ()
    ) -> list[tuple[tuple[str | None, ...], str, int]]:
        with self._reading("count the misses") as db:
            return miss_counts(db, self._dialect, query, by)

    def usage_sums(self, query: CallQuery, *, by_session: bool = False) -> list[tuple[Any, ...]]:
        with self._reading("sum the usage") as db:
            return usage_sums(db, self._dialect, query, by_session=by_session)

    def events(self, query: CallQuery) -> list[EventRow]:
        with self._reading("read the events") as db:
            return event_rows(db, query)

    def event_totals(self, query: CallQuery, by: Sequence[GroupKey] = ()) -> list[EventTotals]:
        with self._reading("sum the events") as db:
            return event_totals(db, self._dialect, query, by)
