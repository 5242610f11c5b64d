"""Which error class an HTTP status means; shared by both adapters' one mapping boundary each."""

from __future__ import annotations

from tiny_agent.errors import (
    AuthenticationError,
    BadRequestError,
    ContextTooLongError,
    OverloadedError,
    ProviderHTTPError,
    RateLimitError,
    ServerError,
)

__all__ = ["CONTEXT_TOO_LONG", "status_error_class"]

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
