"""Old import paths, kept for one release: each names the module that now holds what it held.

The layout changed in 0.2 (one job per folder; see docs/ARCHITECTURE.md). ``import`` of an old path
still works and gives the new module itself (not a copy), with a ``DeprecationWarning`` that names
the new path. This is the one list of them; it goes in 0.3.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from collections.abc import Sequence
from types import ModuleType

__all__ = ["MOVED", "install"]

MOVED: dict[str, str] = {
    "tiny_agent.agent.config_file": "tiny_agent.cli.config_file",
    "tiny_agent.agent.file_terms": "tiny_agent.guide.file_terms",
    "tiny_agent.agent.files": "tiny_agent.tools.files",
    "tiny_agent.agent.grammar": "tiny_agent.tools.grammar",
    "tiny_agent.agent.guards": "tiny_agent.tools.guards",
    "tiny_agent.agent.history": "tiny_agent.observe.history",
    "tiny_agent.agent.hooks": "tiny_agent.tools.hooks",
    "tiny_agent.agent.mcp": "tiny_agent.tools.mcp.tools",
    "tiny_agent.agent.mcp_connection": "tiny_agent.tools.mcp.connection",
    "tiny_agent.agent.mcp_content": "tiny_agent.tools.mcp.content",
    "tiny_agent.agent.mcp_server": "tiny_agent.tools.mcp.server",
    "tiny_agent.agent.python_tools": "tiny_agent.tools.python_tools",
    "tiny_agent.agent.report": "tiny_agent.observe.call_lines",
    "tiny_agent.agent.telemetry": "tiny_agent.observe.telemetry",
    "tiny_agent.agent.tools": "tiny_agent.tools.toolbox",
    "tiny_agent.agent.toolset": "tiny_agent.tools.toolset",
    "tiny_agent.agent.workspace": "tiny_agent.tools.workspace",
    "tiny_agent.context.clearing": "tiny_agent.context.shrink.clearing",
    "tiny_agent.context.compaction": "tiny_agent.context.shrink.compaction",
    "tiny_agent.context.export": "tiny_agent.observe.export",
    "tiny_agent.context.inspect": "tiny_agent.observe.inspect",
    "tiny_agent.context.lint": "tiny_agent.observe.lint",
    "tiny_agent.context.policy": "tiny_agent.context.shrink.policy",
    "tiny_agent.context.replay": "tiny_agent.whatif.replay",
    "tiny_agent.context.replay_figures": "tiny_agent.whatif.figures",
    "tiny_agent.context.replay_provider": "tiny_agent.whatif.provider",
    "tiny_agent.providers.anthropic_reply": "tiny_agent.providers.anthropic.reply",
    "tiny_agent.providers.json_guide": "tiny_agent.guide.json_guide",
    "tiny_agent.providers.json_tools": "tiny_agent.providers.openai.json_tools",
    "tiny_agent.providers.llama_process": "tiny_agent.providers.local.llama_process",
    "tiny_agent.providers.llama_server": "tiny_agent.providers.local.llama_server",
    "tiny_agent.providers.openai_cache": "tiny_agent.providers.openai.cache",
    "tiny_agent.providers.openai_compat": "tiny_agent.providers.openai.adapter",
    "tiny_agent.providers.openai_reply": "tiny_agent.providers.openai.reply",
    "tiny_agent.providers.path_rank": "tiny_agent.guide.path_rank",
    "tiny_agent.providers.quotes": "tiny_agent.guide.quotes",
    "tiny_agent.providers.request_kind": "tiny_agent.guide.request_kind",
    "tiny_agent.providers.token_count": "tiny_agent.providers.openai.token_count",
    "tiny_agent.providers.wire_check": "tiny_agent.context.legality",
    "tiny_agent.providers.words": "tiny_agent.guide.words",
    "tiny_agent.providers.write_request": "tiny_agent.guide.write_request",
}
"""Old module path -> new module path. Three old modules are now packages of the same name, which
re-export what the module held: ``providers.anthropic``, ``providers.local``, ``context.shrink``.
``providers.wire_check`` was split by wire (``providers.check``, ``providers.anthropic.check``,
``providers.openai.check``): its old path gives ``context.legality``, which holds its three functions."""


class _Alias(importlib.abc.Loader):
    def __init__(self, new: str) -> None:
        self.new = new

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        warnings.warn(f"{spec.name} moved to {self.new}", DeprecationWarning, stacklevel=3)
        return importlib.import_module(self.new)

    def exec_module(self, module: ModuleType) -> None:
        pass


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        new = MOVED.get(fullname)
        return importlib.machinery.ModuleSpec(fullname, _Alias(new)) if new else None


def install() -> None:
    """Let the old paths import (idempotent)."""
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.append(_Finder())
