"""What breaks the prompt cache on the Chat Completions wire, beside the prefix's own bytes.

From OpenAI's prompt-caching guide: the prefix is exact, and the settings that change it are the
model, the tools (their order too), ``parallel_tool_calls``, the response format, the reasoning
effort and verbosity; ``prompt_cache_key`` routes the request to another machine's cache. The
guide's advice on ``tool_choice`` (use it instead of removing tools) is that it does not change the
prefix, so it is not here. DeepSeek's and Kimi's ``thinking`` switch changes how the conversation's
turns are rendered (reasoning_content kept or left out): the messages, not the tools before them.
Their effort goes with it (``--thinking off`` drops it): where both changed, the switch is the cause,
and it costs the effort's level, the tools. Left out, the switch means on where the model thinks
unasked (DeepSeek's and Kimi's do: ``CacheRules.thinks_by_default``).
"""

from __future__ import annotations

from tiny_agent.providers.break_settings import Setting, WireBreaks

BREAKS = WireBreaks(
    settings=(
        Setting("model", "model-changed", "tools", "the model", "each model has its own cache"),
        Setting("reasoning_effort", "effort-changed", "tools", "the reasoning effort", follows="thinking"),
        Setting("thinking", "thinking-changed", "messages", "the thinking settings", absent={"type": "enabled"}),
        Setting("verbosity", "effort-changed", "tools", "the verbosity"),
        Setting("response_format", "response-format-changed", "tools", "the response format"),
        Setting("parallel_tool_calls", "tools-changed", "tools", "parallel_tool_calls"),
        Setting("prompt_cache_key", "cache-key-changed", "tools", "the prompt_cache_key", "another key, another cache"),
    ),
    tool_name="function.name",
    tool_description="function.description",
    tool_schema="function.parameters",
    unmarkable_types=frozenset(),
)
