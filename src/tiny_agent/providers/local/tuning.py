"""How the local provider runs its server and decodes: the keywords beyond where the server is, and
the sampling fields of each wire's body."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypedDict

from tiny_agent.types import Wire

__all__ = ["LOCAL_TIMEOUT", "LocalTuning", "with_sampling"]

LOCAL_TIMEOUT = 600.0
"""Seconds to wait for the local server's reply (or its next piece). A reply that is not streamed
arrives whole, and on two busy cores a long summary takes minutes: the remote providers' 60 s cut
such calls off, and each retry did the same work again."""

_SDK_FIELDS: dict[Wire, frozenset[str]] = {
    "openai": frozenset({"temperature", "top_p", "seed", "frequency_penalty", "presence_penalty"}),
    "anthropic": frozenset({"temperature", "top_p", "top_k"}),
}


class LocalTuning(TypedDict, total=False):
    """``LocalProvider``'s keywords beyond the server, the wire and the output cap."""

    ctx_size: int
    """The window of a server it starts (``DEFAULT_CTX_SIZE``)."""
    use_warm: bool
    """Use the warm server (``tiny-agent local start``) if one runs (default True)."""
    sampling: Mapping[str, Any] | None
    """Merged into every request body: ``temperature``, ``top_k``, ``top_p``, ``seed``..."""
    guided: bool | None
    """Narrow each reply with ``json_guide``; None: for the embedded 135M model only."""
    guide_options: Mapping[str, Any] | None
    """``GuideOptions`` fields: each narrowing can be turned off (the benchmark's levers)."""
    timeout: float
    """Seconds for the reply or its next piece (``LOCAL_TIMEOUT``)."""
    max_retries: int


def with_sampling(body: dict[str, Any], sampling: Mapping[str, Any], wire: Wire) -> dict[str, Any]:
    """``body`` with the sampling fields. The SDKs take only the fields of their own API as keywords;
    llama.cpp reads the rest (top_k, seed on /v1/messages...) from the JSON body, where extra_body puts them."""
    known = _SDK_FIELDS[wire]
    body.update({k: v for k, v in sampling.items() if k in known})
    extra = {k: v for k, v in sampling.items() if k not in known}
    if extra:
        body["extra_body"] = {**body.get("extra_body", {}), **extra}
    return body
