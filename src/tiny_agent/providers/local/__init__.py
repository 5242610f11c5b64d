"""The embedded local model: a llama.cpp server on loopback."""

from __future__ import annotations

import importlib
from typing import Any

_HOME = {"LocalProvider": "provider", "find_default_model": "llama_server", "find_binary": "llama_server"}
"""Names this package offers, imported on first use (only a run on it needs them)."""


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_HOME[name]}"), name)
