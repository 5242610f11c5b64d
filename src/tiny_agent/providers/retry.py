"""Retries and time limits, in one place for both adapters (the SDKs' own retries are turned off).

A call is retried when a retry can fix what failed: 408, 409, 429, every 5xx (529 "overloaded"
included), a refused or reset connection, a timeout, an error event before a stream's first event.
Nothing else is retried: not a 400, not a 401, not an answer we cannot read, not a stream that broke
after it started (its first part has been shown already).

The wait before retry N is exponential with jitter, ``base_delay * 2**(N-1)`` capped at ``max_delay``
and scaled by a random factor in [0.5, 1], unless the server says how long to wait (``retry-after-ms``
or ``retry-after``, in seconds or as an HTTP date). A server that asks for more than
``max_retry_wait`` seconds is not waited for: the call fails at once, and the message says what the
server asked and why tiny-agent did not wait. Before each wait, ``on_event`` hears a ``RetryNotice``.

Whatever the outcome, the error that leaves a ``Call`` says where the call went, how many attempts
were made and how long they took: ``"... (http://127.0.0.1:8080/v1/messages, 3 attempts in 2.4 s)"``.
"""

from __future__ import annotations

import email.utils
import math
import random
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TypeVar

from tiny_agent.errors import (
    ConfigError,
    OverloadedError,
    ProviderConnectionError,
    ProviderError,
    ProviderHTTPError,
    RateLimitError,
    ServerError,
)
from tiny_agent.redaction import redact
from tiny_agent.types import OnProviderEvent, RetryNotice

__all__ = [
    "DEFAULT_MAX_RETRIES",
    "DEFAULT_MAX_RETRY_WAIT",
    "DEFAULT_TIMEOUT",
    "Call",
    "RetryPolicy",
    "check_timeout",
    "is_retryable",
    "retry_after_seconds",
]

T = TypeVar("T")

DEFAULT_TIMEOUT = 60.0
"""Seconds to wait for a connection, and then for each next piece of the answer (the first byte of a
reply included). A streamed reply starts after the prompt is read; a reply that is not streamed
arrives whole, so a long answer from a slow model may need more (the local provider passes its own)."""

DEFAULT_MAX_RETRIES = 2
"""Retries after the first attempt, so three attempts in all."""

DEFAULT_MAX_RETRY_WAIT = 60.0
"""The longest ``retry-after`` a call waits for; a server asking more makes the call fail at once."""

_RETRY_STATUSES = (408, 409)
"""Besides 429 and 5xx: a request timeout and a conflict (a lock that another request held)."""


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long a failed provider call is retried."""

    max_retries: int = DEFAULT_MAX_RETRIES
    """Retries after the first attempt; 0 turns retrying off."""
    base_delay: float = 0.5
    """Seconds before the first retry when the server does not say; doubles with each retry."""
    max_delay: float = 8.0
    """Cap on the exponential backoff (a server's ``retry-after`` is capped by ``max_retry_wait``)."""
    max_retry_wait: float = DEFAULT_MAX_RETRY_WAIT
    """The longest ``retry-after`` that is waited for; a longer one fails the call at once."""

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise ConfigError(f"max_retries must be 0 or more, not {self.max_retries}")
        for name in ("base_delay", "max_delay", "max_retry_wait"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0):
                raise ConfigError(f"{name} must be a number of seconds, 0 or more, not {value}")

    @property
    def max_attempts(self) -> int:
        return self.max_retries + 1

    def backoff(self, retry: int, rand: Callable[[], float] = random.random) -> float:
        """The wait before retry number ``retry`` (1-based) when the server does not say."""
        exponential: float = self.base_delay * 2 ** (retry - 1)
        return min(self.max_delay, exponential) * (0.5 + rand() / 2)


def check_timeout(timeout: float) -> float:
    """``timeout`` if it is a positive number of seconds, else ``ConfigError``."""
    if not (isinstance(timeout, int | float) and math.isfinite(timeout) and timeout > 0):
        raise ConfigError(f"timeout must be a positive number of seconds, not {timeout!r}")
    return float(timeout)


def is_retryable(exc: ProviderError) -> bool:
    """Whether another attempt could succeed. A server's ``x-should-retry`` header has the last word."""
    if isinstance(exc, ProviderHTTPError):
        hint = exc.headers.get("x-should-retry", "").lower()
        if hint in ("true", "false"):
            return hint == "true"
        return isinstance(exc, RateLimitError | OverloadedError | ServerError) or exc.status_code in _RETRY_STATUSES
    return isinstance(exc, ProviderConnectionError)


def retry_after_seconds(headers: Mapping[str, str], now: Callable[[], float] = time.time) -> float | None:
    """The wait a server asked for, in seconds: ``retry-after-ms``, else ``retry-after`` (seconds or
    an HTTP date). None when it did not ask or the value cannot be read."""
    milliseconds = _number(headers.get("retry-after-ms"))
    if milliseconds is not None:
        return milliseconds / 1000
    value = headers.get("retry-after")
    if value is None:
        return None
    seconds = _number(value)
    if seconds is not None:
        return seconds
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, when.timestamp() - now())


def _number(value: str | None) -> float | None:
    try:
        number = float(value) if value is not None else math.nan
    except ValueError:
        return None
    return number if number >= 0 else None  # NaN and negatives are not a wait


class Call:
    """One logical provider call to ``url``: its attempts, its clock, its final error."""

    def __init__(
        self,
        policy: RetryPolicy,
        url: str,
        on_event: OnProviderEvent | None = None,
        *,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        rand: Callable[[], float] = random.random,
    ) -> None:
        self.policy = policy
        self.url = url
        self.on_event = on_event
        self.attempts = 0
        self._sleep = sleep
        self._clock = clock
        self._rand = rand
        self._started: float | None = None

    def run(self, attempt: Callable[[], T]) -> T:
        """``attempt()`` until it succeeds, fails for good, or the attempts run out.

        ``attempt`` raises ``ProviderError`` classes only (the adapter's mapping boundary)."""
        self._started = self._clock()
        for number in range(1, self.policy.max_attempts + 1):
            self.attempts = number
            try:
                return attempt()
            except ProviderError as exc:
                if number == self.policy.max_attempts or not is_retryable(exc):
                    raise self.final(exc) from exc.__cause__
                wait = self._wait(exc, number)
                if self.on_event is not None:
                    notice = RetryNotice(number, self.policy.max_attempts, wait, _reason(exc))
                    self.on_event(notice)
                self._sleep(wait)
        raise AssertionError("unreachable: the last attempt returns or raises")

    @contextmanager
    def finishing(self) -> Iterator[None]:
        """For what follows ``run`` (the rest of a stream): errors get the same ending, no retry."""
        try:
            yield
        except ProviderError as exc:
            raise self.final(exc) from exc.__cause__

    def final(self, exc: ProviderError, note: str = "") -> ProviderError:
        """``exc`` with where, how many attempts and how long in its message and attributes."""
        if exc.url is not None:  # already annotated (a nested call)
            return exc
        elapsed = self._clock() - (self._started if self._started is not None else self._clock())
        exc.url, exc.attempts, exc.elapsed = self.url, max(self.attempts, 1), elapsed
        plural = "" if exc.attempts == 1 else "s"
        where = f"{self.url}, {exc.attempts} attempt{plural} in {elapsed:.1f} s"
        exc.args = (redact(f"{exc}{note} ({where})"),)
        return exc

    def _wait(self, exc: ProviderError, number: int) -> float:
        asked = retry_after_seconds(exc.headers) if isinstance(exc, ProviderHTTPError) else None
        if asked is None:
            return self.policy.backoff(number, self._rand)
        if asked > self.policy.max_retry_wait:
            note = (
                f"; the server asked to retry after {asked:g} s, longer than the {self.policy.max_retry_wait:g} s"
                " tiny-agent waits at most (max_retry_wait), so it did not wait"
            )
            raise self.final(exc, note) from exc.__cause__
        return asked


def _reason(exc: ProviderError) -> str:
    return str(exc).split(": ", 1)[-1]  # without the provider name, which the caller shows anyway
