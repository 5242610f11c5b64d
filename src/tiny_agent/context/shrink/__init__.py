"""Making the window smaller: compaction, clearing and the policies that decide when.

- ``clearing``: old tool output replaced by a stub that says how to get it again.
- ``compaction``: where to cut, what the model is asked to summarise, the record the engine builds itself.
- ``policy``: when a compaction or a clearing pays for itself at the provider's prices (arithmetic only).
- ``summarize``: ``maybe_compact`` and ``compact``: a summary replaces the older turns; the summarizers.
"""

from __future__ import annotations

import importlib
from typing import Any

_HOME = {"compact": "summarize", "maybe_compact": "summarize"}
"""Names this package offers, imported on first use (the old module context.shrink held them)."""


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_HOME[name]}"), name)
