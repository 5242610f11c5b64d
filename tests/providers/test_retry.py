"""The one retry loop both adapters share: what is retried, how long it waits, what the last error says."""

from __future__ import annotations

import email.utils
import math
from collections.abc import Callable

import pytest

from tiny_agent.errors import (
    AuthenticationError,
    BadRequestError,
    ConfigError,
    OverloadedError,
    ProviderConnectionError,
    ProviderError,
    ProviderHTTPError,
    ProviderResponseError,
    ProviderTimeout,
    RateLimitError,
    ServerError,
)
from tiny_agent.providers.retry import Call, RetryPolicy, check_timeout, is_retryable, retry_after_seconds
from tiny_agent.types import ProviderEvent, RetryNotice

URL = "http://127.0.0.1:9/v1/messages"


def http(kind: type[ProviderHTTPError], status: int, **headers: str) -> ProviderHTTPError:
    return kind(f"p: {status} x: failed", status_code=status, headers=headers)


class Clock:
    """A fake clock that only moves when the fake sleep is called (and by ``tick`` per reading)."""

    def __init__(self, tick: float = 0.0) -> None:
        self.now = 100.0
        self.tick = tick
        self.slept: list[float] = []

    def __call__(self) -> float:
        self.now += self.tick
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def make_call(policy: RetryPolicy, clock: Clock, heard: list[ProviderEvent] | None = None) -> Call:
    on_event = heard.append if heard is not None else None
    return Call(policy, URL, on_event, sleep=clock.sleep, clock=clock, rand=lambda: 1.0)


def failing(*errors: ProviderError, result: str = "ok") -> Callable[[], str]:
    queue = list(errors)

    def attempt() -> str:
        if queue:
            raise queue.pop(0)
        return result

    return attempt


@pytest.mark.parametrize(
    ("error", "retryable"),
    [
        (http(RateLimitError, 429), True),
        (http(OverloadedError, 529), True),
        (http(ServerError, 500), True),
        (http(ServerError, 503), True),
        (http(BadRequestError, 408), True),
        (http(BadRequestError, 409), True),
        (http(BadRequestError, 400), False),
        (http(BadRequestError, 404), False),
        (http(AuthenticationError, 401), False),
        (http(ServerError, 500, **{"x-should-retry": "false"}), False),
        (http(BadRequestError, 400, **{"x-should-retry": "true"}), True),
        (ProviderConnectionError("reset"), True),
        (ProviderTimeout("slow"), True),
        (ProviderResponseError("html"), False),
        (ProviderError("other"), False),
    ],
)
def test_what_is_retried(error: ProviderError, retryable: bool) -> None:
    assert is_retryable(error) is retryable


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after-ms": "1500"}, 1.5),
        ({"retry-after": "7"}, 7.0),
        ({"retry-after": "0.25"}, 0.25),
        ({"retry-after-ms": "20", "retry-after": "9"}, 0.02),
        ({"retry-after": email.utils.formatdate(1_000_030, usegmt=True)}, 30.0),
        ({"retry-after": email.utils.formatdate(999_000, usegmt=True)}, 0.0),
        ({"retry-after": "soon"}, None),
        ({"retry-after": "-3"}, None),
        ({"retry-after": "nan"}, None),
        ({}, None),
    ],
)
def test_retry_after_is_read_in_seconds(headers: dict[str, str], seconds: float | None) -> None:
    assert retry_after_seconds(headers, now=lambda: 1_000_000.0) == seconds


def test_backoff_doubles_up_to_its_cap_with_jitter_between_half_and_whole() -> None:
    policy = RetryPolicy(base_delay=0.5, max_delay=3.0)
    assert [policy.backoff(n, rand=lambda: 1.0) for n in range(1, 6)] == [0.5, 1.0, 2.0, 3.0, 3.0]
    assert [policy.backoff(n, rand=lambda: 0.0) for n in range(1, 4)] == [0.25, 0.5, 1.0]


def test_retries_wait_tell_and_then_succeed() -> None:
    clock, heard = Clock(), []
    call = make_call(RetryPolicy(max_retries=3, base_delay=1.0), clock, heard)
    result = call.run(failing(http(ServerError, 503), http(RateLimitError, 429, **{"retry-after": "4"})))
    assert result == "ok"
    assert clock.slept == [1.0, 4.0]
    assert heard == [
        RetryNotice(1, 4, 1.0, "503 x: failed"),
        RetryNotice(2, 4, 4.0, "429 x: failed"),
    ]


def test_the_last_error_says_where_how_many_attempts_and_how_long() -> None:
    clock = Clock()
    call = make_call(RetryPolicy(max_retries=2, base_delay=1.0), clock)
    errors = [http(ServerError, 500) for _ in range(3)]
    with pytest.raises(ServerError) as caught:
        call.run(failing(*errors))
    assert caught.value is errors[2]
    assert str(caught.value) == f"p: 500 x: failed ({URL}, 3 attempts in 3.0 s)"
    assert (caught.value.url, caught.value.attempts, caught.value.elapsed) == (URL, 3, 3.0)


def test_a_refused_request_is_not_retried() -> None:
    clock = Clock()
    with pytest.raises(AuthenticationError, match=r"\(http://127\.0\.0\.1:9/v1/messages, 1 attempt in 0\.0 s\)$"):
        make_call(RetryPolicy(max_retries=5), clock).run(failing(http(AuthenticationError, 401)))
    assert clock.slept == []


def test_a_retry_after_longer_than_the_cap_fails_at_once() -> None:
    clock, heard = Clock(), []
    call = make_call(RetryPolicy(max_retries=5, max_retry_wait=60), clock, heard)
    with pytest.raises(RateLimitError) as caught:
        call.run(failing(http(RateLimitError, 429, **{"retry-after": "3600"})))
    assert clock.slept == [] and heard == []
    assert str(caught.value) == (
        "p: 429 x: failed; the server asked to retry after 3600 s, longer than the 60 s tiny-agent waits at most"
        f" (max_retry_wait), so it did not wait ({URL}, 1 attempt in 0.0 s)"
    )


def test_a_retry_after_at_the_cap_is_waited_for() -> None:
    clock = Clock()
    make_call(RetryPolicy(max_retry_wait=60), clock).run(failing(http(RateLimitError, 429, **{"retry-after": "60"})))
    assert clock.slept == [60.0]


def test_zero_retries_means_one_attempt() -> None:
    clock = Clock()
    with pytest.raises(ProviderConnectionError, match="1 attempt in"):
        make_call(RetryPolicy(max_retries=0), clock).run(failing(ProviderConnectionError("p: cannot connect")))
    assert clock.slept == []


def test_errors_after_the_call_get_the_same_ending_without_retry() -> None:
    clock = Clock(tick=0.5)
    call = make_call(RetryPolicy(), clock)
    assert call.run(failing()) == "ok"
    with pytest.raises(ProviderConnectionError) as caught, call.finishing():
        raise ProviderConnectionError("p: connection lost: reset")
    assert str(caught.value).startswith(f"p: connection lost: reset ({URL}, 1 attempt in ")
    assert clock.slept == []


@pytest.mark.parametrize(
    "kwargs",
    [{"max_retries": -1}, {"base_delay": -0.1}, {"max_delay": math.nan}, {"max_retry_wait": math.inf}],
)
def test_a_bad_policy_is_a_config_error(kwargs: dict[str, float]) -> None:
    with pytest.raises(ConfigError):
        RetryPolicy(**kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("timeout", [0, -1, math.nan, math.inf, "5"])
def test_a_timeout_must_be_a_positive_number_of_seconds(timeout: object) -> None:
    with pytest.raises(ConfigError, match="timeout must be a positive number of seconds"):
        check_timeout(timeout)  # type: ignore[arg-type]
    assert check_timeout(2) == 2.0
