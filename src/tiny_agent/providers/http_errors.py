"""The error half of each adapter's one mapping boundary: which class a failure is, and its message.

Both adapters build every error through these functions, so the classes and the wording are the
same on both wires, every message and stored body is redacted, and a 401 names the key variable.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from urllib.parse import parse_qs, urlsplit

import httpx2

from tiny_agent.errors import (
    AuthenticationError,
    BadRequestError,
    ConfigError,
    ContextTooLongError,
    OverloadedError,
    ProviderConnectionError,
    ProviderHTTPError,
    ProviderResponseError,
    ProviderTimeout,
    RateLimitError,
    ServerError,
)
from tiny_agent.redaction import display_url, redact, redact_json

__all__ = [
    "CONTEXT_TOO_LONG",
    "check_base_url",
    "display_url",
    "error_type_class",
    "http_error",
    "one_line",
    "payload_error",
    "response_error",
    "status_error_class",
    "transport_error",
]

CONTEXT_TOO_LONG = (
    "prompt is too long",  # Anthropic
    "context length",
    "context window",
    "too many tokens",
    "maximum context length",  # OpenAI, DeepSeek
    "context_length_exceeded",  # OpenAI's error code
    "exceeds the available context size",  # llama.cpp
    "exceed_context_size",  # llama.cpp's error type
    "exceeded model token limit",  # Moonshot
)
"""Phrases of a 400 that means the prompt does not fit, not that the request is malformed."""

_ERROR_TYPES: Mapping[str, type[ProviderHTTPError]] = {
    "overloaded_error": OverloadedError,
    "rate_limit_error": RateLimitError,
    "rate_limit_exceeded": RateLimitError,
    "authentication_error": AuthenticationError,
    "permission_error": AuthenticationError,
    "invalid_api_key": AuthenticationError,
    "invalid_request_error": BadRequestError,
    "not_found_error": BadRequestError,
    "request_too_large": BadRequestError,
}
"""An error event inside a stream has no status of its own (the stream's is 200): its type says what it is."""


def status_error_class(status: int, detail: str) -> type[ProviderHTTPError]:
    """The most specific class for an error status; ``detail`` is the provider's message and code."""
    if status in (401, 403):
        return AuthenticationError
    if status == 429:
        return RateLimitError
    if status == 529:
        return OverloadedError
    if status >= 500:
        return ServerError
    if status == 400 and any(phrase in detail.lower() for phrase in CONTEXT_TOO_LONG):
        return ContextTooLongError
    return BadRequestError


def error_type_class(kind: str, detail: str) -> type[ProviderHTTPError]:
    """The class for an in-stream error event of type ``kind``; unknown types are server errors."""
    if any(phrase in f"{kind} {detail}".lower() for phrase in CONTEXT_TOO_LONG):
        return ContextTooLongError
    return _ERROR_TYPES.get(kind, ServerError)


def http_error(
    provider: str,
    kind: type[ProviderHTTPError],
    *,
    status: int,
    label: str,
    detail: str,
    body: object = None,
    headers: Mapping[str, str] | None = None,
    key_env: str | None = None,
    where: str | None = None,
) -> ProviderHTTPError:
    """``"<provider>: <status> <label>: <detail>"``, redacted; a 401/403 says which variable to fix.
    ``where`` replaces the status for an error inside a 200 answer: ``"<provider>: <where>: <label>: ..."``."""
    head = f"{provider}: {where}:" if where else f"{provider}: {status}"
    message = f"{head} {label}: {one_line(detail)}"
    if issubclass(kind, AuthenticationError):
        message += f"; check {key_env}" if key_env else "; check the API key"
    safe_headers = {k: redact(v) for k, v in (headers or {}).items()}
    return kind(redact(message), status_code=status, body=redact_json(body), headers=safe_headers)


def payload_error(
    provider: str,
    event: str | None,
    payload: object,
    *,
    status: int,
    headers: Mapping[str, str] | None = None,
    key_env: str | None = None,
) -> ProviderHTTPError | None:
    """The error carried by a 200 answer or by a stream event (``event: error`` or a payload with an
    ``error`` key, as both wires send), classified by its type; None when there is none.

    ``status_code`` stays the HTTP status of the answer (200): the error's own type picks the class."""
    error = payload.get("error") if isinstance(payload, Mapping) else None
    if error is None and event != "error":
        return None
    label, detail, code = "error", json.dumps(error if error is not None else payload), None
    if isinstance(error, str):
        detail = error
    elif isinstance(error, Mapping):
        found = error.get("type") or error.get("code")
        label = found if isinstance(found, str) else label
        detail = str(error["message"]) if isinstance(error.get("message"), str) else detail
        code = error.get("code") if isinstance(error.get("code"), int) else None
    if code is not None and 400 <= code < 600:
        kind = status_error_class(code, f"{label} {detail}")
    else:
        kind = error_type_class(label, detail)
    return http_error(
        provider,
        kind,
        status=status,
        label=label,
        detail=detail,
        body=payload,
        headers=headers,
        key_env=key_env,
        where="error in the answer",
    )


def transport_error(provider: str, exc: BaseException, timeout: float) -> ProviderConnectionError:
    """No usable HTTP answer: refused, reset, cut off, or silent past ``timeout`` seconds.

    ``exc`` is an ``httpx2`` exception or an SDK exception wrapping one (the wrapped one says more)."""
    root = _httpx_cause(exc)
    detail = one_line(str(root or exc)) or type(root or exc).__name__
    if isinstance(root, httpx2.ConnectTimeout):
        return ProviderTimeout(redact(f"{provider}: cannot connect within {timeout:g} s (the per-call timeout)"))
    if isinstance(root, httpx2.TimeoutException) or (root is None and "timeout" in type(exc).__name__.lower()):
        return ProviderTimeout(redact(f"{provider}: no answer within {timeout:g} s (the per-call timeout)"))
    if isinstance(root, httpx2.ConnectError | httpx2.UnsupportedProtocol | httpx2.ProxyError):
        return ProviderConnectionError(redact(f"{provider}: cannot connect: {detail}"))
    return ProviderConnectionError(redact(f"{provider}: connection lost: {detail}"))


def response_error(provider: str, what: str, sample: str | None = None) -> ProviderResponseError:
    """An answer we cannot read; ``sample`` (the start of the body) is shown on one line, redacted."""
    message = f"{provider}: {what}"
    if sample is not None:
        message += f": {one_line(sample)[:200]!r}"
    return ProviderResponseError(redact(message))


def one_line(text: str) -> str:
    """``text`` with every run of whitespace (newlines included) as one space."""
    return re.sub(r"\s+", " ", text).strip()


def check_base_url(url: str, key_env: str | None = None) -> str:
    """``url`` if it is an http(s) URL with a host and nothing else, else ``ConfigError`` saying what
    was wrong. Credentials in it are refused: the HTTP client would send them as ``Authorization:
    Basic ...`` in place of the API key. So is a query: the SDKs append each request's path after
    it. ``key_env`` names where the key goes instead."""
    try:
        parts = urlsplit(url.strip())
        ok = parts.scheme in ("http", "https") and bool(parts.hostname)
        _ = parts.port  # raises on a port that is not a number
    except ValueError:
        ok = False
    if not ok:
        raise ConfigError(
            redact(f"base URL {url!r} is not an http(s) URL with a host; for example http://127.0.0.1:8080/v1")
        )
    key = f"in {key_env}" if key_env else "in the provider's key variable (OPENAI_API_KEY, ANTHROPIC_API_KEY, ...)"
    if parts.username is not None or parts.password is not None:
        raise ConfigError(
            f"base URL {display_url(url)} holds a user name and password; tiny-agent sends no credentials from a "
            f"URL (they would go out as Authorization: Basic, in place of the API key): give the key {key}"
        )
    if parts.query or parts.fragment:
        names = ", ".join(parse_qs(parts.query, keep_blank_values=True)) or "a fragment"
        raise ConfigError(
            f"base URL {display_url(url)} has a query string ({names}), which would end up in the middle of "
            f"every request's path; leave it out (a key goes {key})"
        )
    return url.strip()


def _httpx_cause(exc: BaseException) -> httpx2.HTTPError | None:
    seen: BaseException | None = exc
    for _ in range(5):  # the SDKs wrap at most once or twice
        if seen is None or isinstance(seen, httpx2.HTTPError):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None
