"""The ``openai`` SDK's client and its exceptions as ours: shared by both OpenAI wires (Chat
Completions and Responses), so the two map a 400, a 401 or a cut stream the same way."""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager

import httpx2
import openai

from tiny_agent.errors import ConfigError, UnsupportedFieldError
from tiny_agent.providers.decode import sdk_boundary
from tiny_agent.providers.http_errors import check_base_url, http_error, one_line, payload_error, status_error_class
from tiny_agent.providers.openai.cache import refused_field
from tiny_agent.redaction import register_secret

__all__ = ["OpenAIErrors", "make_client"]


def make_client(
    name: str,
    *,
    api_key: str | None,
    base_url: str | None,
    key_env: str | None,
    timeout: float,
    http_client: httpx2.Client | None,
) -> openai.OpenAI:
    """The SDK's client, its own retries off (ours are in ``providers/retry``)."""
    register_secret(api_key)
    try:
        return openai.OpenAI(
            api_key=api_key,
            base_url=check_base_url(base_url, key_env or "OPENAI_API_KEY") if base_url is not None else None,
            max_retries=0,
            timeout=httpx2.Timeout(timeout, connect=min(timeout, 10.0)),
            http_client=http_client,
        )
    except openai.OpenAIError as exc:  # no key given and none in the environment
        raise ConfigError(f"{name}: no API key: pass api_key or set {key_env or 'OPENAI_API_KEY'}") from exc


class OpenAIErrors:
    """One endpoint's mapping of the SDK's and ``httpx2``'s exceptions to ``tiny_agent.errors``."""

    def __init__(self, name: str, timeout: float, key_env: str | None) -> None:
        self.name = name
        self.timeout = timeout
        self.key_env = key_env

    def check(self, event: str | None, payload: object) -> None:
        """Raise the error an answer or a stream event carries (``{"error": ...}``), if any."""
        error = payload_error(self.name, event, payload, status=200, key_env=self.key_env)
        if error is not None:
            raise error

    def boundary(self) -> AbstractContextManager[None]:
        """The SDK's and ``httpx2``'s exceptions, during the call or while a stream is read, as ours."""
        sdk = (openai.APIStatusError, openai.APIConnectionError, openai.OpenAIError)
        return sdk_boundary(self.name, self.timeout, sdk, self.status_error)

    def status_error(self, exc: openai.APIStatusError) -> Exception:
        body = exc.body  # the SDK has already unwrapped {"error": {...}}
        detail = body.get("message") if isinstance(body, Mapping) else None
        if not isinstance(detail, str):
            detail = one_line(exc.response.text)[:200] if isinstance(body, str) else exc.message
        label = next((x for x in (exc.type, exc.code) if isinstance(x, str) and x), "error")
        field = refused_field(exc.status_code, body, detail)
        kind = status_error_class(exc.status_code, f"{exc.code} {exc.type} {detail}")
        kind = UnsupportedFieldError if field else kind
        error = http_error(
            self.name,
            kind,
            status=exc.status_code,
            label=label,
            detail=detail,
            body=body,
            headers=dict(exc.response.headers),
            key_env=self.key_env,
        )
        if isinstance(error, UnsupportedFieldError) and field:
            error.field = field
        return error
