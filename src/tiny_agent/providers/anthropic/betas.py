"""The beta headers an Anthropic body needs, decided from the body alone, so the message call and
``count_tokens`` send the same ones: a beta-only field without its header is a 400 ("Extra inputs
are not permitted"), on either endpoint."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tiny_agent.providers.anthropic.compaction import COMPACTION_BETA, asks_compaction, is_compaction
from tiny_agent.providers.anthropic.thinking import betas_for

__all__ = ["request_betas", "with_betas"]


def request_betas(body: Mapping[str, Any], interleaved: bool) -> list[str]:
    """The betas ``body``'s fields need: the thinking fields' (``interleaved``: the model needs the
    header for manual thinking between tool calls), server compaction (asked for, or a compaction
    block sent back). Cache diagnostics (``diagnostics``) are generally available: their former beta
    (cache-diagnosis-2026-04-07) is needed no more."""
    betas = list(betas_for(body, interleaved))
    if asks_compaction(body) or any(is_compaction(b) for m in body.get("messages") or () for b in _blocks(m)):
        betas.append(COMPACTION_BETA)
    return betas


def with_betas(arguments: Mapping[str, Any], betas: Sequence[str]) -> dict[str, Any]:
    """The SDK's arguments with ``betas`` added to the ``anthropic-beta`` header of ``extra_headers``."""
    if not betas:
        return dict(arguments)
    headers = dict(arguments.get("extra_headers") or {})
    headers["anthropic-beta"] = ",".join([*filter(None, [headers.get("anthropic-beta")]), *betas])
    return {**arguments, "extra_headers": headers}


def _blocks(message: Mapping[str, Any]) -> list[Any]:
    content = message.get("content")
    return content if isinstance(content, list) else []
