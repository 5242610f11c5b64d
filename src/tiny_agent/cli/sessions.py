"""``tiny-agent sessions list | show ID | export ID | import FILE | fork ID | rm ID``, each with ``--json``
for scripts."""

from __future__ import annotations

import dataclasses
import datetime
import json
import sys
from pathlib import Path
from typing import Any

import click

from tiny_agent.cli.options import store_option
from tiny_agent.cli.output import write_lines, write_stdout
from tiny_agent.cli.param_types import NonNegative, Positive
from tiny_agent.context.entry_codec import read
from tiny_agent.context.session import Session
from tiny_agent.errors import ConfigError, UnreadableEntry
from tiny_agent.observe.export import JSONL, export_lines, read_export
from tiny_agent.observe.history import history_lines
from tiny_agent.observe.report import format_figures
from tiny_agent.observe.stats import stats
from tiny_agent.providers.wire import WIRES
from tiny_agent.store import open_store
from tiny_agent.store.base import UNREADABLE, CallQuery, SessionInfo
from tiny_agent.store.spool import Spool
from tiny_agent.types import Entry

__all__ = ["sessions_group"]

json_option = click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")


@click.group("sessions")
def sessions_group() -> None:
    """Stored conversations: list, show, export, import, fork, remove."""


def _when(timestamp: float) -> str:
    return datetime.datetime.fromtimestamp(timestamp).strftime("%Y-%m-%d %H:%M")


def _row(info: SessionInfo) -> str:
    cost = "$?" if info.cost_usd is None else f"${info.cost_usd:.4f}"
    fork = f" (fork of {info.parent_id[:12]} at #{info.fork_seq})" if info.parent_id else ""
    host = info.host or "?"  # the host that wrote it last; "?" before hosts were recorded
    return (
        f"{info.id[:12]}  {_when(info.updated_at)}  {host:<12.24}  {info.calls:>4} calls  {cost:>9}  "
        f"{info.title[:60]}{fork}"
    )


@sessions_group.command("list")
@click.option("--workspace", type=click.Path(file_okay=False), help="Only sessions of this folder.")
@click.option("--limit", type=Positive(int), default=20, show_default=True)
@store_option
@json_option
def list_command(workspace: str | None, limit: int, store: str | None, as_json: bool) -> int:
    """The newest sessions first: id, last update, the host that wrote it last, calls, cost, title."""
    folder = str(Path(workspace).resolve()) if workspace else None
    with open_store(store) as opened:
        found = opened.sessions(workspace=folder, limit=limit)
    if as_json:
        click.echo(json.dumps([i.to_dict() for i in found], ensure_ascii=False))
    elif not found:
        click.echo("no sessions yet", err=True)
    else:
        for info in found:
            click.echo(_row(info))
    return 0


@sessions_group.command("show")
@click.argument("session_id", metavar="ID")
@store_option
@json_option
def show_command(session_id: str, store: str | None, as_json: bool) -> int:
    """The turns of a session with their per-call lines, layer changes and compactions, then its figures."""
    with open_store(store) as opened:
        info = opened.get(session_id)
        entries = opened.entries(info.id, lenient=True)
        calls = opened.calls(CallQuery(sessions=(info.id,))) if as_json else []
        figures = stats(opened, [info.id])
        location = opened.location
    _say_what_waits(location, info.id)
    unreadable: list[UnreadableEntry] = []
    if as_json:
        unreadable = _unreadable(entries)
        bad = {exc.seq: exc.reason for exc in unreadable}
        payload = {
            "session": info.to_dict(),
            "entries": [_json_row(e, bad.get(e.seq)) for e in entries],
            "calls": [dataclasses.asdict(c) for c in calls],
            "stats": figures.total.to_dict() if figures.total.calls else None,
        }
        click.echo(json.dumps(payload, ensure_ascii=False))
    else:
        click.echo(_row(info))
        click.echo(f"workspace {info.workspace} · {info.head + 1} entries")
        for line in history_lines(entries, unreadable):
            click.echo(line)
        if figures.total.calls:
            click.echo(
                "\nthis session's own calls (tiny-agent stats ID; a fork's inherited calls count in its parent):"
            )
            for line in format_figures(figures.total):
                click.echo(line)
    if unreadable:
        raise unreadable[0].located(location, info.id)
    return 0


def _unreadable(entries: list[Entry]) -> list[UnreadableEntry]:
    found = []
    for entry in entries:
        try:
            read(entry)
        except UnreadableEntry as exc:
            found.append(exc)
    return found


def _json_row(entry: Entry, unreadable: str | None) -> dict[str, Any]:
    row = {"seq": entry.seq, "id": entry.id, "kind": entry.kind, "at": entry.at, "body": entry.body}
    if unreadable is not None:
        row["unreadable"] = unreadable
        if UNREADABLE in entry.body:
            row["body"] = None
    return row


@sessions_group.command("export")
@click.argument("session_id", metavar="ID")
@click.option("--format", "fmt", type=click.Choice([JSONL, *WIRES]), default=JSONL, show_default=True)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False),
    help="Write to this file (replaced atomically, 0600; a FIFO or device is written through) instead of stdout.",
)
@store_option
def export_command(session_id: str, fmt: str, output: str | None, store: str | None) -> int:
    """The whole session: JSON lines of entries, or one request body of a wire format."""
    with open_store(store) as opened:
        info = opened.get(session_id)
        entries = opened.entries(info.id)
    _say_what_waits(opened.location, info.id)
    unreadable = _unreadable(entries)  # every entry readable, before a line is written
    if unreadable:
        raise unreadable[0].located(opened.location, info.id)
    lines = export_lines(info, entries, fmt, on_note=lambda note: click.echo(f"tiny-agent: {note}", err=True))
    if output is None:
        return write_stdout(lines)
    write_lines(Path(output), lines)
    click.echo(f"wrote {output}", err=True)
    return 0


def _say_what_waits(location: str, session_id: str) -> None:
    """Entries of the session that wait in its spool file (the store was out of reach after a paid
    call) are not in what the store shows or exports: say so, and how they get there."""
    spool = Spool(location, session_id)
    waiting = spool.entries()
    if waiting:
        kinds = ", ".join(dict.fromkeys(e.kind for e in waiting))
        click.echo(
            f"tiny-agent: entries #{waiting[0].seq}-#{waiting[-1].seq} of session {session_id[:12]} ({kinds}) are not "
            f"in the store yet: they wait in {spool.path}; tiny-agent --resume "
            f"{session_id[:12]} writes them",
            err=True,
        )


@sessions_group.command("import")
@click.argument("file", metavar="FILE", type=click.Path(dir_okay=False, allow_dash=True))
@store_option
@json_option
def import_command(file: str, store: str | None, as_json: bool) -> int:
    """A session exported with ``sessions export ID`` (JSON lines; - for stdin), into this store with
    the same id: to move sessions between hosts, or from a SQLite file to a shared database."""
    source = "stdin" if file == "-" else file
    try:
        with click.open_file(file, encoding="utf-8") as stream:
            info, entries = read_export(stream, source)
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {source}: {getattr(exc, 'strerror', None) or exc}") from exc
    with open_store(store) as opened:
        restored = opened.restore(info, entries)
        location = opened.location
    if as_json:
        click.echo(json.dumps({**restored.to_dict(), "store": location}, ensure_ascii=False))
    else:
        click.echo(f"imported session {restored.id[:12]} ({len(entries)} entries) into {location}")
    return 0


@sessions_group.command("fork")
@click.argument("session_id", metavar="ID")
@click.option("--at", type=NonNegative(), help="Share entries up to this #seq (default: all).")
@store_option
@json_option
def fork_command(session_id: str, at: int | None, store: str | None, as_json: bool) -> int:
    """A new session that shares this one's entries (up to --at), to go another way from there."""
    with open_store(store) as opened:
        info = Session.fork(opened, session_id, at)
    note = None
    if at is not None and info.fork_seq is not None and info.fork_seq < at:
        note = (
            f"--at {at} is past the end of session {(info.parent_id or '')[:12]}: its last entry is "
            f"#{info.fork_seq}, so the fork shares all of it"
        )
        click.echo(f"tiny-agent: {note}", err=True)
    if as_json:
        extra = {"at_asked": at, "note": note} if note else {}
        click.echo(json.dumps({**info.to_dict(), **extra}, ensure_ascii=False))
    else:
        click.echo(
            f"forked {info.parent_id[:12] if info.parent_id else ''} at #{info.fork_seq}: session {info.id[:12]}"
        )
        click.echo(f'continue with: tiny-agent --resume {info.id[:12]} "..."')
    return 0


@sessions_group.command("rm")
@click.argument("session_id", metavar="ID")
@click.option("-y", "--yes", is_flag=True, help="Do not ask.")
@click.option("--force", is_flag=True, help="Remove it even while another tiny-agent process has it open.")
@store_option
@json_option
def rm_command(session_id: str, yes: bool, force: bool, store: str | None, as_json: bool) -> int:
    """Remove a session for good (its forks keep their history)."""
    with open_store(store) as opened:
        info = opened.get(session_id)
        if not yes:
            if not sys.stdin.isatty():
                raise ConfigError("rm asks before removing; pass --yes to remove without asking")
            click.confirm(f"remove session {info.id[:12]} ({info.title[:40]!r}, {info.calls} calls)?", abort=True)
        opened.delete(info.id, force=force)
    result: dict[str, Any] = {"removed": info.id}
    click.echo(json.dumps(result) if as_json else f"removed {info.id[:12]}")
    return 0
