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

Credentials nobody registered are hidden by their shape: the value of an ``Authorization`` header
a server echoes (``Basic <base64 of user:password>``, ``Bearer <token>``), the password of a URL
(``http://user:[REDACTED]@host``) and a key in a URL's query (``?api_key=[REDACTED]``).
"""

from __future__ import annotations

import base64
import binascii
import re
import threading
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

__all__ = [
    "MIN_SECRET_LENGTH",
    "NOT_SECRETS",
    "REDACTED",
    "display_url",
    "redact",
    "redact_json",
    "redact_secrets",
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


_BASIC = re.compile(r"\bBasic(\s+)([A-Za-z0-9+/]{4,}={0,2})(?![A-Za-z0-9+/=])")
_BEARER = re.compile(r"\bBearer(\s+)([A-Za-z0-9._~+/-]{6,}=*)")
_URL_PASSWORD = re.compile(r"\b([A-Za-z][A-Za-z0-9+.-]*://[^/\s:@\"'\\]*):[^/\s@\"'\\]+@")
_QUERY_KEY = re.compile(
    r"([?&](?:api[_-]?key|key|access[_-]?token|token|auth|password|passwd|pwd|secret|signature|sig)=)[^&\s#\"'\\]+",
    re.IGNORECASE,
)


def redact_secrets(text: str) -> str:
    """``text`` with every registered secret replaced by ``REDACTED`` (not the credentials of a known
    shape: what a model reads and writes keeps them, see ``store.rows.encode_body``)."""
    for secret in _secrets:
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text


def redact(text: str) -> str:
    """``text`` with every registered secret, and every credential of a known shape, replaced by ``REDACTED``."""
    text = redact_secrets(text)
    if "Basic" in text:
        text = _BASIC.sub(_basic, text)
    if "Bearer" in text:
        text = _BEARER.sub(_bearer, text)
    if "://" in text:
        text = _URL_PASSWORD.sub(rf"\1:{REDACTED}@", text)
    if "=" in text:
        text = _QUERY_KEY.sub(rf"\1{REDACTED}", text)
    return text


def _basic(found: re.Match[str]) -> str:
    """Only what decodes to ``user:password``: "Basic usage" and "Basic auth" stay as they are."""
    try:
        decoded = base64.b64decode(found.group(2), validate=True)
    except (binascii.Error, ValueError):
        return found.group(0)
    return f"Basic{found.group(1)}{REDACTED}" if b":" in decoded else found.group(0)


def _bearer(found: re.Match[str]) -> str:
    """A token has a digit or is long: "Bearer tokens" is a phrase, "Bearer k-7chr" a key."""
    token = found.group(2)
    if any(c.isdigit() for c in token) or len(token) >= 20:
        return f"Bearer{found.group(1)}{REDACTED}"
    return found.group(0)


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


def display_url(url: str) -> str:
    """``url`` without user, password, query or fragment: safe to print."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))
