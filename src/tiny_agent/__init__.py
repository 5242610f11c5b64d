"""tiny-agent: an agent runtime whose heart is a context engine.

Typical use, the same call the CLI makes:

    from tiny_agent import Run, RunSettings, open_store

    with Run.open(open_store(), settings=RunSettings(workspace="."), pins=["never edit dev.mjs"]) as run:
        result = run.run("read README.md and tell me what it is about")  # the provider: from the environment
        print(result.answer, run.context.ledger.total)

The package's rooms (imports only go down; see docs/ARCHITECTURE.md):

- ``__main__``: ``python -m tiny_agent`` runs the CLI.
- ``_moved``: old import paths, kept for one release, each naming the module that now holds it.
- ``agent``: the loop and a run's assembly (``Run.open``, ``RunSettings``).
- ``cli``: the ``tiny-agent`` command: parsing and printing, and the config file's reading.
- ``context``: the context engine: the log, the window, rendering, token accounting, compaction.
- ``errors``: the one exception tree of tiny-agent.
- ``guide``: the embedded model's guidance (the JSON guide, phrasing heuristics, file terms).
- ``observe``: looking at runs and stored sessions: per-call lines, history, stats, plots, telemetry, lint.
- ``providers``: model APIs: the shared contract and one subpackage per wire.
- ``redaction``: secrets never shown: the process-wide list of secret values and the function that hides them.
- ``store``: where sessions are kept: SQLite on one host, PostgreSQL for several.
- ``testing``: fakes for tests and examples: a scripted provider, a billing fake on loopback.
- ``text``: bytes that may not be UTF-8 made into text by one small rule (stdin, argv, files, names).
- ``tools``: tool sources: the workspace's file tools, Python functions, MCP servers, hooks.
- ``types``: plain value types shared by every layer: content blocks, messages, usage, tools, prompts.
- ``whatif``: replay: what another policy would have cost, from a stored log, sending nothing.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from tiny_agent import _moved

_moved.install()

if TYPE_CHECKING:
    from tiny_agent.agent.loop import Agent, AgentConfig, RunResult
    from tiny_agent.agent.run import Run
    from tiny_agent.agent.settings import RunSettings
    from tiny_agent.agent.spec import RunSpec
    from tiny_agent.cli.config_file import load_config
    from tiny_agent.context.engine import Context, ContextConfig
    from tiny_agent.context.legality import check_anthropic_body, check_messages, check_openai_body, repair
    from tiny_agent.context.shrink.compaction import Compaction
    from tiny_agent.context.tokens import TokenLedger
    from tiny_agent.errors import CompactionError, ConfigError, ProviderError, TinyAgentError
    from tiny_agent.observe.call_lines import format_event, format_totals
    from tiny_agent.observe.stats import stats
    from tiny_agent.providers.anthropic.adapter import AnthropicProvider
    from tiny_agent.providers.base import Provider
    from tiny_agent.providers.local.provider import LocalProvider
    from tiny_agent.providers.openai.adapter import OpenAICompatProvider
    from tiny_agent.providers.registry import resolve_provider
    from tiny_agent.store import open_store
    from tiny_agent.tools.hooks import Hook
    from tiny_agent.tools.mcp.tools import McpServer
    from tiny_agent.tools.python_tools import FunctionTool, tool
    from tiny_agent.tools.toolbox import Tool, Toolbox, ToolFailure
    from tiny_agent.tools.workspace import Workspace
    from tiny_agent.types import (
        Message,
        ModelResponse,
        Prompt,
        TextBlock,
        ToolResultBlock,
        ToolSpec,
        ToolUseBlock,
        Usage,
    )
    from tiny_agent.whatif.replay import Policy, replay, sweep

_HOME = {
    "tiny_agent.cli.config_file": ("load_config",),
    "tiny_agent.tools.hooks": ("Hook",),
    "tiny_agent.agent.loop": ("Agent", "AgentConfig", "RunResult"),
    "tiny_agent.tools.mcp.tools": ("McpServer",),
    "tiny_agent.tools.python_tools": ("FunctionTool", "tool"),
    "tiny_agent.observe.call_lines": ("format_event", "format_totals"),
    "tiny_agent.agent.run": ("Run",),
    "tiny_agent.agent.settings": ("RunSettings",),
    "tiny_agent.agent.spec": ("RunSpec",),
    "tiny_agent.tools.toolbox": ("Tool", "ToolFailure", "Toolbox"),
    "tiny_agent.tools.workspace": ("Workspace",),
    "tiny_agent.context.shrink.compaction": ("Compaction",),
    "tiny_agent.context.engine": ("Context", "ContextConfig"),
    "tiny_agent.context.legality": ("check_anthropic_body", "check_messages", "check_openai_body", "repair"),
    "tiny_agent.whatif.replay": ("Policy", "replay", "sweep"),
    "tiny_agent.observe.stats": ("stats",),
    "tiny_agent.context.tokens": ("TokenLedger",),
    "tiny_agent.errors": ("CompactionError", "ConfigError", "ProviderError", "TinyAgentError"),
    "tiny_agent.providers.anthropic.adapter": ("AnthropicProvider",),
    "tiny_agent.providers.base": ("Provider",),
    "tiny_agent.providers.local.provider": ("LocalProvider",),
    "tiny_agent.providers.openai.adapter": ("OpenAICompatProvider",),
    "tiny_agent.providers.registry": ("resolve_provider",),
    "tiny_agent.store": ("open_store",),
    "tiny_agent.types": (
        "Message",
        "ModelResponse",
        "Prompt",
        "TextBlock",
        "ToolResultBlock",
        "ToolSpec",
        "ToolUseBlock",
        "Usage",
    ),
}
"""Where each public name lives. Imported on first use: the two provider SDKs take seconds to
import, and a run needs at most one of them."""
_MODULE_OF = {name: module for module, names in _HOME.items() for name in names}


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'tiny_agent' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_MODULE_OF])


__all__ = [
    "Agent",
    "AgentConfig",
    "AnthropicProvider",
    "Compaction",
    "CompactionError",
    "ConfigError",
    "Context",
    "ContextConfig",
    "FunctionTool",
    "Hook",
    "LocalProvider",
    "McpServer",
    "Message",
    "ModelResponse",
    "OpenAICompatProvider",
    "Policy",
    "Prompt",
    "Provider",
    "ProviderError",
    "Run",
    "RunResult",
    "RunSettings",
    "RunSpec",
    "TextBlock",
    "TinyAgentError",
    "TokenLedger",
    "Tool",
    "ToolFailure",
    "ToolResultBlock",
    "ToolSpec",
    "ToolUseBlock",
    "Toolbox",
    "Usage",
    "Workspace",
    "check_anthropic_body",
    "check_messages",
    "check_openai_body",
    "format_event",
    "format_totals",
    "load_config",
    "open_store",
    "repair",
    "replay",
    "resolve_provider",
    "stats",
    "sweep",
    "tool",
]
