"""A run assembled in one call: the session, its settings, the provider, the workspace and the agent.

``Run.open`` builds the run a ``RunSpec`` describes, in the order that keeps a mistake cheap: the
session first (a damaged, locked or read-only store is one line before a cent is spent), then the
settings (the session's, overridden by what is given, the change recorded), the workspace (checked
before the provider, which may start a server), the system prompt (composed and checked for values
that change between runs), the provider, the tools, the context, and tool output sized to the
model's window::

    with Run.open(SQLiteStore(), settings=RunSettings(provider="anthropic"), pins=["never edit dev.mjs"]) as run:
        result = run.agent.run("read README.md and tell me what it is about")

The command line parses its flags into one ``RunSpec`` and prints what comes back.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tiny_agent.agent import parts
from tiny_agent.agent.keepalive import Keepalive
from tiny_agent.agent.loop import DEFAULT_SYSTEM, Agent, RunResult
from tiny_agent.agent.origin import session_origin
from tiny_agent.agent.resume import check_loop, effort_left_out, left_out_reasons, session_to_continue
from tiny_agent.agent.settings import RunSettings
from tiny_agent.agent.spec import RunSpec
from tiny_agent.context.config import ContextConfig
from tiny_agent.context.engine import Context
from tiny_agent.context.session import Session
from tiny_agent.errors import ConfigError
from tiny_agent.observe import telemetry as otel
from tiny_agent.providers.base import Provider
from tiny_agent.providers.cache_rules import min_cacheable_tokens
from tiny_agent.store.base import Store
from tiny_agent.tools.toolset import Toolset
from tiny_agent.tools.workspace import Workspace

__all__ = ["Run", "RunSpec"]


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
    def open(spec: RunSpec | Store | None = None, /, **fields: Any) -> Run:
        """Open the run ``spec`` describes (a ``RunSpec``), or one from its fields given as keywords:
        ``Run.open(store, settings=RunSettings(...), pins=[...])`` is ``Run.open(RunSpec(store=store,
        settings=..., pins=...))``. Keywords beside a spec replace its fields."""
        if isinstance(spec, RunSpec):
            spec = replace(spec, **RunSpec.checked(fields))
        else:
            spec = RunSpec.of(**({"store": spec} if spec is not None else {}), **fields)
        stack = contextlib.ExitStack()
        assembly = _Assembly(spec, stack)
        try:
            return assembly.build()
        except ConfigError as exc:
            stack.close()
            named = session_origin(exc, assembly.stored, spec.settings)  # a refusal of the session's setting
            if named is exc:
                raise
            raise named from None
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


class _Assembly:
    """``Run.open``'s steps, in the order that keeps a mistake cheap, sharing what each found."""

    def __init__(self, spec: RunSpec, stack: contextlib.ExitStack) -> None:
        self.spec, self.stack = spec, stack
        self.notes: list[str] = []
        self.hints: list[str] = []
        self.session: Session | None = None
        self.resumed = False
        self.stored = RunSettings()
        """The resumed session's settings, under the run's."""
        self.opened: list[bool] = []
        self.left_out: set[str] = set()
        """The session's settings this run leaves out of it from now on."""

    def build(self) -> Run:
        spec = self.spec
        settings = self.settings()
        # What the user can get wrong is checked before the provider, which may start a server.
        workspace = parts.workspace_of(settings)
        text, settings = self.system_prompt(settings)
        engine = parts.context_config(dict(spec.config), self.session)
        min_cacheable_tokens(settings.model or "", "anthropic")  # TINY_AGENT_CACHE_MIN_TOKENS, before a server starts
        if spec.otel and not otel.available():  # before the session records anything
            raise ConfigError(otel.INSTALL_HINT)
        settings, provider = self.provider(settings)  # a missing key: found here
        toolset = self.tools(workspace, provider, settings)
        settings = parts.remembered_settings(settings, provider.profile)
        check_loop(self.session.context if self.resumed and self.session else None, provider)
        parts.check_room(engine, self.session, provider, settings)
        context = self.context(toolset, text, engine, settings)
        self.notes.extend(parts.thinking_notes(context, provider))  # before the run adds its task
        parts.size_tool_output(settings, workspace, toolset, context.context_window(provider), self.notes)
        agent = Agent(
            provider, toolset.toolbox, config=spec.agent, context=context, pins=list(spec.pins), on_event=spec.on_event
        )
        spans = self.telemetry(agent)
        warm = self.keepalive(agent, provider)
        self.start_hooks(toolset, provider)
        run = Run(
            agent=agent,
            provider=provider,
            workspace=workspace,
            session=self.session,
            store=spec.store,
            notes=self.notes,
            hints=self.hints,
            stack=self.stack,
            telemetry=spans,
            toolset=toolset,
            keepalive=warm,
        )
        self.opened.append(True)  # from here on, only a run that stops before its first call drops the session
        return run

    def provider(self, settings: RunSettings) -> tuple[RunSettings, Provider]:
        given, stored = self.spec.settings, self.stored if self.resumed else RunSettings()
        found = parts.provider_over(settings, given, stored, dict(self.spec.provider_options), self.spec.env)
        settings, provider, left_out = found
        self.left_out.update(left_out)
        self.notes.extend(
            f"the session's --thinking off is left out from now on: {why}" for why in left_out_reasons(left_out)
        )
        return settings, provider

    def settings(self) -> RunSettings:
        """The session to go on with, if any, and the settings: the given ones over the session's."""
        spec, given = self.spec, self.spec.settings
        here = str(Path(given.workspace or ".").resolve())
        if spec.store is None and (spec.resume is not None or spec.continue_latest):
            raise ConfigError("a run that keeps nothing on disk cannot go on with a session (--resume, --continue)")
        if spec.store is not None:
            self.session = session_to_continue(
                spec.store, spec.resume, spec.continue_latest, spec.force, here, self.notes
            )
        if self.session is not None:
            self.stack.callback(self.session.close)
            self.resumed = self.session.info.head >= 0
        stored = RunSettings.of(self.session.context.run_settings) if self.session is not None else RunSettings()
        settings = given.over(stored)
        if self.resumed and "effort" in given.thinking_reset() and stored.effort is not None:
            self.notes.append(effort_left_out(settings, stored.effort))
        self.stored = stored
        if given.workspace is not None or settings.workspace is None:
            settings = replace(settings, workspace=here)
        return settings

    def system_prompt(self, settings: RunSettings) -> tuple[str | None, RunSettings]:
        """The system prompt to record (None: the session's stays), and the settings remembering
        what ``append_system`` added."""
        system, append = self.spec.system, self.spec.append_system
        text = parts.system_prompt(system, append, self.session, self.hints, self.notes)
        if append is not None:
            settings = replace(settings, appended_system=append)
        elif system is not None:
            settings = replace(settings, appended_system="")  # a new system prompt: nothing of it was appended
        if self.session is not None and self.session.info.head < 0:
            # No entry when it was opened: the run that created it was killed before recording its
            # settings, so it starts now, with the system prompt a new session gets.
            text = text or DEFAULT_SYSTEM
        return text, settings

    def tools(self, workspace: Workspace, provider: Provider, settings: RunSettings) -> Toolset:
        """Every tool in one toolbox, the MCP servers started; then the provider's own resource."""
        spec = self.spec
        builtin = [*workspace.tools(), *parts.shell_tools(settings, workspace, spec.approve, spec.report)]
        cwd = str(workspace.root)
        toolset = Toolset.open(self.stack, builtin, spec.tools, spec.mcp, spec.hooks, cwd=cwd, report=spec.report)
        if isinstance(provider, contextlib.AbstractContextManager):
            # A provider holding a resource (the local model's server) starts it now: after the MCP
            # servers, which start faster, and stops when the run closes.
            self.stack.enter_context(provider)
        return toolset

    def context(
        self, toolset: Toolset, text: str | None, engine: ContextConfig | None, settings: RunSettings
    ) -> Context:
        """The session's context (configured, the run's settings recorded), a new session's, or one
        kept nowhere."""
        store, session, specs = self.spec.store, self.session, toolset.toolbox.specs
        if session is not None:
            context = session.context
            toolset.record(context, resumed=self.resumed)
            context.configure(**({"system": text} if text else {}), **(engine.settings() if engine else {}))
            # What ``--thinking off`` left out of the session's settings stays out of the next resume's.
            reset = {*self.spec.settings.thinking_reset(), *self.left_out}
            dropped = {k: None for k in reset if k in self.stored.given()}
            context.record_run(**settings.given(), **dropped)
        elif store is not None:
            system, given = text or DEFAULT_SYSTEM, settings.given()
            assert settings.workspace is not None
            session = Session.start(
                store, workspace=settings.workspace, tools=specs, system=system, config=engine, settings=given
            )
            self.stack.callback(parts.drop_if_empty, store, session, self.opened)  # after the close below
            self.stack.callback(session.close)
            self.session, context = session, session.context
            toolset.record(context, resumed=False)
        else:
            context = Context(text or DEFAULT_SYSTEM, specs, config=engine)
            toolset.record(context, resumed=False)
        self.notes.extend(toolset.notes)
        return context

    def telemetry(self, agent: Agent) -> otel.Telemetry | None:
        """OpenTelemetry export, when the spec or the standard endpoint variable asks for it."""
        flag, env = self.spec.otel, self.spec.env
        if not otel.wanted(flag, env):
            return None
        if not otel.available():  # not asked for by --otel: build() refused that
            self.notes.append(f"{otel.ENDPOINT_ENV} is set, but no spans are sent: {otel.INSTALL_HINT}")
            return None
        session_id = self.session.id if self.session else None
        spans = otel.Telemetry(agent, otel.otlp_tracer_provider(), conversation_id=session_id)
        self.stack.callback(spans.shutdown)  # every span is sent before the process ends
        return spans

    def keepalive(self, agent: Agent, provider: Provider) -> Keepalive | None:
        if not self.spec.keepalive:
            return None
        warm = Keepalive(agent.context, provider, on_event=self.spec.on_event)
        self.stack.callback(warm.close)
        agent.idle = warm.idle
        return warm

    def start_hooks(self, toolset: Toolset, provider: Provider) -> None:
        if toolset.hooks is None:
            return
        toolset.hooks.session_id = self.session.id if self.session is not None else ""
        profile = provider.profile
        details = {"provider": profile.name, "model": profile.model, "tools": list(toolset.toolbox.names)}
        toolset.hooks.session_start("resume" if self.resumed else "startup", **details)
