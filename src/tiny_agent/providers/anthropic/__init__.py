"""The Anthropic Messages wire.

- ``adapter``: ``AnthropicProvider``, over the official ``anthropic`` SDK.
- ``betas``: the beta headers a body needs, the same for the message call and ``count_tokens``.
- ``binding``: each thinking block's prefix, checked across requests (lint's ``thinking-rebound``).
- ``breaks``: the settings and blocks that break the cache on this wire (``cache_breaks``' table).
- ``compaction``: server-side compaction (``compact_20260112``): the request field, the block, its usage.
- ``check``: the Messages API's request rules on the exact body.
- ``reply``: reading a Messages answer, whole or streamed.
- ``resent``: each thinking block sent back as it came, checked across requests (``thinking-modified``).
- ``wire``: the wire as a value (``ANTHROPIC``): prefix blocks, breakpoints, check, shape.
- ``thinking``: extended thinking on the Messages wire.
"""

from __future__ import annotations

import importlib
from typing import Any

_HOME = {"AnthropicProvider": "adapter"}
"""Names this package offers, imported on first use (the SDK is slow to import)."""


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_HOME[name]}"), name)
