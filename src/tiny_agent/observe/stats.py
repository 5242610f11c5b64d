"""Look back over stored sessions: what they cost, what the cache read, and which prefix layers
stayed stable and which kept shifting (``tiny-agent stats``).

    with SQLiteStore() as store:
        result = stats(store, since="2026-12-01", by="day")
        result.total.hit_rate, result.total.saved_usd, result.total.layers["system"].changed

Everything is read from the store's call index in a few grouped sums, so ten thousand sessions
answer as fast as one; the system prompt texts (to say where it changed) come from the ``config``
entries of a few sessions.
"""

from __future__ import annotations

import contextlib
import datetime
import gc
import re
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tiny_agent.errors import ConfigError
from tiny_agent.observe.causes import system_changes
from tiny_agent.observe.figures import Figures, Sums, unit_prices
from tiny_agent.store.base import CallQuery, GroupKey, Store, UnitPrices

__all__ = ["BY", "Stats", "When", "parse_when", "stats"]

BY: tuple[GroupKey, ...] = ("session", "day", "model", "workspace")
"""What ``--by`` offers."""

When = str | float | datetime.date | datetime.datetime | None
_AGE = re.compile(r"^(\d+)\s*([wdhm])$")


@dataclass(frozen=True)
class Stats:
    """The look back: figures in all, per session, and per group when grouped."""

    store: str
    query: CallQuery
    by: GroupKey | None
    total: Figures
    sessions: Mapping[str, Figures]
    """Every session with a call (or a run end) that matched, by id."""
    workspaces: Mapping[str, str | None] = field(default_factory=dict)
    """Each session's workspace."""
    groups: Mapping[str, Figures] = field(default_factory=dict)
    """By the ``by`` key's value (a day, a model, a workspace, a session id)."""
    sessions_without_runs: int = 0
    """Sessions with calls but no run end on record: kept before tiny-agent recorded run ends."""

    def to_dict(self) -> dict[str, Any]:
        q = self.query
        out: dict[str, Any] = {"store": self.store, "by": self.by, **self.total.to_dict()}
        out["filters"] = {
            "sessions": list(q.sessions),
            "since": q.since,
            "until": q.until,
            "workspace": q.workspace,
            "model": q.model,
        }
        out["sessions_without_runs"] = self.sessions_without_runs
        with _bulk():
            out["sessions"] = {sid: {"workspace": self.workspaces.get(sid), **d} for sid, d in _dicts(self.sessions)}
            if self.by is not None:
                out["groups"] = dict(_dicts(self.groups))
        return out


def stats(
    store: Store,
    ids: Iterable[str] = (),
    *,
    since: When = None,
    until: When = None,
    workspace: str | Path | None = None,
    model: str | None = None,
    by: GroupKey | None = None,
) -> Stats:
    """Figures over the calls of the sessions ``ids`` (unique id prefixes; none: every session), sent
    in [since, until) (a date, a time, or an age such as ``7d``; a date as ``until`` includes that
    day), of one workspace, of one model; grouped by ``by`` when given.

    Raises ConfigError for a bad date or grouping, SessionNotFound for an unknown id."""
    with _bulk():
        return _stats(store, ids, since, until, workspace, model, by)


def _stats(
    store: Store,
    ids: Iterable[str],
    since: When,
    until: When,
    workspace: str | Path | None,
    model: str | None,
    by: GroupKey | None,
) -> Stats:
    if by is not None and by not in BY:
        raise ConfigError(f"cannot group by {by!r}; choose one of: {', '.join(BY)}")
    start, end = parse_when(since, "since"), parse_when(until, "until", end=True)
    if start is not None and end is not None and end <= start:
        raise ConfigError("--until must come after --since")
    sessions = tuple(dict.fromkeys(store.get(i).id for i in ids))
    folder = str(Path(workspace).expanduser().resolve()) if workspace is not None else None
    query = CallQuery(sessions, start, end, folder, model)
    prices = unit_prices(store.models(query))

    workspaces: dict[str, str | None] = {}
    per, by_key = _sums(store, query, by, prices, workspaces)
    total = Sums()
    for session_sums in per.values():
        total.merge(session_sums)
    changed = sorted(
        (s for s in per.items() if s[1].value("system_changed")), key=lambda s: -s[1].value("system_changed")
    )
    where = system_changes(store, (sid for sid, _ in changed), query) if changed else ((), 0)
    per_session = _Figures(per)
    groups: Mapping[str, Figures] = {}
    if by == "session":
        groups = per_session
    elif by is not None:
        groups = _Figures(by_key)
    without_runs = sum(1 for s in per.values() if s.value("calls") and not s.has_stops)
    return Stats(
        store.location,
        query,
        by,
        total.figures(where),
        per_session,
        workspaces,
        groups,
        without_runs,
    )


def _sums(
    store: Store, query: CallQuery, by: GroupKey | None, prices: UnitPrices, workspaces: dict[str, str | None]
) -> tuple[dict[str, Sums], dict[str, Sums]]:
    """Sums per session and per ``by`` key: calls (with what they would have cost uncached), misses
    and events, each read in one pass grouped by (session, key) and folded both ways here."""
    keys: list[GroupKey] = ["session"] if by in (None, "session") else ["session", by]
    sessions: dict[str, Sums] = {}
    groups: dict[str, Sums] = {}

    def at(table: dict[str, Sums], value: str | None) -> Sums:
        found = table.get(value or "?")
        if found is None:
            found = table[value or "?"] = Sums()
        return found

    two = len(keys) == 2
    for totals in store.call_totals(query, by=keys, prices=prices):
        at(sessions, totals.key[0]).add_calls(totals)
        workspaces[totals.key[0] or "?"] = totals.workspace
        if two:
            at(groups, totals.key[1]).add_calls(totals)
    for group, text, count in store.miss_counts(query, by=keys):
        at(sessions, group[0]).add_miss(text, count)
        if two:
            at(groups, group[1]).add_miss(text, count)
    for events in store.event_totals(query, by=keys):
        at(sessions, events.key[0]).add_event(events.kind, events.reason, events.count, events.tokens_saved)
        if two:
            at(groups, events.key[1]).add_event(events.kind, events.reason, events.count, events.tokens_saved)
    return sessions, groups


class _Figures(Mapping[str, Figures]):
    """Figures by key, each made from its sums when first read: a text report over ten thousand
    sessions reads the few it shows, ``--json`` reads them all."""

    def __init__(self, sums: dict[str, Sums]) -> None:
        self._sums = sums
        self._made: dict[str, Figures] = {}

    def __getitem__(self, key: str) -> Figures:
        made = self._made.get(key)
        if made is None:
            made = self._made[key] = self._sums[key].figures()
        return made

    def __iter__(self) -> Iterator[str]:
        return iter(self._sums)

    def __len__(self) -> int:
        return len(self._sums)

    def dicts(self) -> Iterator[tuple[str, dict[str, Any]]]:
        for key, sums in self._sums.items():
            made = self._made.get(key)
            yield key, made.to_dict() if made is not None else sums.to_dict()


def _dicts(figures: Mapping[str, Figures]) -> Iterator[tuple[str, dict[str, Any]]]:
    if isinstance(figures, _Figures):
        return figures.dicts()
    return ((key, f.to_dict()) for key, f in figures.items())


@contextlib.contextmanager
def _bulk() -> Iterator[None]:
    """Hold the cycle collector while ten thousands of small dicts are made: none of them forms a
    cycle, and its passes over a growing heap took a fifth of the time of a look at a big store."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def parse_when(value: When, name: str = "since", *, end: bool = False) -> float | None:
    """Unix time of a date (``2026-12-01``; as an end, the end of that day), a local time
    (``2026-12-01T14:30``, an offset allowed), ``today``, ``yesterday``, or an age (``1w``, ``7d``, ``12h``,
    ``30m``)."""
    if value is None or isinstance(value, int | float):
        return None if value is None else float(value)
    if isinstance(value, datetime.datetime):
        return value.timestamp()
    if isinstance(value, datetime.date):
        return _day_start(value + datetime.timedelta(days=1) if end else value)
    text = value.strip().lower()
    today = datetime.date.today()
    named = {"today": today, "yesterday": today - datetime.timedelta(days=1)}
    if text in named:
        return parse_when(named[text], name, end=end)
    age = _AGE.match(text)
    if age:
        seconds = int(age.group(1)) * {"w": 7 * 86400, "d": 86400, "h": 3600, "m": 60}[age.group(2)]
        return time.time() - seconds
    try:
        if len(text) == 10:
            return parse_when(datetime.date.fromisoformat(text), name, end=end)
        return datetime.datetime.fromisoformat(value.strip()).timestamp()
    except ValueError:
        pass
    raise ConfigError(
        f"--{name} {value!r} is not a date: give a date like 2026-12-01, a time like 2026-12-01T14:30, "
        "today, yesterday, or an age like 7d or 1w"
    )


def _day_start(day: datetime.date) -> float:
    return datetime.datetime(day.year, day.month, day.day).timestamp()
