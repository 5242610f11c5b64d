"""Pictures of a look back, drawn on matplotlib's Agg canvas (no display, no pyplot, no global
backend to switch). This is the only module that imports matplotlib, and only ``--plot`` imports it:
it stays off every run's start-up.

One session: the input of each call stacked by class (cache read, cache write, uncached) with its
output beside it, compactions and clearings as vertical lines, misses marked by cause, cumulative
dollars on a second axis; below, the window each call sent against the compaction threshold. Many
sessions: dollars and hit rate per day. Each function returns the series it drew, so what a figure
shows can be checked against the call records.
"""

from __future__ import annotations

import datetime
import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from tiny_agent.context.config import ContextConfig
from tiny_agent.errors import ConfigError
from tiny_agent.observe.causes import miss_cause
from tiny_agent.observe.stats import Stats, stats
from tiny_agent.providers.pricing import context_window_of
from tiny_agent.providers.profile import PRICING_IDS
from tiny_agent.store.base import CallQuery, Store

__all__ = ["DailySeries", "SessionSeries", "daily_series", "plot_days", "plot_session", "session_series"]

SIZE = (1600, 900)
"""Pixels: readable on a laptop screen and in a README."""
DPI = 100
_MARKERS = "vX^sDP*o"
MAX_DAYS = 400
"""Past this span, only the days with calls are drawn."""


@dataclass(frozen=True)
class SessionSeries:
    """What the one-session figure draws, call by call (x is the call's number, from 1)."""

    session_id: str
    cache_read: tuple[int, ...]
    cache_write: tuple[int, ...]
    uncached: tuple[int, ...]
    output: tuple[int, ...]
    cumulative_usd: tuple[float, ...]
    window: tuple[int, ...]
    """Input tokens of each call: the window it sent."""
    threshold: tuple[int, ...]
    """The compaction threshold in effect at each call, in tokens."""
    compactions: tuple[float, ...]
    """Where each compaction falls between calls (x - 0.5 of the first call after it)."""
    clearings: tuple[float, ...]
    misses: tuple[tuple[int, str], ...]
    """(call number, cause) of each miss."""
    summaries: tuple[int, ...] = ()
    """Call numbers of the summary calls (the others are turns)."""


@dataclass(frozen=True)
class DailySeries:
    days: tuple[str, ...]
    cost_usd: tuple[float, ...]
    hit_rate: tuple[float | None, ...]
    calls: tuple[int, ...]


def session_series(store: Store, session_id: str, query: CallQuery | None = None) -> SessionSeries:
    """The series of one session's own calls (within ``query``'s dates and model, when given)."""
    base = query or CallQuery()
    chosen = CallQuery((session_id,), base.since, base.until, None, base.model)
    rows = store.calls(chosen)
    seqs = [r.seq for r in rows]
    configs = [(e.seq, e.body.get("settings") or {}) for e in store.entries(session_id, kinds=("config",))]
    recorded = {e.seq: e.body.get("threshold") for e in store.entries(session_id, kinds=("call",))}
    cumulative = list(itertools.accumulate(r.cost_usd or 0.0 for r in rows))
    compactions: list[float] = []
    clearings: list[float] = []
    for event in store.events(chosen):
        after = next((i for i, seq in enumerate(seqs) if seq > event.seq), len(seqs))
        if event.kind in ("compaction", "clear"):
            (compactions if event.kind == "compaction" else clearings).append(after + 0.5)
    return SessionSeries(
        session_id,
        tuple(r.cache_read_tokens or 0 for r in rows),
        tuple(r.cache_write_tokens or 0 for r in rows),
        tuple((r.input_tokens or 0) - (r.cache_read_tokens or 0) - (r.cache_write_tokens or 0) for r in rows),
        tuple(r.output_tokens or 0 for r in rows),
        tuple(cumulative),
        tuple(r.input_tokens or 0 for r in rows),
        tuple(_threshold(recorded.get(r.seq), configs, r.seq, r.model, r.provider) for r in rows),
        tuple(compactions),
        tuple(clearings),
        tuple((i + 1, miss_cause(r.miss)) for i, r in enumerate(rows) if r.miss),
        tuple(i + 1 for i, r in enumerate(rows) if r.purpose == "compaction"),
    )


def plot_session(
    store: Store,
    session_id: str,
    path: str | Path | BinaryIO,
    *,
    query: CallQuery | None = None,
    size: tuple[int, int] = SIZE,
) -> SessionSeries:
    """Draw one session to a PNG of ``size`` pixels; returns the series drawn."""
    s = session_series(store, session_id, query)
    x = list(range(1, len(s.window) + 1))
    fig = _figure(size)
    top, bottom = fig.subplots(2, 1, sharex=True, gridspec_kw={"height_ratios": [2, 1]})
    left = [i - 0.2 for i in x]
    hatch = ["//" if n in s.summaries else "" for n in x]
    under = [a + b for a, b in zip(s.cache_read, s.cache_write, strict=True)]
    heights = [a + b for a, b in zip(under, s.uncached, strict=True)]
    for values, bottom_of, label, color in (
        (s.cache_read, None, "input: cache read", "#4c9f70"),
        (s.cache_write, s.cache_read, "input: cache write", "#e0a33a"),
        (s.uncached, under, "input: uncached", "#c8553d"),
    ):
        top.bar(left, values, 0.4, bottom=bottom_of, label=label, color=color, hatch=hatch, edgecolor="white")
    top.bar([i + 0.2 for i in x], s.output, 0.4, label="output", color="#5b6c9e")
    for marker, cause in zip(_MARKERS, sorted({c for _, c in s.misses}), strict=False):
        at = [n for n, c in s.misses if c == cause]
        top.scatter(at, [heights[n - 1] * 1.03 for n in at], marker=marker, s=70, color="black", zorder=5,
                    label=f"miss: {cause}")  # fmt: skip
    for kind, places, style in (("compaction", s.compactions, "--"), ("clearing", s.clearings, ":")):
        for i, place in enumerate(places):
            for axis in (top, bottom):
                shown = kind if i == 0 and axis is top else None
                axis.axvline(place, color="#555555", linestyle=style, linewidth=1.2, label=shown)
    # Headroom above the tallest bar for the legend, so it never hides a call.
    top.set_ylim(0, max([*heights, *s.output, 1]) * 1.5)
    top.set_ylabel("tokens per call")
    top.set_title(f"Session {session_id[:12]}: input of each call by class, output beside it, misses by cause")
    money = top.twinx()
    money.plot(x, s.cumulative_usd, color="black", linewidth=1.5, label="cumulative cost (right axis)")
    money.set_ylabel("cumulative cost (USD)")
    money.set_ylim(0, max([*s.cumulative_usd, 0.0001]) * 1.5)
    handles, labels = top.get_legend_handles_labels()
    more, more_labels = money.get_legend_handles_labels()
    if s.summaries:
        more.append(Patch(facecolor="white", edgecolor="#555555", hatch="//"))
        more_labels.append("summary call (hatched)")
    top.legend(handles + more, labels + more_labels, loc="upper left", fontsize=9, ncol=3)
    _draw_window(bottom, x, s)
    _save(fig, path)
    return s


def _draw_window(axis: Any, x: list[int], s: SessionSeries) -> None:
    """The lower panel: the window each call sent, against the compaction threshold."""
    axis.step(x, s.window, where="mid", color="#5b6c9e", label="window sent (input tokens)")
    axis.step(x, s.threshold, where="mid", color="#c8553d", linestyle="--", label="compaction threshold")
    axis.set_ylabel("tokens")
    axis.set_xlabel("model call")
    axis.set_title("Window size against the compaction threshold")
    axis.legend(loc="upper left", fontsize=9)
    axis.set_ylim(bottom=0)


def daily_series(result: Stats) -> DailySeries:
    """Per day from the first to the last (days without a call show as 0 dollars and no hit rate)."""
    found = sorted(result.groups) if result.by == "day" else []
    days = found
    if found:
        first, last = datetime.date.fromisoformat(found[0]), datetime.date.fromisoformat(found[-1])
        if (last - first).days < MAX_DAYS:
            days = [(first + datetime.timedelta(days=n)).isoformat() for n in range((last - first).days + 1)]
    figures = [result.groups.get(d) for d in days]
    return DailySeries(
        tuple(days),
        tuple((f.cost_usd or 0.0) if f else 0.0 for f in figures),
        tuple(f.hit_rate if f else None for f in figures),
        tuple(f.calls if f else 0 for f in figures),
    )


def plot_days(store: Store, result: Stats, path: str | Path | BinaryIO, *, size: tuple[int, int] = SIZE) -> DailySeries:
    """Draw dollars and hit rate per day over the sessions of ``result``; returns the series drawn."""
    if result.by != "day":
        q = result.query
        result = stats(store, q.sessions, since=q.since, until=q.until, workspace=q.workspace, model=q.model, by="day")
    s = daily_series(result)
    fig = _figure(size)
    top, bottom = fig.subplots(2, 1, sharex=True)
    x = list(range(len(s.days)))
    top.bar(x, s.cost_usd, 0.6, color="#5b6c9e", label="dollars paid")
    top.set_xlim(-0.75, max(len(x), 2) - 0.25)
    top.set_ylabel("USD per day")
    top.set_title(f"{len(result.sessions):,} sessions: dollars paid per day")
    top.legend(loc="upper left")
    rates = [None if r is None else 100 * r for r in s.hit_rate]
    bottom.plot(x, [float("nan") if r is None else r for r in rates], marker="o", color="#4c9f70",
                label="hit rate (cache read over input)")  # fmt: skip
    bottom.set_ylim(0, 100)
    bottom.set_ylabel("hit rate (%)")
    bottom.set_title("Share of input read from the prompt cache, per day")
    bottom.set_xticks(x, s.days, rotation=45 if len(x) > 12 else 0, ha="right" if len(x) > 12 else "center")
    bottom.set_xlabel("day")
    bottom.legend(loc="lower left")
    _save(fig, path)
    return s


def _threshold(
    recorded: object, configs: list[tuple[int, dict[str, object]]], seq: int, model: str, provider: str | None
) -> int:
    """The threshold the call recorded; for a call from before 2026-12-02, worked out from the settings."""
    if isinstance(recorded, int):
        return recorded
    settings: dict[str, object] = {}
    for at, changed in configs:
        if at >= seq:
            break
        settings.update(changed)
    try:
        config = ContextConfig.of(settings)
    except ConfigError:  # a stored value of the wrong type: the defaults
        config = ContextConfig()
    return config.threshold(context_window_of(model, PRICING_IDS.get(provider or "")))


def _figure(size: tuple[int, int]) -> Figure:
    fig = Figure(figsize=(size[0] / DPI, size[1] / DPI), dpi=DPI)
    FigureCanvasAgg(fig)
    return fig


def _save(fig: Figure, path: str | Path | BinaryIO) -> None:
    fig.tight_layout()
    fig.savefig(path, dpi=DPI, format="png")
