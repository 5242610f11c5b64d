"""A run assembled in one call: the session, its settings, the provider, the workspace and the agent.

``Run.open`` does what every entry point needs, in the order that keeps a mistake cheap: the
session first (a damaged, locked or read-only store is one line before a cent is spent), then the
settings (the session's, overridden by what is given, the change recorded), the workspace (checked
before the provider, which may start a server), the system prompt (composed and checked for values
that change between runs), the provider, and tool output sized to the model's window::

    with Run.open(SQLiteStore(), settings=RunSettings(provider="anthropic"), pins=["never edit dev.mjs"]) as run:
        result = run.agent.run("read README.md and tell me what it is about")

The command line parses its flags into these arguments and prints what comes back.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tiny_agent.agent.keepalive import Keepalive
from tiny_agent.agent.loop import DEFAULT_SYSTEM, Agent, AgentConfig, Event, RunResult
from tiny_agent.agent.settings import DEFAULT_MAX_OUTPUT_CHARS, RunSettings, compose_system, looks_volatile
from tiny_agent.context.config import ContextConfig
from tiny_agent.context.engine import Context
from tiny_agent.context.session import Session
from tiny_agent.errors import ConfigError
from tiny_agent.observe import telemetry as otel
from tiny_agent.providers.base import Provider
from tiny_agent.providers.cache_rules import min_cacheable_tokens
from tiny_agent.providers.http_errors import display_url
from tiny_agent.providers.local.provider import LocalProvider
from tiny_agent.providers.registry import LOCAL, resolve_provider
from tiny_agent.store.base import Store
from tiny_agent.tools.hooks import Hook
from tiny_agent.tools.mcp.tools import McpServer
from tiny_agent.tools.toolbox import Tool
from tiny_agent.tools.toolset import Toolset
from tiny_agent.tools.workspace import Workspace

__all__ = ["Run"]

CACHE_NOTE = "note: the system prompt is the start of every cached prefix; any change between runs is a cache miss"


@dataclass
class Run:
    """Everything a run or a chat needs, opened in the right order and closed by ``close``."""

    agent: Agent
    provider: Provider
    workspace: Workspace
    session: Session | None
    store: Store | None
    notes: list[str] = field(default_factory=list)
    """What the user should know before the first turn (a resumed session's interrupted calls, ...)."""
    hints: list[str] = field(default_factory=list)
    """Less pressing remarks (a quiet run leaves them out)."""
    stack: contextlib.ExitStack = field(default_factory=contextlib.ExitStack)
    telemetry: otel.Telemetry | None = None
    """Spans of each run, when OpenTelemetry export is on."""
    toolset: Toolset | None = None
    """The MCP servers and the hooks of the run, if any."""
    keepalive: Keepalive | None = None
    """Keeps the prompt cache warm while the run is idle, when asked for (``Run.open(keepalive=True)``)."""

    def run(self, task: str) -> RunResult:
        """One run of the agent on ``task`` (in its own span when telemetry is on); ``Stop`` hooks after it."""
        result = self.telemetry.run(task) if self.telemetry is not None else self.agent.run(task)
        hooks = self.toolset.hooks if self.toolset is not None else None
        if hooks is not None:
            cost = self.context.ledger.total_cost_usd
            hooks.stop(stop_reason=result.stop, steps=result.steps, answer=result.answer, session_cost_usd=cost)
        return result

    @property
    def context(self) -> Context:
        return self.agent.context

    @staticmethod
    def open(
        store: Store | None,
        *,
        settings: RunSettings | None = None,
        config: Mapping[str, Any] | None = None,
        system: str | None = None,
        append_system: str | None = None,
        pins: Sequence[str] = (),
        resume: str | None = None,
        continue_latest: bool = False,
        force: bool = False,
        agent: AgentConfig | None = None,
        on_event: Callable[[Event], None] | None = None,
        provider_options: Mapping[str, Any] | None = None,
        otel: bool = False,
        env: Mapping[str, str] = os.environ,
        keepalive: bool = False,
        tools: Sequence[Tool] = (),
        mcp: Sequence[McpServer] = (),
        hooks: Sequence[Hook] = (),
        report: Callable[[str], None] | None = None,
    ) -> Run:
        """Open a run on a new session, or on one to go on with (``resume``: an id or a unique prefix;
        ``continue_latest``: the newest session of the workspace). ``store`` None keeps nothing on disk.

        ``settings`` and ``config`` (``ContextConfig`` fields) hold only what is given: the rest comes
        from the session, else the defaults. ``system`` replaces the system prompt; ``append_system``
        adds to it (replacing what an earlier ``append_system`` of the session added).
        ``provider_options`` go to the adapter (``timeout``, ``max_retries``...; not remembered).
        ``otel`` (or ``OTEL_EXPORTER_OTLP_ENDPOINT`` in ``env``) exports OpenTelemetry spans of each run.
        ``keepalive`` pings the prompt cache while a tool runs (and inside ``Run.keepalive.idle()``, e.g.
        while a chat waits for its user) when the prices say it pays (``context.keepalive``).
        ``tools`` (Python tools, ``tiny_agent.tool``) come after the workspace's, then the tools of the
        ``mcp`` servers (started now, stopped on close). ``hooks`` run at the run's events; ``report``
        gets a line for each hook that fails (default: a logged warning).
        """
        stack = contextlib.ExitStack()
        try:
            return _open(
                stack,
                store,
                settings or RunSettings(),
                dict(config or {}),
                system,
                append_system,
                pins,
                resume,
                continue_latest,
                force,
                agent or AgentConfig(),
                on_event,
                dict(provider_options or {}),
                otel,
                env,
                keepalive,
                (tuple(tools), tuple(mcp), tuple(hooks), report),
            )
        except BaseException:
            stack.close()
            raise

    def switch_session(self, session: Session) -> None:
        """Go on in another session (a fork) with the same provider, workspace and tools."""
        if self.session is not None:
            self.session.close()
        session.context.tools = self.agent.toolbox.specs
        if self.toolset is not None:
            session.context.hooks = self.toolset.hooks
            if self.toolset.hooks is not None:
                self.toolset.hooks.session_id = session.id
        self.session = session
        self.agent.context = session.context
        self.stack.callback(session.close)
        if self.telemetry is not None:
            self.telemetry.conversation_id = session.id
        if self.keepalive is not None:
            self.keepalive.context = session.context

    def close(self) -> None:
        self.stack.close()

    def __enter__(self) -> Run:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _open(
    stack: contextlib.ExitStack,
    store: Store | None,
    given: RunSettings,
    config: dict[str, Any],
    system: str | None,
    append_system: str | None,
    pins: Sequence[str],
    resume: str | None,
    continue_latest: bool,
    force: bool,
    agent_config: AgentConfig,
    on_event: Callable[[Event], None] | None,
    provider_options: dict[str, Any],
    export_spans: bool,
    env: Mapping[str, str],
    keep_warm: bool,
    extensions: tuple[tuple[Tool, ...], tuple[McpServer, ...], tuple[Hook, ...], Callable[[str], None] | None],
) -> Run:
    here = str(Path(given.workspace or ".").resolve())
    notes: list[str] = []
    hints: list[str] = []
    session = _session(store, resume, continue_latest, force, here, notes) if store is not None else None
    resumed = session is not None and session.info.head >= 0
    if session is not None:
        stack.callback(session.close)
    if store is None and (resume is not None or continue_latest):
        raise ConfigError("a run that keeps nothing on disk cannot go on with a session (--resume, --continue)")
    stored = RunSettings.of(session.context.run_settings) if session is not None else RunSettings()
    settings = given.over(stored)
    if given.workspace is not None or settings.workspace is None:
        settings = replace(settings, workspace=here)

    # What the user can get wrong is checked before the provider, which may start a server.
    workspace = _workspace(settings)
    text = _system(system, append_system, session, hints, notes)
    if append_system is not None:
        settings = replace(settings, appended_system=append_system)
    elif system is not None:
        settings = replace(settings, appended_system="")  # a new system prompt: nothing of it was appended
    engine = _config(config, session)
    min_cacheable_tokens(settings.model or "", "anthropic")  # TINY_AGENT_CACHE_MIN_TOKENS, before a server starts
    provider = _provider(settings, provider_options, env)  # a missing key is found here, before any server starts
    tools, mcp, hooks, report = extensions
    toolset = Toolset.open(stack, workspace.tools(), tools, mcp, hooks, cwd=str(workspace.root), report=report)
    if isinstance(provider, LocalProvider):
        stack.enter_context(provider)  # the local model's server: after the MCP servers, which start faster
    profile = provider.profile
    settings = replace(
        settings,
        provider=profile.name,
        # The local provider's model is a .gguf path the user gave (or the embedded one): its display
        # name (the file's stem) is no path, so it is not remembered in its place.
        model=settings.model if profile.name == LOCAL else (settings.model or profile.model),
        base_url=display_url(settings.base_url) if settings.base_url else None,
    )
    toolbox = toolset.toolbox
    if session is not None and session.info.head < 0:
        # No entry when it was opened: the run that created it was killed before recording its
        # settings, so it starts now, with the system prompt a new session gets.
        text = text or DEFAULT_SYSTEM
    if session is not None:
        context = session.context
        toolset.record(context, resumed=resumed)
        context.configure(**({"system": text} if text else {}), **(engine.settings() if engine else {}))
        context.record_run(**settings.given())
    elif store is not None:
        session = Session.start(
            store,
            workspace=settings.workspace,
            tools=toolbox.specs,
            system=text or DEFAULT_SYSTEM,
            config=engine,
            settings=settings.given(),
        )
        stack.callback(session.close)
        context = session.context
        toolset.record(context, resumed=False)
    else:
        context = Context(text or DEFAULT_SYSTEM, toolbox.specs, config=engine)
        toolset.record(context, resumed=False)
    notes.extend(toolset.notes)
    if settings.max_output_chars is None:
        # One tool result may take about a quarter of a small window (~3 characters a token).
        workspace.max_output_chars = min(workspace.max_output_chars, context.context_window(provider) * 3 // 4)
    toolbox.max_output_chars = workspace.max_output_chars  # MCP servers' and Python tools' results too
    agent = Agent(provider, toolbox, config=agent_config, context=context, pins=list(pins), on_event=on_event)
    spans = _telemetry(agent, session, export_spans, env, notes)
    if spans is not None:
        stack.callback(spans.shutdown)  # every span is sent before the process ends
    warm = None
    if keep_warm:
        warm = Keepalive(context, provider, on_event=on_event)
        stack.callback(warm.close)
        agent.idle = warm.idle
    if toolset.hooks is not None:
        toolset.hooks.session_id = session.id if session is not None else ""
        details = {"provider": profile.name, "model": profile.model, "tools": list(toolbox.names)}
        toolset.hooks.session_start("resume" if resumed else "startup", **details)
    return Run(agent, provider, workspace, session, store, notes, hints, stack, spans, toolset, warm)


def _telemetry(
    agent: Agent, session: Session | None, flag: bool, env: Mapping[str, str], notes: list[str]
) -> otel.Telemetry | None:
    """OpenTelemetry export, when ``flag`` or the standard endpoint variable asks for it."""
    if not otel.wanted(flag, env):
        return None
    if not otel.available():
        if flag:
            raise ConfigError(otel.INSTALL_HINT)
        notes.append(f"{otel.ENDPOINT_ENV} is set, but no spans are sent: {otel.INSTALL_HINT}")
        return None
    return otel.Telemetry(agent, otel.otlp_tracer_provider(), conversation_id=session.id if session else None)


def _session(
    store: Store, resume: str | None, continue_latest: bool, force: bool, workspace: str, notes: list[str]
) -> Session | None:
    """The session to continue, if one was asked for (and there is one)."""
    if resume is not None and continue_latest:
        raise ConfigError("give either --resume ID or --continue, not both")
    target = None
    if resume is not None:
        target = store.get(resume).id
    elif continue_latest:
        latest = Session.latest(store, workspace)
        if latest is None:
            notes.append(f"no earlier session in {workspace}: starting a new one")
        else:
            target = latest.id
    if target is None:
        return None
    session = Session.resume(store, target, force=force)
    taken = session.taken_from
    if taken is not None:
        notes.append(
            f"took this session over from {taken} (--force), which is still running: "
            "stop it there, or its next write to this session will fail"
        )
    names = ", ".join(f"{c.name}({_args(c.input)})" for c in session.interrupted)
    if session.interrupted and taken is not None:
        notes.append(f"it had not recorded the results of these tool calls, which were not run again here: {names}")
    elif session.interrupted:
        notes.append(
            f"the previous run stopped before the results of these tool calls were recorded; they are marked "
            f"as interrupted and were not run again: {names}"
        )
    if session.lost_calls and taken is not None:
        notes.append(f"{session.lost_calls} model call(s) it was waiting for are not recorded here (usage unknown)")
    elif session.lost_calls:
        notes.append(f"{session.lost_calls} model call(s) were in flight when the previous run stopped (usage unknown)")
    return session


def _args(arguments: Any) -> str:
    return ", ".join(f"{k}={str(v)[:40]!r}" for k, v in dict(arguments).items())


def _provider(settings: RunSettings, options: dict[str, Any], env: Mapping[str, str]) -> Provider:
    kwargs = {k: v for k, v in options.items() if v is not None}
    if settings.max_tokens is not None:
        kwargs["max_tokens"] = settings.max_tokens
    if settings.cache_ttl is not None:
        kwargs["cache_ttl"] = settings.cache_ttl
    if settings.api is not None:
        kwargs["api"] = settings.api
    if settings.effort is not None:
        kwargs["effort"] = settings.effort
    if settings.server_compact_at is not None:
        kwargs["compact_threshold"] = settings.server_compact_at
    return resolve_provider(settings.provider, model=settings.model, base_url=settings.base_url, env=env, **kwargs)


def _workspace(settings: RunSettings) -> Workspace:
    assert settings.workspace is not None
    return Workspace(
        settings.workspace,
        protect=settings.protect,
        allow_read=settings.allow_read,
        default_protect=settings.default_protect is not False,
        max_output_chars=settings.max_output_chars or DEFAULT_MAX_OUTPUT_CHARS,
    )


def _system(
    replace_with: str | None, extra: str | None, session: Session | None, hints: list[str], notes: list[str]
) -> str | None:
    """The system prompt to record (``compose_system``), with what the user should know about it."""
    stored = session.context.system if session is not None else None
    appended = session.context.run_settings.get("appended_system") if session is not None else None
    text = compose_system(replace_with, extra, stored, appended)
    if text is None:
        return None
    hints.append(CACHE_NOTE)
    found = looks_volatile(text)
    if found:
        notes.append(
            f"warning: the system prompt contains {found!r}, which looks like a time or id that changes "
            "between runs: each change makes the whole prompt a cache miss"
        )
    return text


def _config(given: dict[str, Any], session: Session | None) -> ContextConfig | None:
    """The thresholds given, over the session's (or the defaults); None if nothing changes. A None
    given is a value (``clear_after=None``: never clear), not "not given"."""
    changed = dict(given)
    if session is not None and not changed:
        return None
    base = session.context.config if session is not None else ContextConfig()
    ContextConfig.checked(changed)  # a typo or a bad value: one line, before anything starts
    return ContextConfig.of({**base.settings(), **changed})
