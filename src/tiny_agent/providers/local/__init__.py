"""The embedded local model: a llama.cpp server on loopback.

- ``llama_process``: one ``llama-server`` process on loopback, with its key, locked to the process that started it.
- ``llama_server``: start, find and stop the server; the binary and the default model.
- ``provider``: ``LocalProvider``: the server behind one of the two adapters, with exact token counts.
- ``tuning``: ``LocalTuning``: the local provider's server and decoding keywords; the sampling fields.
"""

from __future__ import annotations

import importlib
from typing import Any

_HOME = {"LocalProvider": "provider", "find_default_model": "llama_server", "find_binary": "llama_server"}
"""Names this package offers, imported on first use (only a run on it needs them)."""


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_HOME[name]}"), name)
