"""Secrets never shown: one process-wide list of secret values and the function that hides them.

Whoever holds a secret registers it once (the provider adapters register their API key when they are
built); whoever shows or stores text passes it through ``redact`` first: error messages, log lines,
stored error bodies. A secret is hidden wherever it appears, also inside a longer string, so a key
that a server echoes back in its error body is hidden too::

    register_secret("sk-ant-api03-abcdef123456")
    redact("invalid x-api-key: sk-ant-api03-abcdef123456")  # -> 'invalid x-api-key: [REDACTED]'
    redact_json({"error": {"message": "key sk-ant-api03-abcdef123456"}})  # nested values too

Values shorter than ``MIN_SECRET_LENGTH`` are ignored: no real key is that short, and hiding a short
word ("local") would mangle ordinary text. The list only grows; it is safe to use from threads.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

__all__ = [
    "MIN_SECRET_LENGTH",
    "NOT_SECRETS",
    "REDACTED",
    "redact",
    "redact_json",
    "register_secret",
    "registered_secrets",
]

REDACTED = "[REDACTED]"
"""What a secret is replaced with."""

MIN_SECRET_LENGTH = 8
"""Shorter values are not registered (see the module docstring)."""

NOT_SECRETS = frozenset({"not-needed", "scripted", "rendering-only"})
"""Placeholders sent where an SDK insists on a key and the server needs none (a llama.cpp server,
the scripted test provider): hiding them would blank out ordinary words, and a model name."""

_lock = threading.Lock()
_secrets: tuple[str, ...] = ()
"""Longest first, so a secret that contains another is replaced whole."""


def register_secret(value: str | None) -> None:
    """Hide ``value`` from now on in everything passed to ``redact``. None, blanks and short values are ignored."""
    global _secrets
    if value is None:
        return
    value = value.strip()
    if len(value) < MIN_SECRET_LENGTH or value in NOT_SECRETS:
        return
    with _lock:
        if value not in _secrets:
            _secrets = tuple(sorted((*_secrets, value), key=len, reverse=True))


def registered_secrets() -> tuple[str, ...]:
    """The registered values (for a test that greps its own output for them)."""
    return _secrets


def redact(text: str) -> str:
    """``text`` with every registered secret replaced by ``REDACTED``."""
    for secret in _secrets:
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text


def redact_json(value: Any) -> Any:
    """A copy of a JSON-like value (dicts, lists, tuples, strings, numbers) with every string redacted,
    keys included. Other objects are returned as they are."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, Mapping):
        return {redact(k) if isinstance(k, str) else k: redact_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(redact_json(v) for v in value)
    return value
