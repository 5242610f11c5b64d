"""The one exception tree of tiny-agent.

A user's mistake (bad flag, missing key) and a runtime failure (429, timeout) live on different
branches, so a caller can tell "fix your setup" from "try again later"::

    TinyAgentError
    ├── ConfigError                 the user must change something (flag, key, config, model file)
    ├── ProviderError               a model call failed at run time
    │   ├── LocalServerError            the embedded llama.cpp server could not be started or reached
    │   ├── ProviderConnectionError     no HTTP answer at all, or a stream cut off
    │   │   └── ProviderTimeout
    │   ├── ProviderResponseError       an answer we cannot read (not JSON, wrong shape, cut short)
    │   └── ProviderHTTPError           an HTTP answer with an error status (status_code, body, headers)
    │       ├── AuthenticationError     401 / 403: the key is wrong (also a ConfigError: the user must fix it)
    │       ├── BadRequestError         400 / 404 / 422: the request itself was refused; never retried
    │       │   ├── ContextTooLongError the prompt does not fit the model's window
    │       │   └── UnsupportedFieldError   the model refused an optional field: sent again without it
    │       ├── RateLimitError          429
    │       ├── OverloadedError         529
    │       └── ServerError             5xx, or an error event in a stream
    ├── IllegalRequestError         a rendered request broke the protocol and repair could not fix it
    ├── CompactionError             the summary call failed; the history was left as it was
    └── StoreError                  the session store cannot be opened, read or written (names the file)
        ├── StoreUnavailable            a database server out of reach or unable to write now; nothing written
        ├── SessionNotFound             no session has that id (or the prefix is ambiguous)
        ├── SessionConflict             another process appended to the same session
        └── UnreadableEntry             a stored entry cannot be read back (names the session and the entry)

``AuthenticationError`` sits on both branches (``class AuthenticationError(ProviderHTTPError,
ConfigError)``): it is a failed call, and the user must change a key to fix it, so "exit 2 = you must
change something" catches it.

SDK and HTTP exceptions are translated to this tree in exactly one place per adapter, with
``raise ... from exc`` so the original stays attached. A provider error's message is already
redacted (``tiny_agent.redaction``) and ends with where the call went and how long it tried.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = [
    "AuthenticationError",
    "BadRequestError",
    "CompactionError",
    "ConfigError",
    "ContextTooLongError",
    "IllegalRequestError",
    "LocalServerError",
    "OverloadedError",
    "ProviderConnectionError",
    "ProviderError",
    "ProviderHTTPError",
    "ProviderResponseError",
    "ProviderTimeout",
    "RateLimitError",
    "RequestTooLarge",
    "ServerError",
    "SessionConflict",
    "SessionNotFound",
    "StoreError",
    "StoreUnavailable",
    "TinyAgentError",
    "UnreadableEntry",
    "UnsupportedFieldError",
]


class TinyAgentError(Exception):
    """Base of every error tiny-agent raises on purpose."""


class ConfigError(TinyAgentError):
    """The user must change something: a flag, an environment variable, a config value, a file."""


class ProviderError(TinyAgentError):
    """A model call failed at run time."""

    url: str | None = None
    """The endpoint the failed call went to (credentials and query removed), where known."""
    attempts: int = 0
    """How many attempts were made: 1 when the call was not retried, 0 when it was never sent."""
    elapsed: float | None = None
    """Seconds from the first attempt to the failure, retries and waits included."""


class ProviderConnectionError(ProviderError):
    """The provider could not be reached (DNS, refused connection, cut stream)."""


class ProviderTimeout(ProviderConnectionError):
    """The provider did not answer in time."""


class ProviderResponseError(ProviderError):
    """The provider answered, but not with a reply we can read: not JSON, HTML, a wrong shape, a
    stream that ended before its final event."""


class ProviderHTTPError(ProviderError):
    """The provider answered with an error status.

    ``headers`` are lower-cased so ``exc.headers.get("retry-after")`` works.
    """

    def __init__(
        self, message: str, *, status_code: int, body: object = None, headers: Mapping[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.body = body
        self.headers = {k.lower(): v for k, v in (headers or {}).items()}


class AuthenticationError(ProviderHTTPError, ConfigError):
    """401 or 403: the API key is missing, wrong or lacks permission; the message names the variable."""


class BadRequestError(ProviderHTTPError):
    """The provider refused the request itself (400, 404, 422). Retrying the same request cannot help."""


class ContextTooLongError(BadRequestError):
    """The prompt is longer than the model's context window."""


class UnsupportedFieldError(BadRequestError):
    """400 naming a request field tiny-agent can do without (a prompt-cache field the model does not
    take): the engine sends the request again without ``field`` and not again in the session."""

    field: str = ""


class RateLimitError(ProviderHTTPError):
    """429: too many requests or tokens; retried with backoff before it reaches you."""


class OverloadedError(ProviderHTTPError):
    """529: the provider is overloaded; retried with backoff before it reaches you."""


class ServerError(ProviderHTTPError):
    """5xx: the provider failed; retried with backoff before it reaches you."""


class IllegalRequestError(TinyAgentError):
    """A rendered request broke the wire protocol and the deterministic repair could not fix it."""

    def __init__(self, violations: list[str]) -> None:
        super().__init__("illegal request: " + "; ".join(violations))
        self.violations = violations


class RequestTooLarge(ConfigError):
    """A request would not fit in the model's context window with room for the reply, so it was not
    sent (``context.size_guard``); the message says what to do."""


class CompactionError(TinyAgentError):
    """The summary call failed or returned nothing. The history was left unchanged."""


class LocalServerError(ProviderError):
    """The embedded llama.cpp server could not be started, reached or stopped."""


class StoreError(TinyAgentError):
    """The session store cannot be opened, read or written; the message names the file."""


class StoreUnavailable(StoreError):
    """The store's server cannot be reached or cannot write now (down, the connection lost, a statement
    timeout, its disk full); the same call may succeed later. Nothing was written, or, when the
    connection went during the commit, it cannot be known: entries written again with
    ``Store.append_entries`` are skipped if they are there. What a paid call produced is then kept
    in a spool file (``store.spool``)."""

    def __init__(self, message: str, *, again: bool = False) -> None:
        super().__init__(message)
        self.again = again
        """The connection went in the middle (a restart, a dropped connection): the same write may
        succeed at once on a new one. False for a server that is down, full or too slow."""


class SessionNotFound(StoreError):
    """No session matches the id or id prefix given (or the prefix matches several)."""


class SessionConflict(StoreError):
    """Another writer appended to the session since this one last read it; nothing was written."""


class UnreadableEntry(StoreError):
    """A stored entry cannot be read back: its body is not a JSON object, or it holds what this
    version does not know (a block type, a missing field). The message names the entry by its
    ``#seq`` and kind, and, once ``located``, the store and the session."""

    def __init__(
        self, seq: int, kind: str, reason: str, *, store: str | None = None, session_id: str | None = None
    ) -> None:
        self.seq, self.kind, self.reason = seq, kind, reason
        self.store, self.session_id = store, session_id
        entry = f"entry #{seq} ({kind}) cannot be read: {reason}"
        if store is None or session_id is None:
            super().__init__(entry)
            return
        sid = session_id[:12]
        salvage = f"; tiny-agent sessions fork {sid} --at {seq - 1} keeps what comes before it" if seq > 0 else ""
        super().__init__(f"session store {store}: session {sid}: {entry}; the other sessions are not affected{salvage}")

    def located(self, store: str, session_id: str) -> UnreadableEntry:
        """The same error, naming the store and the session it is in."""
        return UnreadableEntry(self.seq, self.kind, self.reason, store=store, session_id=session_id)
