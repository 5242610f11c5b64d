"""The parts of a run, each made from its settings: the provider, the workspace, the system prompt,
the context thresholds, the shell tool, the checks of the window's room, and what a session records
of them (and a session left empty, removed)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from dataclasses import fields, replace
from typing import Any

from tiny_agent.agent.settings import DEFAULT_MAX_OUTPUT_CHARS, RunSettings, compose_system, looks_volatile
from tiny_agent.context.byte_cause import thinking_consequence
from tiny_agent.context.config import ContextConfig
from tiny_agent.context.engine import Context
from tiny_agent.context.entry_codec import read
from tiny_agent.context.replayed import Unnamed
from tiny_agent.context.session import Session
from tiny_agent.context.shrink.registry import policy_named
from tiny_agent.context.size_guard import reply_tokens
from tiny_agent.errors import ConfigError, TinyAgentError
from tiny_agent.providers.adapters import ADAPTER_OPTIONS
from tiny_agent.providers.base import Provider
from tiny_agent.providers.http_errors import display_url
from tiny_agent.providers.profile import ProviderProfile
from tiny_agent.providers.registry import resolve_provider
from tiny_agent.providers.thinking import Thinking, parse_thinking, thinking_key
from tiny_agent.providers.thinking_check import THINKING, SettingRefused
from tiny_agent.providers.thinking_sent import Switches, sent_switches
from tiny_agent.store.base import Store
from tiny_agent.tools.shell import shell_mode, shell_tool
from tiny_agent.tools.toolbox import Tool, ToolFailure
from tiny_agent.tools.toolset import Toolset
from tiny_agent.tools.workspace import Workspace
from tiny_agent.types import Prompt
from tiny_agent.whatif.thinking import sent_with

__all__ = [
    "CACHE_NOTE",
    "check_room",
    "context_config",
    "drop_if_empty",
    "provider_of",
    "provider_over",
    "remembered_settings",
    "sent_thinking",
    "shell_tools",
    "size_tool_output",
    "system_prompt",
    "thinking_change",
    "thinking_notes",
    "workspace_of",
]

CACHE_NOTE = "note: the system prompt is the start of every cached prefix; any change between runs is a cache miss"


def remembered_settings(settings: RunSettings, profile: ProviderProfile) -> RunSettings:
    """The settings a session records: the provider that was picked, its model unless the profile's
    model is only a display name (the local model's file stem: no path to give back), the URL bare."""
    return replace(
        settings,
        provider=profile.name,
        model=settings.model if profile.model_is_display_name else (settings.model or profile.model),
        base_url=display_url(settings.base_url) if settings.base_url else None,
    )


def sent_thinking(context: Context) -> Thinking | None:
    """The thinking settings the session's newest answered request was sent with, which the next
    request's cache is compared with (a run that stopped before its first call sent nothing); None
    where none was answered (no cache to miss) or its settings are unknown here."""
    last = context.state.last_done
    if last is None:
        return None
    try:
        typed = [(e, read(e)) for e in context.entries]
        unnamed = Unnamed.of((e.seq, v) for e, values in typed for v in values)
        return sent_with([(e, values) for e, values in typed if e.seq <= last[0].seq], unnamed)
    except TinyAgentError:  # an entry this version cannot read
        return None


def thinking_notes(context: Context, provider: Provider) -> list[str]:
    """The resume's warning (``thinking_change``) against the settings the next request renders, which
    are not the asked ones inside a tool loop that holds thinking back (Claude's, begun without it)."""
    before = sent_thinking(context)
    if before is None:
        return []
    profile = provider.profile
    note = thinking_change(before, profile, profile.sent_thinking(provider.render(context.prompt())))
    return [note] if note is not None else []


def thinking_change(before: Thinking, profile: ProviderProfile, now: Thinking | None = None) -> str | None:
    """The resume's warning when the reasoning settings the requests send differ from ``before`` (what
    the session's newest answered request was sent with: ``sent_thinking``), compared as the model
    takes them, not as typed (``--thinking adaptive`` over DeepSeek's default, which is on, changes
    nothing), with what the change costs on this wire: the earliest level's of what changed
    (``--thinking off`` over a DeepSeek effort drops the effort, keyed with the tools). ``now``: what
    the next request renders, where the wire holds the asked settings back until a tool loop ends."""
    asked, caps = profile.thinking, profile.thinking_caps
    now = asked if now is None else now
    was, sent, later = sent_switches(before, caps), sent_switches(now, caps), sent_switches(asked, caps)
    if was == sent and later == sent:
        return None
    if was == sent:  # nothing changes until the loop ends
        return (
            f"the thinking settings differ from the session's ({thinking_key(before)} -> {thinking_key(asked)}) "
            f"from the end of the tool loop it stopped in: there {_cost(was, later, profile.wire)}"
        )
    held = "" if later == sent else f"; {asked.label} starts when the tool loop it stopped in ends, a change of its own"
    return (
        f"the thinking settings differ from the session's ({thinking_key(before)} -> {thinking_key(now)}): "
        f"at the next request {_cost(was, sent, profile.wire)}{held}"
    )


def _cost(was: Switches, sent: Switches, wire: str) -> str:
    switch = replace(was, effort=None) != replace(sent, effort=None)
    return thinking_consequence(wire, switch=switch, effort=was.effort != sent.effort)


def size_tool_output(
    settings: RunSettings, workspace: Workspace, toolset: Toolset, window: int, notes: list[str]
) -> None:
    # One tool result may take about a quarter of the window (~3 characters a token), whatever was asked.
    share = window * 3 // 4
    asked = settings.max_output_chars
    if asked is not None and asked > share:
        notes.append(f"tool results are cut at {share:,} characters, a quarter of the window, not {asked:,}")
    workspace.max_output_chars = min(workspace.max_output_chars, share)
    toolset.toolbox.max_output_chars = workspace.max_output_chars  # MCP servers' and Python tools' results too


def check_room(
    engine: ContextConfig | None, session: Session | None, provider: Provider, settings: RunSettings
) -> None:
    """The output cap and the compaction threshold (``engine``, else the session's) against the
    window, before the first call and before the session records the run's settings: a refused
    resume leaves the session as it was."""
    config = engine or (session.context.config if session is not None else ContextConfig())
    window = config.window(provider.profile.context_window)
    reply = reply_tokens(provider.render(Prompt((), (), ())))  # the cap is the settings', not the text's
    budget = provider.profile.thinking.budget
    if not reply < window and budget is not None and budget >= window // 2:
        raise ConfigError(
            f"--thinking {budget} with the answer's room (max_tokens {reply:,}) leaves no room for a request "
            f"in the {window:,}-token window; give a smaller thinking budget"
        )
    if not reply < window:
        given = "" if settings.max_tokens is not None else " (the default)"
        raise ConfigError(
            f"--max-tokens {reply:,}{given} leaves no room for a request in the {window:,}-token window; "
            "lower it, or raise --context-window if the model's window is larger"
        )
    at = config.compact_at
    if at > window:
        raise ConfigError(
            f"--compact-at {at:,.0f} is past the {window:,}-token window, so compaction would never start; "
            "give a fraction of the window like 0.8, or a smaller token count"
        )


def shell_tools(
    settings: RunSettings,
    workspace: Workspace,
    approve: Callable[[str], bool] | None,
    report: Callable[[str], None] | None,
) -> list[Tool]:
    """The shell tool when the settings turn it on (``tools.shell``)."""
    try:
        mode = shell_mode(settings.allow_shell)
    except ToolFailure as exc:
        raise ConfigError(str(exc)) from None
    if mode == "off":
        return []
    return [
        shell_tool(workspace.root, mode=mode, approve=approve, announce=report, max_chars=workspace.max_output_chars)
    ]


def drop_if_empty(store: Store, session: Session, opened: list[bool]) -> None:
    """A session this run created that holds nothing is removed: the run failed to open, or a run
    stopped before its first model call without taking a message (a task too large to send).
    ``sessions list`` shows no empty sessions; one opened and closed unused is kept."""
    context = session.context
    stopped = any(e.kind == "stop" for e in context.entries)
    if not context.messages and not context.ledger.calls and (not opened or stopped):
        with contextlib.suppress(TinyAgentError):
            store.delete(session.id)


def provider_of(settings: RunSettings, options: dict[str, Any], env: Mapping[str, str]) -> Provider:
    chosen: dict[str, Any] = {
        "max_tokens": settings.max_tokens,
        "cache_ttl": settings.cache_ttl,
        "api": settings.api,
        "compact_threshold": settings.server_compact_at,
    }
    parts = (settings.thinking, settings.thinking_display, settings.effort, settings.thinking_binding)
    if any(part is not None for part in parts):
        chosen["thinking"] = parse_thinking(*parts[:3], binding=settings.thinking_binding or "strict")
    chosen = {k: v for k, v in chosen.items() if v is not None}
    kwargs = {k: v for k, v in options.items() if v is not None}
    _check_options(kwargs)
    return resolve_provider(
        settings.provider, model=settings.model, base_url=settings.base_url, env=env, **{**kwargs, **chosen}
    )


def provider_over(
    settings: RunSettings, given: RunSettings, stored: RunSettings, options: dict[str, Any], env: Mapping[str, str]
) -> tuple[RunSettings, Provider, dict[str, str]]:
    """``provider_of`` for a run over a resumed session's ``stored`` settings, and the settings of the
    session it leaves out, each with why: a session's ``--thinking off`` that the model refuses where
    its wire sends no switch (an older version took it, and never sent it) is left out, not refused on
    every resume with no value to give instead."""
    try:
        return settings, provider_of(settings, options, env), {}
    except SettingRefused as exc:
        if given.thinking is not None or stored.thinking != "off" or exc.flags != (THINKING,):
            raise
        settings = replace(settings, thinking=None)
        return settings, provider_of(settings, options, env), {"thinking": str(exc)}


_SETTING_OF = {"compact_threshold": "server_compact_at"}
"""The run setting an adapter's keyword of another name carries."""
_SETTINGS = frozenset({*(f.name for f in fields(RunSettings)), "env"})


def _check_options(options: Mapping[str, Any]) -> None:
    """``provider_options`` hold what the session does not remember: a run setting there would be sent
    on this run and dropped by the next one that resumes it; an unknown key is one line too."""
    for key in sorted(options):
        name = _SETTING_OF.get(key, key)
        if name in _SETTINGS:
            owner, what = ("RunSpec", "a RunSpec field") if name == "env" else ("RunSettings", "a run setting")
            raise ConfigError(
                f"provider_options[{key!r}] is {what}: give it as {owner}({name}=...) "
                "(provider_options are for what the session does not remember)"
            )
        if key not in ADAPTER_OPTIONS:
            known = ", ".join(sorted(k for k in ADAPTER_OPTIONS if _SETTING_OF.get(k, k) not in _SETTINGS))
            raise ConfigError(f"provider_options[{key!r}] is no adapter option; they are: {known}")


def workspace_of(settings: RunSettings) -> Workspace:
    assert settings.workspace is not None
    return Workspace(
        settings.workspace,
        protect=settings.protect,
        allow_read=settings.allow_read,
        default_protect=settings.default_protect is not False,
        max_output_chars=settings.max_output_chars or DEFAULT_MAX_OUTPUT_CHARS,
        code_tools=settings.code_tools is not False,
    )


def system_prompt(
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


def context_config(given: dict[str, Any], session: Session | None) -> ContextConfig | None:
    """The thresholds given, over the session's (or the defaults); None if nothing changes. A None
    given is a value (``clear_after=None``: never clear), not "not given"."""
    changed = dict(given)
    if session is not None and not changed:
        return None
    base = session.context.config if session is not None else ContextConfig()
    ContextConfig.checked(changed)  # a typo or a bad value: one line, before anything starts
    if isinstance(changed.get("policy"), str):
        policy_named(changed["policy"])  # an unknown name: one line naming the known ones
    return ContextConfig.of({**base.settings(), **changed})
