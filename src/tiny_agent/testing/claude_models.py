"""Which thinking each Claude model takes, as the thinking server enforces it: written from Anthropic's
model pages apart from ``providers.thinking_caps`` (which declares the same for tiny-agent), so a test
of a declaration against this server can fail.

- Claude 4.7 and later refuse a budget (``thinking.type: enabled``).
- The Claude 5 models think unasked: a request without ``thinking`` is answered as ``adaptive``.
- A reply holds at most 32,000 tokens on Opus 4 and 4.1, 64,000 on Sonnet 3.7 to 4.5, Haiku 4.5 and
  Opus 4.5, 128,000 on the later ones (``max_tokens`` above it is a 400, with the API's text).
- Fable 5 and 5.1, Mythos 5, Opus 5.5 and Sonnet 5.5 always think: ``disabled`` is refused; Opus 5
  and Haiku 5.5 refuse it at effort xhigh or max (that 400's text is not on record: this one is ours).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["sent_type", "thinking_type"]

_NO_BUDGET = re.compile(r"claude-(?:opus-4-[78]|(?:sonnet|opus|haiku|fable|mythos)-5)")
_UNASKED = re.compile(r"claude-(?:sonnet|opus|haiku|fable|mythos)-5")
_ALWAYS = re.compile(r"claude-(?:fable-5|mythos-5|(?:opus|sonnet)-5-5)")
_OFF_UP_TO_HIGH = re.compile(r"claude-(?:opus-5(?!-5)|haiku-5-5)")

_OUTPUT_32K = re.compile(r"claude-opus-4(?:-1)?(?:-20|$)")
_OUTPUT_64K = re.compile(r"claude-(?:3-7-sonnet|sonnet-4(?:-5)?(?:-20|$)|haiku-4-5|opus-4-5)")
_TOO_LONG = "max_tokens: {asked} > {limit}, which is the maximum allowed number of output tokens for {model}"

_REFUSED = (
    '"thinking.type.{kind}" is not supported for this model. Use "thinking.type.adaptive" and '
    '"output_config.effort" to control thinking behavior.'
)


def sent_type(body: Mapping[str, Any]) -> str | None:
    config = body.get("thinking")
    return str(config.get("type")) if isinstance(config, Mapping) else None


def thinking_type(body: Mapping[str, Any]) -> tuple[str, str | None]:
    """(how the model thinks for ``body``: enabled, adaptive or disabled; the 400's text, or None)."""
    model = str(body.get("model") or "")
    sent = sent_type(body)
    limit = 32000 if _OUTPUT_32K.match(model) else 64000 if _OUTPUT_64K.match(model) else 128000
    asked = body.get("max_tokens")
    if model.startswith("claude") and isinstance(asked, int) and asked > limit:
        return "disabled", _TOO_LONG.format(asked=asked, limit=limit, model=model)
    if sent == "enabled" and _NO_BUDGET.match(model):
        return "disabled", _REFUSED.format(kind="enabled")
    if sent == "disabled" and _ALWAYS.match(model):
        return "disabled", _REFUSED.format(kind="disabled")
    config = body.get("output_config")
    effort = config.get("effort") if isinstance(config, Mapping) else None
    if sent == "disabled" and effort in ("xhigh", "max") and _OFF_UP_TO_HIGH.match(model):
        return "disabled", f'"thinking.type.disabled" is not supported at effort {effort} for this model.'

    if sent is None:
        return ("adaptive" if _UNASKED.match(model) else "disabled"), None
    return sent, None
