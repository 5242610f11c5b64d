"""``Endpoint``: where an adapter sends its calls and how it retries them, the same for every wire.

Both adapters (``providers/anthropic``, ``providers/openai``) take one; its fields may also be given
to an adapter as keywords (``AnthropicProvider(model=..., api_key=..., timeout=30)``), as they were
before there was an ``Endpoint``.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any, TypedDict, Unpack

import httpx2

from tiny_agent.providers.http_errors import check_base_url
from tiny_agent.providers.retry import (
    DEFAULT_MAX_RETRIES,
    DEFAULT_MAX_RETRY_WAIT,
    DEFAULT_TIMEOUT,
    RetryPolicy,
    check_timeout,
)
from tiny_agent.redaction import register_secret

__all__ = ["ENDPOINT_FIELDS", "Endpoint", "EndpointFields"]


@dataclass(frozen=True, kw_only=True)
class Endpoint:
    """Where the calls go and how a failed one is retried.

    ``timeout`` is in seconds, for the connection and then for each next piece of the answer;
    ``max_retries``, ``max_retry_wait`` and ``retry_backoff`` are described in ``providers/retry``.
    ``key_env`` names the variable the key came from, for the message of a 401."""

    api_key: str | None = None
    base_url: str | None = None
    name: str | None = None
    """The profile's name; None: the wire's own (``anthropic``, ``openai``)."""
    key_env: str | None = None
    timeout: float = DEFAULT_TIMEOUT
    max_retries: int = DEFAULT_MAX_RETRIES
    max_retry_wait: float = DEFAULT_MAX_RETRY_WAIT
    retry_backoff: float = 0.5
    http_client: httpx2.Client | None = None
    """A client of your own (proxies, certificates); None: the SDK's."""

    @classmethod
    def of(cls, endpoint: Endpoint | None, **given: Unpack[EndpointFields]) -> Endpoint:
        """``endpoint`` (or the defaults) with the fields ``given`` as keywords."""
        unknown = [k for k in given if k not in ENDPOINT_FIELDS]
        if unknown:
            raise TypeError(f"{unknown[0]!r} is not an Endpoint field; the fields are: {', '.join(ENDPOINT_FIELDS)}")
        values: dict[str, Any] = dict(given)
        return cls(**values) if endpoint is None else replace(endpoint, **values)

    def sdk_options(self, key_env: str) -> dict[str, Any]:
        """The SDK client's keywords: the key (registered as a secret, so no log shows it), the URL
        checked, the timeouts, and no retries of the SDK's own (ours are ``retry_policy``)."""
        register_secret(self.api_key)
        timeout = check_timeout(self.timeout)
        return {
            "api_key": self.api_key,
            "base_url": check_base_url(self.base_url, self.key_env or key_env) if self.base_url is not None else None,
            "max_retries": 0,
            "timeout": httpx2.Timeout(timeout, connect=min(timeout, 10.0)),
            "http_client": self.http_client,
        }

    def retry_policy(self) -> RetryPolicy:
        backoff, wait = self.retry_backoff, self.max_retry_wait
        return RetryPolicy(max_retries=self.max_retries, base_delay=backoff, max_retry_wait=wait)


class EndpointFields(TypedDict, total=False):
    """``Endpoint``'s fields as keywords (what an adapter's ``**endpoint`` accepts)."""

    api_key: str | None
    base_url: str | None
    name: str | None
    key_env: str | None
    timeout: float
    max_retries: int
    max_retry_wait: float
    retry_backoff: float
    http_client: httpx2.Client | None


ENDPOINT_FIELDS = tuple(f.name for f in fields(Endpoint))
