"""The seam between the context engine and a model API.

An adapter speaks one wire format (Anthropic Messages or OpenAI Chat Completions). A profile is an
endpoint over an adapter: base URL, key variable, usage quirks, context window, cache rules. The
engine calls ``render`` (pure: the exact body that will be sent), validates that body, then calls
``send``. Splitting the two is what lets every request be checked before it leaves.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol, runtime_checkable

from tiny_agent.types import ModelResponse, OnProviderEvent, Prompt, Usage

__all__ = ["Provider", "Wire"]

Wire = Literal["anthropic", "openai"]


@runtime_checkable
class Provider(Protocol):
    """What the engine needs from a model endpoint."""

    name: str
    """Profile name: "anthropic", "openai", "deepseek", "moonshot", "local", ..."""
    wire: Wire
    """The wire format ``render`` produces."""
    model: str

    def render(self, prompt: Prompt) -> dict[str, Any]:
        """The exact request body for this prompt. Pure: no I/O, same prompt -> same body."""
        ...

    def send(self, body: dict[str, Any], *, on_event: OnProviderEvent | None = None) -> ModelResponse:
        """Send a rendered body; map every failure to ``tiny_agent.errors``.

        ``on_event`` hears a ``RetryNotice`` before each retry."""
        ...

    def stream(self, body: dict[str, Any], *, on_event: OnProviderEvent | None = None) -> ModelResponse:
        """Like ``send``, but the reply streams: ``on_event`` gets each ``TextDelta`` as it arrives.

        Ends in the same ``ModelResponse`` ``send`` would give for the same reply. A stream cut off
        before its end raises (``ProviderConnectionError`` or ``ProviderResponseError``); its partial
        text never becomes a response."""
        ...

    def context_window(self) -> int | None:
        """The model's context window in tokens, or None when unknown."""
        ...

    def count_tokens(self, prompt: Prompt) -> int | None:
        """Exact prompt size where the endpoint can count it cheaply, else None (the engine estimates)."""
        ...

    def price(self, usage: Usage) -> float | None:
        """Cost in USD of one call with this usage, or None when the model's price is unknown."""
        ...
