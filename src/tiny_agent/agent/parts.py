"""The parts of a run, each made from its settings: the provider, the workspace, the system prompt,
the context thresholds, and what a session records of them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from tiny_agent.agent.settings import DEFAULT_MAX_OUTPUT_CHARS, RunSettings, compose_system, looks_volatile
from tiny_agent.context.config import ContextConfig
from tiny_agent.context.session import Session
from tiny_agent.providers.base import Provider
from tiny_agent.providers.http_errors import display_url
from tiny_agent.providers.profile import ProviderProfile
from tiny_agent.providers.registry import resolve_provider
from tiny_agent.tools.toolset import Toolset
from tiny_agent.tools.workspace import Workspace

__all__ = [
    "CACHE_NOTE",
    "context_config",
    "provider_of",
    "remembered_settings",
    "size_tool_output",
    "system_prompt",
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


def size_tool_output(settings: RunSettings, workspace: Workspace, toolset: Toolset, window: int) -> None:
    if settings.max_output_chars is None:
        # One tool result may take about a quarter of a small window (~3 characters a token).
        workspace.max_output_chars = min(workspace.max_output_chars, window * 3 // 4)
    toolset.toolbox.max_output_chars = workspace.max_output_chars  # MCP servers' and Python tools' results too


def provider_of(settings: RunSettings, options: dict[str, Any], env: Mapping[str, str]) -> Provider:
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


def workspace_of(settings: RunSettings) -> Workspace:
    assert settings.workspace is not None
    return Workspace(
        settings.workspace,
        protect=settings.protect,
        allow_read=settings.allow_read,
        default_protect=settings.default_protect is not False,
        max_output_chars=settings.max_output_chars or DEFAULT_MAX_OUTPUT_CHARS,
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
    return ContextConfig.of({**base.settings(), **changed})
