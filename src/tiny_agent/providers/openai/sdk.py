"""The ``openai`` SDK's exceptions as ours: the one mapping both OpenAI wires (Chat Completions and
Responses) use."""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager

import openai

from tiny_agent.errors import UnsupportedFieldError
from tiny_agent.providers.decode import sdk_boundary
from tiny_agent.providers.http_errors import http_error, one_line, payload_error, status_error_class
from tiny_agent.providers.openai.cache import refused_field

__all__ = ["OpenAIErrors"]


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
