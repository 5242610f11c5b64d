"""Wiring for ``run`` and ``chat``: the store and session first, then the provider, workspace and agent.

The session is opened before anything is sent, so a store that is damaged, locked or read-only is
one line of error before a cent is spent. On a resume, settings come from the session and the
flags the user gave override them; the change is recorded as an entry.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

from tiny_agent.agent import telemetry as otel
from tiny_agent.agent.loop import DEFAULT_SYSTEM, Agent, AgentConfig, RunResult
from tiny_agent.agent.tools import Toolbox
from tiny_agent.agent.workspace import Workspace
from tiny_agent.cli.options import SESSION_SETTINGS, given
from tiny_agent.cli.printer import Printer
from tiny_agent.context.engine import Context, ContextConfig
from tiny_agent.context.session import Session
from tiny_agent.errors import ConfigError
from tiny_agent.providers.base import Provider
from tiny_agent.providers.cache_rules import min_cacheable_tokens
from tiny_agent.providers.http_errors import display_url
from tiny_agent.providers.local import LocalProvider
from tiny_agent.providers.registry import resolve_provider
from tiny_agent.store.base import Store
from tiny_agent.store.sqlite import SQLiteStore

__all__ = ["Runtime", "open_runtime"]

_VOLATILE = re.compile(
    r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}|\b\d{1,2}:\d{2}:\d{2}\b|"
    r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b|\b1[5-9]\d{8}\b",
    re.IGNORECASE,
)


@dataclass
class Runtime:
    """Everything a run or a chat needs, opened in the right order and closed by ``close``."""

    agent: Agent
    provider: Provider
    workspace: Workspace
    session: Session | None
    store: Store | None
    stack: contextlib.ExitStack = field(default_factory=contextlib.ExitStack)
    notes: list[str] = field(default_factory=list)
    """What the user should know before the first turn (a resumed session's interrupted calls, ...)."""
    telemetry: otel.Telemetry | None = None
    """Spans of each run, when OpenTelemetry export is on."""

    @property
    def context(self) -> Context:
        return self.agent.context

    def switch_session(self, session: Session) -> None:
        """Go on in another session (a fork) with the same provider, workspace and tools."""
        if self.session is not None:
            self.session.close()
        session.context.tools = self.agent.toolbox.specs
        self.session = session
        self.agent.context = session.context
        self.stack.callback(session.close)
        if self.telemetry is not None:
            self.telemetry.conversation_id = session.id

    def run(self, task: str) -> RunResult:
        """One run of the agent (in its own span when telemetry is on)."""
        return self.telemetry.run(task) if self.telemetry is not None else self.agent.run(task)

    def close(self) -> None:
        self.stack.close()


def open_runtime(click_ctx: click.Context, opts: dict[str, Any], printer: Printer) -> Runtime:
    """Open the store and session, then build the provider, workspace, toolbox and agent."""
    stack = contextlib.ExitStack()
    try:
        return _open(click_ctx, opts, printer, stack)
    except BaseException:
        stack.close()
        raise


def _open(click_ctx: click.Context, opts: dict[str, Any], printer: Printer, stack: contextlib.ExitStack) -> Runtime:
    cwd_workspace = str(Path(opts["workspace"] or ".").resolve())
    store: Store | None = None
    session: Session | None = None
    notes: list[str] = []
    if opts["no_session"]:
        if opts["resume"] or opts["continue_"]:
            raise ConfigError("--no-session cannot be combined with --resume or --continue")
    else:
        store = SQLiteStore(opts["store"])
        stack.callback(store.close)
        session = _resume(store, opts, cwd_workspace, notes)
        if session is not None:
            stack.callback(session.close)

    stored = session.context.settings if session is not None else {}
    settings = {k: opts[k] for k in SESSION_SETTINGS if k in opts and given(click_ctx, k)}
    for key in SESSION_SETTINGS:
        if key not in settings and key in stored:
            settings[key] = stored[key]
    if given(click_ctx, "workspace") or "workspace" not in settings:
        settings["workspace"] = cwd_workspace

    # What the user can get wrong is checked before the provider, which may start a server.
    workspace = _workspace(settings)
    replace = _text_or_file(opts["system"], "--system")
    extra = _text_or_file(opts["append_system"], "--append-system")
    system = _system(replace, extra, stored.get("system"), stored.get("appended_system"), printer)
    if extra is not None:
        settings["appended_system"] = extra
    elif replace is not None:
        settings["appended_system"] = ""  # a new system prompt: nothing of it was appended
    min_cacheable_tokens(str(settings.get("model") or ""), "anthropic")  # reads TINY_AGENT_CACHE_MIN_TOKENS
    provider = _provider(settings, opts)
    if isinstance(provider, LocalProvider):
        stack.enter_context(provider)
    window = opts.get("context_window") or provider.context_window()
    if window and not settings.get("max_output_chars"):
        # One tool result may take about a quarter of a small window (~3 characters a token).
        workspace.max_output_chars = min(workspace.max_output_chars, window * 3 // 4)
    toolbox = Toolbox(workspace.tools())
    if session is not None and session.info.head < 0:
        # No entry when it was opened: the run that created it was killed before recording its
        # settings, so it starts now, with the system prompt a new session gets.
        system = system or DEFAULT_SYSTEM
    config = _context_config(opts, session)
    recorded = {k: v for k, v in settings.items() if v is not None}

    if session is not None:
        context = session.context
        context.tools = toolbox.specs
        context.configure(**recorded, **({"system": system} if system else {}), **(config.settings() if config else {}))
    elif store is not None:
        session = Session.start(
            store,
            workspace=settings["workspace"],
            tools=toolbox.specs,
            system=system or DEFAULT_SYSTEM,
            config=config,
            settings=recorded,
        )
        stack.callback(session.close)
        context = session.context
    else:
        context = Context(system or DEFAULT_SYSTEM, toolbox.specs, config=config)
    agent = Agent(
        provider,
        toolbox,
        config=AgentConfig(max_steps=opts["max_steps"], stream=printer.stream, budget_usd=opts["budget_usd"]),
        context=context,
        pins=list(opts["pin"]),
        on_event=printer.event,
    )
    spans = _telemetry(agent, session, opts, printer)
    if spans is not None:
        stack.callback(spans.shutdown)  # runs before the store closes: every span is sent before exit
    return Runtime(agent, provider, workspace, session, store, stack, notes, spans)


def _telemetry(agent: Agent, session: Session | None, opts: dict[str, Any], printer: Printer) -> otel.Telemetry | None:
    """OpenTelemetry export, when ``--otel`` or the standard endpoint variable asks for it."""
    if not otel.wanted(bool(opts.get("otel"))):
        return None
    if not otel.available():
        if opts.get("otel"):
            raise ConfigError(otel.INSTALL_HINT)
        printer.line(f"tiny-agent: {otel.ENDPOINT_ENV} is set, but no spans are sent: {otel.INSTALL_HINT}")
        return None
    return otel.Telemetry(agent, otel.otlp_tracer_provider(), conversation_id=session.id if session else None)


def _resume(store: Store, opts: dict[str, Any], workspace: str, notes: list[str]) -> Session | None:
    """The session to continue, if the user asked for one (and there is one)."""
    if opts["resume"] and opts["continue_"]:
        raise ConfigError("give either --resume ID or --continue, not both")
    target = None
    if opts["resume"]:
        target = store.get(opts["resume"]).id
    elif opts["continue_"]:
        latest = Session.latest(store, workspace)
        if latest is None:
            notes.append(f"no earlier session in {workspace}: starting a new one")
        else:
            target = latest.id
    if target is None:
        return None
    session = Session.resume(store, target, force=opts["force"])
    if session.interrupted:
        names = ", ".join(f"{c.name}({_args(c.input)})" for c in session.interrupted)
        notes.append(
            f"the previous run stopped before the results of these tool calls were recorded; they are marked "
            f"as interrupted and were not run again: {names}"
        )
    if session.lost_calls:
        notes.append(f"{session.lost_calls} model call(s) were in flight when the previous run stopped (usage unknown)")
    return session


def _args(arguments: Any) -> str:
    return ", ".join(f"{k}={str(v)[:40]!r}" for k, v in dict(arguments).items())


def _provider(settings: dict[str, Any], opts: dict[str, Any]) -> Provider:
    kwargs: dict[str, Any] = {}
    for key in ("max_tokens", "timeout", "max_retries", "cache_ttl"):
        value = settings.get(key) if key in settings else opts.get(key)
        if value is not None:
            kwargs[key] = value
    base_url = settings.get("base_url")
    provider = resolve_provider(settings.get("provider"), model=settings.get("model"), base_url=base_url, **kwargs)
    settings["provider"] = provider.name
    if provider.name != "local":
        # The local provider's model is a .gguf path the user gave, or the embedded one when none was
        # given; its display name (the file's stem) is no path, so it is not remembered in its place.
        settings["model"] = settings.get("model") or provider.model
    if base_url:
        settings["base_url"] = display_url(base_url)  # no user:password, no query (some servers take a key there)
    return provider


def _workspace(settings: dict[str, Any]) -> Workspace:
    kwargs: dict[str, Any] = {"protect": tuple(settings.get("protect") or ())}
    if settings.get("allow_read"):
        kwargs["allow_read"] = tuple(settings["allow_read"])
    if settings.get("default_protect") is False:
        kwargs["default_protect"] = False
    max_chars = settings.get("max_output_chars")
    workspace = Workspace(settings["workspace"], max_output_chars=max_chars or 20_000, **kwargs)
    for key in ("protect", "allow_read"):
        settings[key] = list(settings.get(key) or [])
    return workspace


def _system(
    replace: str | None, extra: str | None, stored: str | None, appended: str | None, printer: Printer
) -> str | None:
    """The system prompt to record: ``replace`` (``--system``) replaces, ``extra`` (``--append-system``)
    adds; None keeps the stored one.

    On a resume, ``--append-system`` replaces what the session's last ``--append-system`` added
    (``appended``) rather than adding to it, so a flag given on every run does not pile up."""
    if replace is None and extra is None:
        return None
    base = replace if replace is not None else (stored or DEFAULT_SYSTEM)
    # Sessions from before appended_system was recorded: the same text is not added twice.
    previous = appended if appended is not None else extra
    if replace is None and previous and base.endswith(f"\n\n{previous}"):
        base = base[: -len(previous) - 2]
    text = base if not extra else f"{base}\n\n{extra}"
    printer.info("note: the system prompt is the start of every cached prefix; any change between runs is a cache miss")
    found = _VOLATILE.search(text)
    if found:
        printer.line(
            f"warning: the system prompt contains {found.group(0)!r}, which looks like a time or id that changes "
            "between runs: each change makes the whole prompt a cache miss"
        )
    return text


def _text_or_file(value: str | None, flag: str) -> str | None:
    if value is None or not value.startswith("@"):
        return value
    path = Path(value[1:]).expanduser()
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{flag} {value}: cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from exc


def _context_config(opts: dict[str, Any], session: Session | None) -> ContextConfig | None:
    """The thresholds the user gave, over the session's (or the defaults); None if nothing changes."""
    changed = {k: opts[k] for k in ("compact_at", "keep_turns", "context_window") if opts.get(k) is not None}
    if session is not None and not changed:
        return None
    base = session.context.config if session is not None else ContextConfig()
    return ContextConfig(**{**base.settings(), **changed})
