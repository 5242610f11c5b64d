"""What breaks the prompt cache on the Anthropic Messages wire, beside the prefix's own bytes.

From the prompt-caching page's table of what invalidates what (a level and every later one):
tool definitions invalidate everything; ``tool_choice`` and the thinking parameters invalidate the
messages only. The model is its own cache. Where a body names a tool's parts, and which blocks may
not carry a ``cache_control`` (thinking blocks, empty text blocks: "What can be cached").
A model that thinks unasked (DeepSeek's, over its Anthropic-format endpoint) takes a thinking switch
left out as on; Claude, which does not, takes it as a value of its own.
"""

from __future__ import annotations

from tiny_agent.providers.break_settings import Setting, WireBreaks

BREAKS = WireBreaks(
    settings=(
        Setting("model", "model-changed", "tools", "the model", "each model has its own cache"),
        Setting("thinking", "thinking-changed", "messages", "the thinking settings", absent={"type": "enabled"}),
        Setting("output_config.effort", "effort-changed", "messages", "the effort setting"),
        Setting("tool_choice", "tool-choice-changed", "messages", "tool_choice"),
        Setting("output_format", "response-format-changed", "messages", "the response format"),
        Setting("output_config.format", "response-format-changed", "messages", "the response format"),
    ),
    tool_name="name",
    tool_description="description",
    tool_schema="input_schema",
    unmarkable_types=frozenset({"thinking", "redacted_thinking"}),
)
