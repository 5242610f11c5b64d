"""What breaks the prompt cache on the Responses API, beside the prefix's own bytes.

The caching guide's list, with the Responses API's field names: the model, the tools (a tool is
``{type, name, description, parameters}`` here, not nested under ``function``), the reasoning
effort, the text format and verbosity, ``parallel_tool_calls``, ``context_management``, and the
``prompt_cache_key``. A breakpoint may not be put on an assistant's ``output_text``.
"""

from __future__ import annotations

from tiny_agent.providers.break_settings import Setting, WireBreaks

BREAKS = WireBreaks(
    settings=(
        Setting("model", "model-changed", "tools", "the model", "each model has its own cache"),
        Setting("reasoning.effort", "effort-changed", "tools", "the reasoning effort"),
        Setting("text.verbosity", "effort-changed", "tools", "the verbosity"),
        Setting("text.format", "response-format-changed", "tools", "the response format"),
        Setting("parallel_tool_calls", "tools-changed", "tools", "parallel_tool_calls"),
        Setting("context_management", "tools-changed", "tools", "the server's compaction settings"),
        Setting("prompt_cache_key", "cache-key-changed", "tools", "the prompt_cache_key", "another key, another cache"),
    ),
    tool_name="name",
    tool_description="description",
    tool_schema="parameters",
    unmarkable_types=frozenset({"output_text"}),
)
