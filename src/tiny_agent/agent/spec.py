"""``RunSpec``: everything a run is opened from, as one typed value.

The command line fills one from its flags and the config files, a library user writes one (or
passes its fields to ``Run.open`` as keywords), and ``Run.open`` builds the run from it::

    spec = RunSpec(store=open_store(), settings=RunSettings(provider="anthropic"), pins=("never edit dev.mjs",))
    with Run.open(spec) as run:
        ...

What a session remembers of a run is ``settings`` (``RunSettings``); the rest is given again on
each run (or kept elsewhere: the thresholds in ``config`` are the context's, stored with it).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from tiny_agent.agent.loop import AgentConfig, Event
from tiny_agent.agent.settings import RunSettings
from tiny_agent.store.base import Store
from tiny_agent.tools.hooks import Hook
from tiny_agent.tools.mcp.tools import McpServer
from tiny_agent.tools.toolbox import Tool

__all__ = ["SPEC_FIELDS", "RunSpec"]


@dataclass(frozen=True, kw_only=True)
class RunSpec:
    """What ``Run.open`` builds a run from. Every field has a default: ``RunSpec()`` is a run on a
    new session kept nowhere, with the provider the environment's API keys pick."""

    store: Store | None = None
    """Where the session is kept; None keeps nothing on disk."""
    settings: RunSettings = field(default_factory=RunSettings)
    """Only what is given: the rest comes from the session, else the defaults (``RunSettings``)."""
    config: Mapping[str, Any] = field(default_factory=dict)
    """Context thresholds (``ContextConfig`` fields) given for this run, over the session's."""
    system: str | None = None
    """Replaces the system prompt."""
    append_system: str | None = None
    """Adds to the system prompt (replacing what an earlier ``append_system`` of the session added)."""
    pins: Sequence[str] = ()
    """Constraints the agent keeps in view every turn."""
    resume: str | None = None
    """A session to go on with: an id or a unique prefix."""
    continue_latest: bool = False
    """Go on with the newest session of the workspace."""
    force: bool = False
    """Take over a session another process still holds."""
    agent: AgentConfig = field(default_factory=AgentConfig)
    """Limits of each run (steps, budget, streaming)."""
    on_event: Callable[[Event], None] | None = None
    """Hears every event of the run (calls, tool results, compactions, ...)."""
    provider_options: Mapping[str, Any] = field(default_factory=dict)
    """Go to the adapter (``timeout``, ``max_retries``...); not remembered. A key that a setting holds
    (``thinking``, ``max_tokens``, ``model``...) is refused in one line: give it in ``settings``; so is
    a key no adapter takes."""
    otel: bool = False
    """Export OpenTelemetry spans of each run (also on when ``OTEL_EXPORTER_OTLP_ENDPOINT`` is in ``env``)."""
    env: Mapping[str, str] = field(default_factory=lambda: os.environ)
    """Where API keys and the telemetry endpoint are read."""
    keepalive: bool = False
    """Ping the prompt cache while a tool runs (and inside ``Run.keepalive.idle()``) when the prices
    say it pays (``context.keepalive``)."""
    tools: Sequence[Tool] = ()
    """Python tools (``tiny_agent.tool``), after the workspace's."""
    mcp: Sequence[McpServer] = ()
    """MCP servers, started when the run opens and stopped when it closes; their tools come last."""
    hooks: Sequence[Hook] = ()
    """Commands run at the run's events."""
    report: Callable[[str], None] | None = None
    """Gets a line for each hook that fails (default: a logged warning), and each shell command before it runs."""
    approve: Callable[[str], bool] | None = None
    """Asks the user about a shell command (``allow_shell="ask"``); None: nobody can, the command is refused."""

    @classmethod
    def of(cls, **values: Any) -> RunSpec:
        """A spec from keyword fields (``checked``)."""
        return cls(**cls.checked(values))

    @staticmethod
    def checked(values: Mapping[str, Any]) -> dict[str, Any]:
        """``values`` as fields: a name that is no field is one line naming the fields, and None for a
        field whose default is a value (``settings``, ``agent``, ``config``...) is not given (the default,
        or the spec's value beside which it is given), as when these were ``Run.open``'s own keywords."""
        unknown = [k for k in values if k not in SPEC_FIELDS]
        if unknown:
            raise TypeError(
                f"Run.open: {unknown[0]!r} is not a RunSpec field; the fields are: {', '.join(SPEC_FIELDS)}"
            )
        return {k: v for k, v in values.items() if v is not None or k in _OPTIONAL}


SPEC_FIELDS = tuple(f.name for f in fields(RunSpec))
_OPTIONAL = frozenset(f.name for f in fields(RunSpec) if f.default is None)
