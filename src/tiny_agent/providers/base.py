"""The seam between the context engine and a model API.

An adapter speaks one wire format (Anthropic Messages or OpenAI Chat Completions). A profile is an
endpoint over an adapter: base URL, key variable, usage quirks, context window, cache rules; what
it is and can do is declared in ``profile`` (a ``ProviderProfile``), which is all the engine reads
about it. The engine renders the exact body that will be sent (one message at a time, so a turn
renders only what was appended: ``wire_messages``, then ``assemble``), checks it, then calls
``send``. Splitting the two is what lets every request be checked before it leaves.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from tiny_agent.providers.profile import ProviderProfile
from tiny_agent.types import Message, ModelResponse, OnProviderEvent, Prompt, Wire

__all__ = ["DEFAULT_MAX_TOKENS", "LOCAL_MAX_TOKENS", "Provider", "Wire", "render"]

DEFAULT_MAX_TOKENS = 4096
"""Output cap of a call whose prompt sets none (the remote adapters)."""
LOCAL_MAX_TOKENS = 512
"""The local model's output cap: on two cores a long reply takes minutes."""


@runtime_checkable
class Provider(Protocol):
    """What the engine needs from a model endpoint. A provider that holds a resource (the local
    model's server) is also a context manager: a run enters it once its tools are up and exits it
    when the run closes."""

    @property
    def profile(self) -> ProviderProfile:
        """What the endpoint is and can do: wire, model, cache rules, prices, capabilities."""
        ...

    def wire_messages(self, message: Message, names: dict[str, str]) -> list[dict[str, Any]]:
        """One neutral message as this wire's messages. Pure but for ``names`` (tool_use id -> tool
        name of the messages rendered so far), to which the adapter adds this message's calls."""
        ...

    def assemble(self, prompt: Prompt, messages: Sequence[Sequence[dict[str, Any]]]) -> dict[str, Any]:
        """The exact body for ``prompt``, from its messages as ``wire_messages`` rendered them (in
        order, one sequence per message). Cache marks go on copies: the given dicts are not changed."""
        ...

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

    def count_tokens(self, prompt: Prompt) -> int | None:
        """Exact prompt size where the endpoint can count it cheaply (``profile.counts_tokens``), else None."""
        ...


def render(provider: Provider, prompt: Prompt) -> dict[str, Any]:
    """``provider.assemble`` over ``provider.wire_messages`` of every message: what ``render`` does."""
    names: dict[str, str] = {}
    return provider.assemble(prompt, [provider.wire_messages(m, names) for m in prompt.messages])
