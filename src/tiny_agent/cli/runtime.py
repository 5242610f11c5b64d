"""``run`` and ``chat`` open their run here: the flags the user gave and the config files, as one ``RunSpec``.

On a resume, settings come from the session and the flags given override them (``Run.open``
records the change). Only what is given is passed on: a flag left out keeps the session's value.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sys
from pathlib import Path
from typing import Any

import click

from tiny_agent.agent.loop import AgentConfig
from tiny_agent.agent.origin import at_fault, set_by
from tiny_agent.agent.run import Run
from tiny_agent.agent.settings import RUN_SETTINGS, RunSettings
from tiny_agent.agent.spec import RunSpec
from tiny_agent.cli.config_file import FileConfig, load_config
from tiny_agent.cli.options import CONFIG_FLAGS, PROVIDER_FLAGS, given
from tiny_agent.cli.printer import Printer
from tiny_agent.errors import ConfigError
from tiny_agent.store import open_store
from tiny_agent.tools.hooks import Hook
from tiny_agent.tools.mcp.tools import DEFAULT_MCP_TIMEOUT, McpServer, headers_from_env

__all__ = ["Runtime", "open_runtime"]

Runtime = Run
"""What a run or a chat works with (``agent.run.Run``)."""


def open_runtime(click_ctx: click.Context, opts: dict[str, Any], printer: Printer, *, keepalive: str = "off") -> Run:
    """Open the store and the run the flags describe; print what the user should know first.
    ``keepalive`` is the command's default for ``--keepalive`` (auto in chat, off in run)."""
    if opts["no_session"] and (opts["resume"] is not None or opts["continue_"]):
        raise ConfigError("--no-session cannot be combined with --resume or --continue")
    files = FileConfig() if opts.get("no_config") else load_config(opts["workspace"] or ".")
    # A file's run setting is in ``opts`` already (``with_file_settings``) and counts like a flag.
    chosen = _chosen(click_ctx, opts, files, printer)
    flags = RunSettings.of({k: opts[k] for k in chosen})
    spec = RunSpec(
        settings=files.under(flags),
        config={k: opts[k] for k in CONFIG_FLAGS if opts.get(k) is not None},
        system=_text_or_file(opts["system"], "--system"),
        append_system=_text_or_file(opts["append_system"], "--append-system"),
        pins=(*files.pins, *opts["pin"]),
        resume=opts["resume"],
        continue_latest=opts["continue_"],
        force=opts["force"],
        agent=AgentConfig(max_steps=opts["max_steps"], stream=printer.stream, budget_usd=opts["budget_usd"]),
        on_event=printer.event,
        provider_options={k: opts.get(k) for k in PROVIDER_FLAGS},
        otel=bool(opts.get("otel")),
        keepalive=(opts.get("keepalive") or keepalive) == "auto",
        mcp=_servers(files, opts),
        hooks=(*files.hooks(), *(Hook.parse(line) for line in opts.get("hook", ()))),
        report=lambda line: printer.line(f"tiny-agent: {line}"),
        approve=_ask if _on_a_terminal() else None,
    )
    store = None if opts["no_session"] else open_store(opts["store"])
    try:
        run = Run.open(spec, store=store)
    except ConfigError as exc:
        if store is not None:
            store.close()
        raise _named_origin(exc, files, [k for k in chosen if not given(click_ctx, k)]) from None
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


def _chosen(click_ctx: click.Context, opts: dict[str, Any], files: FileConfig, printer: Printer) -> list[str]:
    """The run settings the flags and the files give. A file's display and effort are for a thinking
    that a flag's ``--thinking off`` turns off: they are left out (the effort with a line)."""
    chosen = [k for k in RUN_SETTINGS if k in opts and (given(click_ctx, k) or k in files.values)]
    flagged = RunSettings.of({k: opts[k] for k in chosen if given(click_ctx, k)})
    for key in flagged.thinking_reset():
        if key in chosen:
            chosen.remove(key)
            if key == "effort":
                where = files.sources.get(key)
                printer.info(f"tiny-agent: --thinking off leaves out effort = {_toml_value(opts[key])} of {where}")
    return chosen


def _named_origin(exc: ConfigError, files: FileConfig, from_files: list[str]) -> ConfigError:
    """A refused reasoning setting that a file gave, not a flag: the line names the file and its key,
    since the words of the refusal are those of the flag (``agent.origin``, as for a session's)."""
    said = at_fault(exc, from_files)
    if not said:
        return exc
    where = "; ".join(f"{k} = {_toml_value(files.values[k])} in {files.sources.get(k, 'a config file')}" for k in said)
    return set_by(exc, where)


def _toml_value(value: Any) -> str:
    return f'"{value}"' if isinstance(value, str) else str(value)


def _on_a_terminal() -> bool:
    try:
        return sys.stdin.isatty() and sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def _ask(command: str) -> bool:
    """The user's yes for one shell command, on the terminal (the command was shown just before)."""
    return click.confirm("tiny-agent: run this command?", default=False, err=True)


def _servers(files: FileConfig, opts: dict[str, Any]) -> list[McpServer]:
    """The files' MCP servers, then those of ``--mcp`` and ``--mcp-url``. A flag for a server a file
    already names (the same command or URL) replaces it and keeps its name, so that its tools keep
    theirs rather than the server starting twice."""
    timeout = opts.get("mcp_timeout")
    each = timeout or DEFAULT_MCP_TIMEOUT
    flagged = [McpServer.stdio(line, timeout=each, origin=f"--mcp {line!r}") for line in opts.get("mcp", ())]
    headers = headers_from_env(os.environ) if opts.get("mcp_url") else {}
    for url in opts.get("mcp_url", ()):
        flagged.append(McpServer(url=url, headers=headers, timeout=each, origin=f"--mcp-url {url}"))
    servers: list[McpServer] = []
    for server in files.servers(timeout=timeout):
        same = next((f for f in flagged if (f.command or f.url) == (server.command or server.url)), None)
        if same is None:
            servers.append(server)
        else:
            flagged[flagged.index(same)] = dataclasses.replace(same, name=server.name)
    return [*servers, *flagged]


def _text_or_file(value: str | None, flag: str) -> str | None:
    if value is None or not value.startswith("@"):
        return value
    path = Path(value[1:]).expanduser()
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{flag} {value}: cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from exc
