"""Making the window smaller: compaction, clearing and the policies that decide when.

- ``clearing``: old tool output replaced by a stub that says how to get it again.
- ``compaction``: where to cut, what the model is asked to summarise, the record the engine builds itself.
- ``decisions``: a log's ``decision`` entries (what a policy saw and chose), or for older sessions a guess.
- ``policy``: when a compaction or a clearing pays for itself at the provider's prices (arithmetic only).
- ``registry``: the compaction policies by name (``cost``, ``fraction``, your own), for the CLI, config and replay.
- ``shrinkable``: what compaction, clearing and the policies need from the engine (``Context`` is one).
- ``summarize``: ``maybe_compact`` and ``compact``: a summary replaces the older turns.
- ``summary_call``: the summary calls (over the transcript, or a cache read), their room, and a cut one said as such.
- ``thinking``: compaction and clearing with thinking on.
- ``transcript``: the flattened transcript a summary falls back on, fitted to the window.
"""

from __future__ import annotations

import importlib
from typing import Any

_HOME = {
    "compact": "summarize",
    "maybe_compact": "summarize",
    "CompactionPolicy": "registry",
    "POLICIES": "registry",
    "policy_named": "registry",
    "policy_names": "registry",
    "register": "registry",
}
"""Names this package offers, imported on first use (the old module context.shrink held them)."""


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_HOME[name]}"), name)
