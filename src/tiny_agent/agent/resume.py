"""The session a run goes on with (``--resume``, ``--continue``), and what the user should know of it:
a take-over, tool calls whose results were never recorded, model calls lost in flight, a tool loop
the new settings cannot go on, an effort ``--thinking off`` leaves out."""

from __future__ import annotations

from typing import Any

from tiny_agent.agent.settings import RunSettings
from tiny_agent.context.engine import Context
from tiny_agent.context.session import Session
from tiny_agent.errors import ConfigError, TinyAgentError
from tiny_agent.providers.base import Provider
from tiny_agent.providers.registry import PROFILES
from tiny_agent.providers.thinking_caps import thinking_caps
from tiny_agent.store.base import Store

__all__ = ["session_to_continue"]


def session_to_continue(
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


def check_loop(context: Context | None, provider: Provider) -> None:
    """A ``ConfigError`` where the session stopped inside a tool loop that ``provider``'s settings
    cannot go on (begun without thinking, on a model that cannot send it off), before the run records
    anything of its own. Rendered by the adapter alone: a log a crash left unfinished is the run's to
    mend, never repaired here."""
    if context is None or not context.state.window.messages:
        return
    try:
        provider.render(context.prompt())
    except ConfigError:
        raise
    except TinyAgentError:
        return


def effort_left_out(settings: RunSettings, effort: str) -> str:
    """The line for a session's effort that ``--thinking off`` leaves out: giving it again keeps it
    only where the effort is not the thinking's own (Claude's shapes the answer too)."""
    profile = PROFILES.get(settings.provider or "")
    caps = thinking_caps(settings.provider or "", settings.model or (profile.default_model if profile else ""))
    refused = caps.own_measure or caps.effort_only or effort not in (caps.off_efforts or (effort,))
    again = "" if refused else " (give it again to keep it)"
    return f"--thinking off leaves out the session's --effort {effort}{again}"


def left_out_reasons(left_out: dict[str, str]) -> list[str]:
    """Why each of the session's settings a run leaves out is left out, without the advice to leave
    out a flag the user did not give (the session did)."""
    return [why.split(": leave out")[0] for why in left_out.values()]
