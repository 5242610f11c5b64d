"""Usage tables as ccusage prints them: tokens by class and dollars per day, week, month, model,
session or 5-hour billing block, each period optionally broken down by model.

    with SQLiteStore() as store:
        table = usage_table(store, "month", since="30d", breakdown=True)
        usage_lines(table, "text")       # Month | Models | Input | Output | Cache Create | Cache Read | ...

The columns are ccusage's: Input is the input billed uncached (the request's tokens less those
read from or written to the cache), so Input + Output + Cache Create + Cache Read = Total Tokens;
Thinking is the part of Output spent reasoning (not added again).
Periods are dates in ``timezone`` (default: the machine's); a week starts on Monday and is named by
that date. A block, as ccusage counts Anthropic's 5-hour usage windows, starts at the hour of its
first call (floored) and lasts 5 hours; the first call after it starts the next one.
"""

from __future__ import annotations

import csv
import datetime
import io
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from tiny_agent.errors import ConfigError
from tiny_agent.observe.stats import When, parse_when
from tiny_agent.store.base import CallQuery, Store
from tiny_agent.store.call_queries import USAGE_BUCKET_S

__all__ = ["PERIODS", "Period", "UsageRow", "UsageTable", "usage_lines", "usage_table"]

Period = Literal["day", "week", "month", "model", "session", "block"]
PERIODS: tuple[Period, ...] = ("day", "week", "month", "model", "session", "block")
BLOCK_SECONDS = 5 * 3600
HEADS = {"day": "Date", "week": "Week", "month": "Month", "model": "Model", "session": "Session", "block": "Block"}
COLUMNS = ("Models", "Input", "Output", "Thinking", "Cache Create", "Cache Read", "Total Tokens", "Cost (USD)")


@dataclass
class UsageRow:
    """One period's sums (or one model's inside a period, in ``breakdown``)."""

    key: str
    models: set[str] = field(default_factory=set)
    input_tokens: int = 0
    """Billed uncached: the request's tokens less the cache's."""
    output_tokens: int = 0
    reasoning_tokens: int = 0
    """Of ``output_tokens``: thinking, where the calls reported it."""
    cache_create_tokens: int = 0
    """Of the calls that reported their cache writes (llama.cpp, DeepSeek and Kimi report none)."""
    writes_unreported: int = 0
    """Calls that did not report their cache writes: the column shows ``?``, never a sum of those that did."""
    cache_read_tokens: int = 0
    cost_usd: float = 0.0
    calls: int = 0
    breakdown: dict[str, UsageRow] = field(default_factory=dict)

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens + self.cache_create_tokens + self.cache_read_tokens

    def add(self, sums: Sequence[Any]) -> None:
        """Add one row of ``Store.usage_sums`` (bucket, first at, model, session, calls, uncached
        input, output, cache read, cache write, dollars, reasoning)."""
        self.models.add(str(sums[2]))
        self.calls += int(sums[4])
        self.input_tokens += int(sums[5])
        self.output_tokens += int(sums[6])
        self.cache_read_tokens += int(sums[7])
        self.cache_create_tokens += int(sums[8])
        self.cost_usd += float(sums[9])
        self.reasoning_tokens += int(sums[10] or 0) if len(sums) > 10 else 0
        self.writes_unreported += int(sums[4]) - int(sums[11]) if len(sums) > 11 else 0

    @property
    def cache_create(self) -> int | None:
        """The cache writes, None where a call did not report its own."""
        return None if self.writes_unreported else self.cache_create_tokens

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "key": self.key,
            "models": sorted(self.models),
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "reasoning_tokens": self.reasoning_tokens,
            "cache_creation_tokens": self.cache_create,
            "cache_read_tokens": self.cache_read_tokens,
            "total_tokens": self.total_tokens,
            "cost_usd": round(self.cost_usd, 10),
            "calls": self.calls,
        }
        if self.breakdown:
            out["breakdown"] = [b.to_dict() for _, b in sorted(self.breakdown.items())]
        return out


@dataclass(frozen=True)
class UsageTable:
    by: Period
    rows: tuple[UsageRow, ...]
    total: UsageRow
    timezone: str


def usage_table(
    store: Store,
    by: Period,
    *,
    ids: Iterable[str] = (),
    since: When = None,
    until: When = None,
    workspace: str | Path | None = None,
    model: str | None = None,
    timezone: str | None = None,
    order: Literal["asc", "desc"] = "asc",
    breakdown: bool = False,
) -> UsageTable:
    """The calls that match, summed per ``by`` (and per model inside each, with ``breakdown``);
    ``order``: the periods oldest first or newest first. ConfigError for a bad zone or date."""
    if by not in PERIODS:
        raise ConfigError(f"cannot group by {by!r}; choose one of: {', '.join(PERIODS)}")
    zone = _zone(timezone)
    sessions = tuple(dict.fromkeys(store.get(i).id for i in ids))
    folder = str(Path(workspace).expanduser().resolve()) if workspace is not None else None
    query = CallQuery(sessions, parse_when(since, "since"), parse_when(until, "until", end=True), folder, model)
    sums = store.usage_sums(query, by_session=by == "session")
    keys = _keys(sums, by, zone)
    table: dict[str, UsageRow] = {}
    total = UsageRow("Total")
    for row, key in zip(sums, keys, strict=True):
        period = table.setdefault(key, UsageRow(key))
        period.add(row)
        total.add(row)
        if breakdown:
            period.breakdown.setdefault(str(row[2]), UsageRow(str(row[2]))).add(row)
    ordered = sorted(table.values(), key=lambda r: r.key, reverse=order == "desc")
    if by in ("model", "session"):  # not periods: the costliest first
        ordered = sorted(table.values(), key=lambda r: (-r.cost_usd, r.key))
    return UsageTable(by, tuple(ordered), total, str(zone) if zone is not None else "local")


def _zone(name: str | None) -> datetime.tzinfo | None:
    if name is None:
        return None
    if name.upper() == "UTC":
        return datetime.UTC
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ConfigError(f"--timezone {name!r} is not a time zone; give one like UTC or Europe/Berlin") from None


def _keys(sums: Sequence[Sequence[Any]], by: Period, zone: datetime.tzinfo | None) -> list[str]:
    if by == "model":
        return [str(r[2]) for r in sums]
    if by == "session":
        return [str(r[3])[:12] for r in sums]
    if by == "block":
        return _blocks(sums, zone)
    names: dict[int, str] = {}  # a bucket's period, worked out once per bucket
    out = []
    for row in sums:
        bucket = int(row[0])
        if bucket not in names:
            when = datetime.datetime.fromtimestamp(bucket * USAGE_BUCKET_S, zone)
            if by == "month":
                names[bucket] = f"{when:%Y-%m}"
            elif by == "week":
                names[bucket] = (when.date() - datetime.timedelta(days=when.weekday())).isoformat()
            else:
                names[bucket] = when.date().isoformat()
        out.append(names[bucket])
    return out


def _blocks(sums: Sequence[Sequence[Any]], zone: datetime.tzinfo | None) -> list[str]:
    """Each bucket's block, named by its start (in ``zone``); buckets in time order. A block starts on
    the hour and lasts a whole number of buckets, so a bucket lies wholly inside one block or another."""
    out: list[str] = []
    start: float | None = None
    name = ""
    for row in sums:
        first = float(row[1])
        if start is None or first >= start + BLOCK_SECONDS:
            start = first - first % 3600  # the hour of the block's first call
            name = f"{datetime.datetime.fromtimestamp(start, zone):%Y-%m-%d %H:%M}"
        out.append(name)
    return out


def usage_lines(table: UsageTable, fmt: Literal["text", "csv", "json"] = "text") -> list[str]:
    """The table as text (aligned columns, a total row), CSV (a header, then rows) or one JSON object."""
    if fmt == "json":
        body = {
            "by": table.by,
            "timezone": table.timezone,
            "rows": [r.to_dict() for r in table.rows],
            "total": table.total.to_dict(),
        }
        return [json.dumps(body, ensure_ascii=False)]
    head = (HEADS[table.by], *COLUMNS)
    cells = []
    for row in table.rows:
        cells.append(_cells(row, row.key))
        cells += [_cells(b, f"  └ {b.key}", named=False) for _, b in sorted(row.breakdown.items())]
    if fmt == "csv":
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(head)
        for row in table.rows:
            writer.writerow(_cells(row, row.key, plain=True))
            for _, b in sorted(row.breakdown.items()):
                writer.writerow(_cells(b, f"{row.key} {b.key}", plain=True))
        writer.writerow(_cells(table.total, "Total", plain=True))
        return buffer.getvalue().splitlines()
    cells.append(_cells(table.total, "Total"))
    widths = [max(len(str(c[i])) for c in [head, *cells]) for i in range(len(head))]
    lines = [_join(head, widths), _join(tuple("-" * w for w in widths), widths)]
    lines += [_join(c, widths) for c in cells[:-1]]
    lines += [_join(tuple("-" * w for w in widths), widths), _join(cells[-1], widths)]
    return lines


def _cells(row: UsageRow, key: str, *, plain: bool = False, named: bool = True) -> tuple[str, ...]:
    """``named``: the models column filled (a breakdown row's key already is its model)."""
    numbers = (
        row.input_tokens, row.output_tokens, row.reasoning_tokens, row.cache_create, row.cache_read_tokens,
        row.total_tokens,
    )  # fmt: skip
    models = (" " if plain else ", ").join(sorted(row.models)) if named else ""
    if plain:
        return (key, models, *("" if n is None else str(n) for n in numbers), f"{row.cost_usd:.4f}")
    return (key, models, *("?" if n is None else f"{n:,}" for n in numbers), f"${row.cost_usd:,.2f}")


def _join(cells: Sequence[str], widths: Sequence[int]) -> str:
    first, models, *numbers = cells
    parts = [f"{first:<{widths[0]}}", f"{models:<{widths[1]}}"]
    parts += [f"{n:>{w}}" for n, w in zip(numbers, widths[2:], strict=True)]
    return " │ ".join(parts).rstrip()
