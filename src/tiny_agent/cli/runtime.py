"""``run`` and ``chat`` open their run here: the flags the user gave, parsed into one ``Run.open`` call.

On a resume, settings come from the session and the flags given override them (``Run.open``
records the change). Only what is given is passed on: a flag left out keeps the session's value.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import click

from tiny_agent.agent.loop import AgentConfig
from tiny_agent.agent.run import Run
from tiny_agent.agent.settings import RUN_SETTINGS, RunSettings
from tiny_agent.cli.options import CONFIG_FLAGS, PROVIDER_FLAGS, given
from tiny_agent.cli.printer import Printer
from tiny_agent.errors import ConfigError
from tiny_agent.store import open_store

__all__ = ["Runtime", "open_runtime"]

Runtime = Run
"""What a run or a chat works with (``agent.run.Run``)."""


def open_runtime(click_ctx: click.Context, opts: dict[str, Any], printer: Printer) -> Run:
    """Open the store and the run the flags describe; print what the user should know first."""
    if opts["no_session"] and (opts["resume"] is not None or opts["continue_"]):
        raise ConfigError("--no-session cannot be combined with --resume or --continue")
    store = None if opts["no_session"] else open_store(opts["store"])
    try:
        run = Run.open(
            store,
            settings=RunSettings.of({k: opts[k] for k in RUN_SETTINGS if k in opts and given(click_ctx, k)}),
            config={k: opts[k] for k in CONFIG_FLAGS if opts.get(k) is not None},
            system=_text_or_file(opts["system"], "--system"),
            append_system=_text_or_file(opts["append_system"], "--append-system"),
            pins=list(opts["pin"]),
            resume=opts["resume"],
            continue_latest=opts["continue_"],
            force=opts["force"],
            agent=AgentConfig(max_steps=opts["max_steps"], stream=printer.stream, budget_usd=opts["budget_usd"]),
            on_event=printer.event,
            provider_options={k: opts.get(k) for k in PROVIDER_FLAGS},
            otel=bool(opts.get("otel")),
        )
    except BaseException:
        if store is not None:
            store.close()
        raise
    if store is not None:
        outer = contextlib.ExitStack()  # the store closes last, after the session it holds
        outer.callback(store.close)
        outer.enter_context(run.stack)
        run.stack = outer
    for hint in run.hints:
        printer.info(hint)
    return run


def _text_or_file(value: str | None, flag: str) -> str | None:
    if value is None or not value.startswith("@"):
        return value
    path = Path(value[1:]).expanduser()
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{flag} {value}: cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from exc
