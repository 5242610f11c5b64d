"""The look back as lines for a person: totals, misses by cause, layer stability, a table per group.

Pure formatting of a ``Stats``, so a library user prints exactly what ``tiny-agent stats`` prints.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Mapping

from tiny_agent.observe.figures import LAYERS, Figures
from tiny_agent.observe.stats import Stats

__all__ = ["format_figures", "format_stats", "format_table"]

GROUP_ROWS = 30
"""Rows of a grouped table before the rest is summed up (``--json`` has them all)."""


def _n(value: int | None) -> str:
    return "?" if value is None else f"{value:,}"


def _usd(value: float | None) -> str:
    return "$?" if value is None else f"${value:,.4f}"


def _share(value: float | None) -> str:
    return "?" if value is None else f"{value:.0%}"


def _when(at: float | None) -> str:
    return "?" if at is None else datetime.datetime.fromtimestamp(at).strftime("%Y-%m-%d %H:%M")


def format_figures(f: Figures) -> list[str]:
    """Tokens, dollars, caching, compactions, run ends, misses and layers of one set of figures."""
    lines = [
        f"calls      {_n(f.calls)} ({_n(f.turns)} turns, {_n(f.summaries)} summaries"
        + (f", {_n(pings)} keepalive pings" if (pings := f.calls - f.turns - f.summaries) > 0 else "")
        + (f"; {_n(f.failed)} failed" if f.failed else "")
        + (f"; {_n(f.unanswered)} never answered" if f.unanswered else "")
        + ")",
        f"input      {_n(f.input_tokens)} tokens: cache read {_n(f.cache_read_tokens)} ({_share(f.hit_rate)}), "
        f"cache write {_n(f.cache_write_tokens)}, uncached {_n(f.uncached_input_tokens)}"
        + (f" ({_n(f.unknown_usage)} calls did not report usage)" if f.unknown_usage else ""),
        f"output     {_n(f.output_tokens)} tokens"
        + (f" (thinking {_n(f.reasoning_tokens)})" if f.reasoning_tokens is not None else ""),
        f"cost       {_usd(f.cost_usd)}"
        + (f" ({_n(f.unpriced)} calls unpriced)" if f.unpriced else "")
        + f"; caching saved {_usd(f.saved_usd)} against the same requests sent uncached",
        f"compacted  {_n(f.compactions)} times"
        + (
            f" (summaries {_usd(f.summary_cost_usd)}; the calls right after {_usd(f.after_compaction_cost_usd)})"
            if f.compactions
            else ""
        )
        + (f"; {_n(f.compaction_failures)} failed" if f.compaction_failures else "")
        + (f"; the server compacted {_n(f.server_compactions)} times" if f.server_compactions else "")
        + f"; cleared old tool output {_n(f.clearings)} times"
        + (f" (the calls right after {_usd(f.after_clear_cost_usd)})" if f.clearings else ""),
    ]
    ends = ", ".join(f"{n} {reason}" for reason, n in sorted(f.stops.items(), key=lambda kv: -kv[1]))
    lines.append(
        f"runs       {_n(f.runs)} on record" + (f": {ends}" if ends else "") + f"; budget stops {f.budget_stops}"
    )
    lines.append(f"misses     {_n(f.misses)} calls read less of the cache than the previous request left there")
    width = max((len(c) for c in f.miss_causes), default=0)
    for cause, miss in f.miss_causes.items():
        lines.append(f"  {miss.count:>6,}  {cause:<{width}}  e.g. {_clip(miss.example, 140)}")
    return lines + _layer_lines(f)


def _layer_lines(f: Figures) -> list[str]:
    """Which prefix layers changed from call to call, and where."""
    compared = max((layer.compared for layer in f.layers.values()), default=0)
    lines = [f"layers     calls that saw each prefix layer change from the call before (of {_n(compared)} compared)"]
    for name in LAYERS:
        layer = f.layers.get(name)
        if layer is None:
            continue
        note = ""
        if layer.expected:
            note = f"  {_n(layer.expected)} expected (a compaction or clearing, or a summary call next to it)"
        if layer.where:
            top = layer.where[0]
            note = f"  at character {top.at} in {top.calls} of {layer.examined} examined: now {top.now}, was {top.was}"
            if len(layer.where) > 1:
                note += f" (and {len(layer.where) - 1} other place(s))"
        lines.append(f"  {name:<9} {layer.changed:>7,}{note}")
    return lines


def format_table(groups: Mapping[str, Figures], by: str, title: Callable[[str], str] | None = None) -> list[str]:
    """One row per group: calls, input, cache write and read, hit rate, thinking tokens, cost, saved, misses, and the
    layers that changed; ``title`` names a shown session (``lambda sid: store.get(sid).title``)."""
    head = (
        f"{'by ' + by:<24} {'calls':>7} {'input':>12} {'cache write':>12} {'cache read':>12} {'hit':>5} "
        f"{'thinking':>10} {'cost':>11} {'saved':>11} {'misses':>7}"
    )
    lines = [head + "  tools system pins messages"]
    ranked = sorted(groups.items(), key=lambda kv: kv[0]) if by == "day" else _by_cost(groups)
    for key, f in ranked[:GROUP_ROWS]:
        name = key[:12] if by == "session" else key
        layers = " ".join(f"{f.layers[n].changed:>{len(n) if n != 'tools' else 5}}" for n in LAYERS if n in f.layers)
        named = f"  {title(key)[:40]}" if title is not None and by == "session" else ""
        lines.append(
            f"{name[:24]:<24} {f.calls:>7,} {f.input_tokens:>12,} {_n(f.cache_write_tokens):>12} "
            f"{_n(f.cache_read_tokens):>12} {_share(f.hit_rate):>5} {_n(f.reasoning_tokens):>10} "
            f"{_usd(f.cost_usd):>11} {_usd(f.saved_usd):>11} {f.misses:>7,}  {layers}{named}"
        )
    if len(ranked) > GROUP_ROWS:
        lines.append(f"... and {len(ranked) - GROUP_ROWS:,} more (--json has every one)")
    return lines


def format_stats(result: Stats, title: Callable[[str], str] | None = None) -> list[str]:
    """The whole look back, as ``tiny-agent stats`` prints it."""
    f = result.total
    lines = [f"{len(result.sessions):,} sessions · {_when(f.first_at)} to {_when(f.last_at)} · store {result.store}"]
    lines += format_figures(f)
    if result.sessions_without_runs:
        lines.append(
            f"           ({result.sessions_without_runs:,} sessions have no run ends on record: runs killed "
            "or cut off (a closed pipe), or kept before tiny-agent recorded them; their budget stops are unknown)"
        )
    if result.by is not None:
        lines.append("")
        lines += format_table(result.groups, result.by, title)
    return lines


def _by_cost(groups: Mapping[str, Figures]) -> list[tuple[str, Figures]]:
    return sorted(groups.items(), key=lambda kv: (-(kv[1].cost_usd or 0.0), -kv[1].calls, kv[0]))


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."
