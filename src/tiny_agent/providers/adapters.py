"""An adapter for a wire, built from the wire's own description (``WireFormat.adapter``).

The wire objects name their adapter as ``module:Class`` rather than importing it: an adapter reads
its profile, the profile reads the wire, and each SDK takes a second or more to import, so only the
adapter in use is loaded, here.
"""

from __future__ import annotations

import importlib
from typing import Any, cast

from tiny_agent.providers.base import Provider
from tiny_agent.providers.wire import wire_of

__all__ = ["RENDERING_KEY", "wire_adapter"]

RENDERING_KEY = "rendering-only"
"""The key of an adapter that renders and sends nothing."""


def wire_adapter(wire: str, model: str, **settings: Any) -> Provider:
    """The adapter of ``wire`` for ``model``; ``settings`` go to its constructor (without an
    ``api_key`` it renders and sends nothing)."""
    module, _, name = wire_of(wire).adapter.partition(":")
    adapter = getattr(importlib.import_module(module), name)
    settings.setdefault("api_key", RENDERING_KEY)
    return cast(Provider, adapter(model=model, **settings))
