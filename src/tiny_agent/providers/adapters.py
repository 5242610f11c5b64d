"""An adapter for a wire, built from the wire's own description (``WireFormat.adapter``).

The wire objects name their adapter as ``module:Class`` rather than importing it: an adapter reads
its profile, the profile reads the wire, and each SDK takes a second or more to import, so only the
adapter in use is loaded, here.
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any, cast

from tiny_agent.errors import ConfigError
from tiny_agent.providers.base import Provider
from tiny_agent.providers.endpoint import ENDPOINT_FIELDS
from tiny_agent.providers.local.tuning import LocalTuning
from tiny_agent.providers.wire import wire_of

__all__ = ["ADAPTER_OPTIONS", "RENDERING_KEY", "keywords_of", "wire_adapter"]

RENDERING_KEY = "rendering-only"
"""The key of an adapter that renders and sends nothing."""


ADAPTER_OPTIONS = frozenset(
    {
        *ENDPOINT_FIELDS, "endpoint", "max_tokens", "context_window", "cache_ttl", "thinking", "compact_threshold",
        "pricing_provider_id", "tool_mode", "stateful", "wire", *LocalTuning.__annotations__,
    }
)  # fmt: skip
"""Every keyword some adapter takes beside its model, the local provider's included: ``resolve_provider``
gives each adapter those it takes (``tests/providers/test_adapter_options.py`` holds this to them)."""


def wire_adapter(wire: str, /, model: str, **settings: Any) -> Provider:
    """The adapter of ``wire`` for ``model``; ``settings`` go to its constructor (without an
    ``api_key`` it renders and sends nothing). A keyword it does not take is one ``ConfigError`` line."""
    module, _, name = wire_of(wire).adapter.partition(":")
    adapter = getattr(importlib.import_module(module), name)
    settings.setdefault("api_key", RENDERING_KEY)
    takes = keywords_of(adapter)
    if takes is not None and not set(settings) <= takes:
        unknown = sorted(set(settings) - takes)[0]
        raise ConfigError(
            f"the {wire} adapter does not take {unknown!r}; it takes: {', '.join(sorted(takes - {'model'}))}"
        )
    return cast(Provider, adapter(model=model, **settings))


def keywords_of(adapter: Any) -> frozenset[str] | None:
    """The keywords ``adapter`` (a class) takes: its own, and ``Endpoint``'s fields where its ``**fields``
    are those; None where it takes others it does not name."""
    params = inspect.signature(adapter).parameters.values()
    named = {p.name for p in params if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)}
    rest = [p for p in params if p.kind is p.VAR_KEYWORD]
    if rest and "EndpointFields" not in str(rest[0].annotation):
        return None
    return frozenset(named | (set(ENDPOINT_FIELDS) if rest else set()))
