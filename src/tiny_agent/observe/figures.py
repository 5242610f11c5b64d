"""The figures of a look back, as values: one ``Figures`` per session, per group and in all.

Sums come from the store's call index (``Store.call_totals``). What caching saved is priced once per
model, never once per call: each model's per-token input and output prices (``unit_prices``) go into
the store's sum, which prices every priced call's input and output uncached, against what it cost.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from tiny_agent.observe.causes import SystemChange, miss_cause
from tiny_agent.providers.registry import token_prices_at
from tiny_agent.store.base import CallTotals

__all__ = ["LAYERS", "Figures", "LayerFigures", "MissCause", "Sums", "unit_prices"]

LAYERS = ("tools", "system", "pins", "messages")
"""The prefix layers, in cache order."""


@dataclass(frozen=True)
class MissCause:
    count: int
    example: str
    """One diagnosed miss of this cause, in full."""


@dataclass(frozen=True)
class LayerFigures:
    """How often a prefix layer changed from one call to the next."""

    changed: int
    compared: int
    """Calls that had a call before them to compare with."""
    expected: int = 0
    """Messages only: changes right after a compaction or clearing, or next to a summary call."""
    where: tuple[SystemChange, ...] = ()
    """System only: where the text changed, most frequent first (from ``examined`` changes)."""
    examined: int = 0

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"changed": self.changed, "compared": self.compared}
        if self.expected:
            out["expected"] = self.expected
        if self.where or self.examined:
            out["where"] = [w.to_dict() for w in self.where]
            out["examined"] = self.examined
        return out


@dataclass(frozen=True)
class Figures:
    """Calls, tokens by class, dollars, caching, compactions, run ends, misses and layer changes."""

    calls: int = 0
    turns: int = 0
    summaries: int = 0
    failed: int = 0
    unanswered: int = 0
    """Calls still open: in flight, or lost with their process."""
    unknown_usage: int = 0
    input_tokens: int = 0
    """All input, cache reads and writes included."""
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    """None when no call reported them (llama.cpp reports no cache writes), never a made-up 0."""
    uncached_input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int | None = None
    """Of ``output_tokens``, those spent thinking; None when no call reported them."""
    cost_usd: float | None = None
    """Dollars paid for the priced calls; None when none could be priced."""
    unpriced: int = 0
    saved_usd: float | None = None
    """What the same priced requests would have cost with nothing cached, minus what they cost."""
    hit_rate: float | None = None
    """Cache reads over the input of the calls that reported their cache reads."""
    seconds: float = 0.0
    compactions: int = 0
    compaction_failures: int = 0
    """Compactions the policy or the user started that failed (their ``decision`` entries say so;
    a session from before those were written counts none)."""
    compaction_tokens_saved: int = 0
    server_compactions: int = 0
    """Compactions the provider's server ran inside a call (``--server-compact-at``)."""
    summary_cost_usd: float = 0.0
    after_compaction_cost_usd: float = 0.0
    """What the first calls after the compactions paid (they write the new prefix)."""
    clearings: int = 0
    after_clear_cost_usd: float = 0.0
    runs: int = 0
    """Runs whose end is on the record (a ``stop`` entry)."""
    stops: Mapping[str, int] = field(default_factory=dict)
    budget_stops: int = 0
    misses: int = 0
    miss_causes: Mapping[str, MissCause] = field(default_factory=dict)
    layers: Mapping[str, LayerFigures] = field(default_factory=dict)
    first_at: float | None = None
    last_at: float | None = None

    def to_dict(self) -> dict[str, Any]:
        out = {name: getattr(self, name) for name in _PLAIN}
        out["stops"] = dict(self.stops)
        out["miss_causes"] = {cause: m.count for cause, m in self.miss_causes.items()}
        out["miss_examples"] = {cause: m.example for cause, m in self.miss_causes.items()}
        out["layers"] = {name: layer.to_dict() for name, layer in self.layers.items()}
        return out


_PLAIN = [f.name for f in fields(Figures) if f.name not in ("miss_causes", "layers")]


def unit_prices(models: Iterable[tuple[str | None, str]]) -> dict[tuple[str | None, str], tuple[float, float]]:
    """Per-token input and output prices of each (provider, model) that has one, looked up once each."""
    found = {}
    for provider, model in models:
        unit = _unit_prices(provider, model)
        if unit is not None:
            found[(provider, model)] = unit
    return found


def _unit_prices(provider: str | None, model: str) -> tuple[float, float] | None:
    prices = token_prices_at(provider, model)
    return (prices.input, prices.output) if prices is not None else None


_SUMMED = [f.name for f in fields(CallTotals) if f.name not in ("key", "first_at", "last_at", "workspace")]
_ROW = operator.attrgetter(*_SUMMED)
_AT = {name: i for i, name in enumerate(_SUMMED)}


class Sums:
    """Call and event totals added up, then turned into ``Figures``."""

    def __init__(self) -> None:
        self.values: list[float] = [0] * len(_SUMMED)
        self.first_at: float | None = None
        self.last_at: float | None = None
        self.events: dict[tuple[str, str | None], int] = {}
        self.tokens_saved = 0
        self.misses: dict[str, int] = {}

    def value(self, name: str) -> float:
        return self.values[_AT[name]]

    def add_calls(self, totals: CallTotals) -> None:
        self.values = [a + b for a, b in zip(self.values, _ROW(totals), strict=True)]
        if totals.first_at is not None:
            self.first_at = totals.first_at if self.first_at is None else min(self.first_at, totals.first_at)
        if totals.last_at is not None:
            self.last_at = totals.last_at if self.last_at is None else max(self.last_at, totals.last_at)

    def merge(self, other: Sums) -> None:
        self.values = [a + b for a, b in zip(self.values, other.values, strict=True)]
        for at in (other.first_at, other.last_at):
            if at is not None:
                self.first_at = at if self.first_at is None else min(self.first_at, at)
                self.last_at = at if self.last_at is None else max(self.last_at, at)
        for (kind, reason), count in other.events.items():
            self.add_event(kind, reason, count, 0)
        self.tokens_saved += other.tokens_saved
        for text, count in other.misses.items():
            self.add_miss(text, count)

    def _saved(self) -> float | None:
        """What caching saved on the priced calls (None when none was priced)."""
        if not self.value("uncached_priced"):
            return None
        return self.value("uncached_usd") - self.value("uncached_cost_usd")

    @property
    def has_stops(self) -> bool:
        return any(kind == "stop" for kind, _ in self.events)

    def add_event(self, kind: str, reason: str | None, count: int, tokens_saved: int) -> None:
        self.events[(kind, reason)] = self.events.get((kind, reason), 0) + count
        if kind == "compaction":
            self.tokens_saved += tokens_saved

    def add_miss(self, text: str, count: int) -> None:
        self.misses[text] = self.misses.get(text, 0) + count

    def causes(self) -> dict[str, MissCause]:
        """The misses by cause, most frequent first; each cause's example is its most frequent text."""
        if not self.misses:
            return {}
        grouped: dict[str, list[tuple[int, str]]] = {}
        for text, count in self.misses.items():
            grouped.setdefault(miss_cause(text), []).append((count, text))
        ranked = sorted(grouped.items(), key=lambda kv: (-sum(c for c, _ in kv[1]), kv[0]))
        return {cause: MissCause(sum(c for c, _ in found), max(found)[1]) for cause, found in ranked}

    def figures(self, where: tuple[tuple[SystemChange, ...], int] = ((), 0)) -> Figures:
        return Figures(**self._plain(), miss_causes=self.causes(), layers=self._layers(where))

    def to_dict(self, where: tuple[tuple[SystemChange, ...], int] = ((), 0)) -> dict[str, Any]:
        """``self.figures(where).to_dict()``, without making the figures (``--json`` over many sessions)."""
        out = self._plain()
        causes = self.causes()
        out["miss_causes"] = {cause: m.count for cause, m in causes.items()}
        out["miss_examples"] = {cause: m.example for cause, m in causes.items()}
        out["layers"] = {name: layer.to_dict() for name, layer in self._layers(where).items()}
        return out

    def _layers(self, where: tuple[tuple[SystemChange, ...], int]) -> dict[str, LayerFigures]:
        v = self.values
        compared = int(v[_AT["compared"]])
        return {
            "tools": LayerFigures(int(v[_AT["tools_changed"]]), compared),
            "system": LayerFigures(int(v[_AT["system_changed"]]), compared, where=where[0], examined=where[1]),
            "pins": LayerFigures(int(v[_AT["pins_changed"]]), compared),
            "messages": LayerFigures(
                int(v[_AT["messages_changed"]]), compared, expected=int(v[_AT["messages_expected"]])
            ),
        }

    def _plain(self) -> dict[str, Any]:
        """Every field of ``Figures`` but the miss causes and the layers, in field order."""
        v = dict(zip(_SUMMED, self.values, strict=True))
        stops = {reason or "?": n for (kind, reason), n in self.events.items() if kind == "stop"}
        read_base = int(v["read_known_input_tokens"])
        return {
            "calls": int(v["calls"]),
            "turns": int(v["turns"]),
            "summaries": int(v["summaries"]),
            "failed": int(v["failed"]),
            "unanswered": int(v["open"]),
            "unknown_usage": int(v["unknown_usage"]),
            "input_tokens": int(v["input_tokens"]),
            "cache_read_tokens": int(v["cache_read_tokens"]) if v["reads_reported"] else None,
            "cache_write_tokens": int(v["cache_write_tokens"]) if v["writes_reported"] else None,
            "uncached_input_tokens": int(v["input_tokens"] - v["cache_read_tokens"] - v["cache_write_tokens"]),
            "output_tokens": int(v["output_tokens"]),
            "reasoning_tokens": int(v["reasoning_tokens"]) if v["reasoning_reported"] else None,
            "cost_usd": float(v["cost_usd"]) if v["priced"] else None,
            "unpriced": int(v["calls"] - v["priced"]),
            "saved_usd": self._saved(),
            "hit_rate": v["cache_read_tokens"] / read_base if read_base else None,
            "seconds": float(v["seconds"]),
            "compactions": sum(n for (kind, _), n in self.events.items() if kind == "compaction"),
            "compaction_failures": sum(n for key, n in self.events.items() if key == ("decision", "compact failed")),
            "compaction_tokens_saved": self.tokens_saved,
            "server_compactions": sum(n for (kind, _), n in self.events.items() if kind == "server_compaction"),
            "summary_cost_usd": float(v["summary_cost_usd"]),
            "after_compaction_cost_usd": float(v["after_compaction_cost_usd"]),
            "clearings": sum(n for (kind, _), n in self.events.items() if kind == "clear"),
            "after_clear_cost_usd": float(v["after_clear_cost_usd"]),
            "runs": sum(stops.values()),
            "stops": stops,
            "budget_stops": stops.get("budget", 0),
            "misses": int(v["misses"]),
            "first_at": self.first_at,
            "last_at": self.last_at,
        }
