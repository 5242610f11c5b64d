"""Looking back over stored sessions: figures, miss causes, layer stability, plots.

Reads the store's call index (``Store.call_totals``) and ranks with the context engine: it imports
only context, providers, store and types. matplotlib is imported only by ``observe.plot``.

- ``call_lines``: one line per event: what each turn cost, what each tool did, what a compaction saved.
- ``causes``: a miss cause's category, and where a session's system prompt changed.
- ``export``: a session out of the store: JSON lines, or the request body of either wire.
- ``figures``: the figures of a look back, as values: one ``Figures`` per session, per group and in all.
- ``history``: a stored session read back for a person: turns, tool runs, per-call lines, compactions.
- ``inspect``: what the next request holds, layer by layer (the answer behind ``/context``).
- ``lint``: what will cost money or fail in a request body, found before anything is spent.
- ``lint_breaks``: how to fix each cause of a miss between two bodies (lint's rules between bodies).
- ``lint_inputs``: what lint reads (JSON, JSONL, stdin, a session export with its answers' times).
- ``lint_volatile``: the dates, times and ids in a cached prefix (lint's ``volatile-in-prefix``).
- ``plot``: pictures of a look back, drawn on matplotlib's Agg canvas.
- ``record``: a recording proxy: another program's model calls stored as a session.
- ``record_prefix``: what the recorder reads off a body: its layers' fingerprint, the cause of a miss.
- ``report``: the look back as lines for a person: totals, misses by cause, layers, a table per group.
- ``stats``: ``stats``: what stored sessions cost, what the cache read, which prefix layers moved.
- ``telemetry``: OpenTelemetry spans for a run, its model calls and its tool calls.
- ``view``: ``tiny-agent view``: a session as a local web page (timeline, request beside request, what-ifs).
- ``usage``: ccusage's tables: tokens by class and dollars per day, week, month, model, session or 5-hour block.
"""

from tiny_agent.observe.figures import Figures, LayerFigures, MissCause
from tiny_agent.observe.stats import Stats, stats

__all__ = ["Figures", "LayerFigures", "MissCause", "Stats", "stats"]
