"""``tiny-agent stats [ID...]``: what the stored sessions cost, what the cache read, which prefix layers
kept changing; ``--plot FILE.png`` draws it. A subcommand: nothing here is ever sent to a model."""

from __future__ import annotations

import importlib.util
import io
import json
import os
from pathlib import Path
from typing import Any

import click

from tiny_agent.cli.options import existing_store, store_option
from tiny_agent.cli.output import write_bytes
from tiny_agent.errors import ConfigError
from tiny_agent.observe.report import format_stats
from tiny_agent.observe.stats import BY, Stats, stats
from tiny_agent.observe.usage import PERIODS, UsageTable, usage_lines, usage_table
from tiny_agent.store import open_store
from tiny_agent.store.base import GroupKey, Store
from tiny_agent.store.location import default_location
from tiny_agent.store.sql_store import SqlStore

__all__ = ["stats_command"]


@click.command("stats")
@click.argument("ids", nargs=-1, metavar="[ID]...")
@click.option("--since", metavar="DATE", help="Calls from this date or time on (2026-12-01, 2026-12-01T14:30, 7d, 1w).")
@click.option("--until", metavar="DATE", help="Calls before this time, or up to the end of this date.")
@click.option("--workspace", type=click.Path(file_okay=False), help="Only sessions of this folder.")
@click.option("--model", metavar="M", help="Only calls to this model.")
@click.option(
    "--by",
    type=click.Choice(tuple(dict.fromkeys((*PERIODS, *BY)))),
    help="A table by day, week, month, model, session, 5-hour billing block (ccusage's columns) or workspace.",
)
@click.option("--breakdown", is_flag=True, help="Each period's figures per model too.")
@click.option("--order", type=click.Choice(["asc", "desc"]), default="asc", help="Periods oldest or newest first.")
@click.option("--timezone", metavar="TZ", help="The zone of days, weeks, months and blocks (default: this machine's).")
@click.option(
    "--format", "fmt", type=click.Choice(["text", "csv", "json"]), default="text", help="How the --by table is written."
)
@click.option("--json", "as_json", is_flag=True, help="One JSON object (every session's figures included).")
@click.option("--plot", type=click.Path(dir_okay=False), metavar="FILE.png", help="Draw it (needs matplotlib).")
@store_option
def stats_command(ids: tuple[str, ...], **opts: Any) -> int:
    """Calls, tokens by class, hit rate, dollars and what caching saved, compactions, budget stops,
    miss causes, and how often each prefix layer (tools, system, pins, messages) changed. With no
    ID: every session in the store."""
    plot, by, fmt, as_json = opts["plot"], opts["by"], opts["fmt"], opts["as_json"]
    if plot is not None and Path(plot).suffix.lower() != ".png":
        raise ConfigError(f"--plot {plot}: the figure is a PNG; give a file name ending in .png")
    path = existing_store(opts["store"])
    if path is None:
        click.echo(f"tiny-agent: no sessions recorded yet ({default_location(os.environ)} does not exist)", err=True)
        return 1
    if fmt != "text" and by is None:
        raise click.UsageError(f"--format {fmt} writes the --by table: give --by too (e.g. --by day)")
    period = by if by in PERIODS else None
    grouped: GroupKey | None = by if by in BY and period is None else None
    where = {k: opts[k] for k in ("since", "until", "workspace", "model")}
    filtered = bool(ids or any(where.values()))
    with open_store(path) as opened:
        table = None
        if period is not None:
            table = usage_table(
                opened, period, ids=ids, **where, timezone=opts["timezone"], order=opts["order"],
                breakdown=opts["breakdown"],
            )  # fmt: skip
        if table is not None and fmt != "text" and not as_json and plot is None:
            if not table.total.calls:
                return _nothing(opened.location, filtered)
            for line in usage_lines(table, fmt):  # the table alone: no summary to sum
                click.echo(line)
            return 0
        result = stats(opened, ids, **where, by=grouped)
        if not result.total.calls and not result.sessions:
            return _nothing(opened.location, filtered)
        if plot is not None:
            _plot(opened, result, Path(plot))
        _print(opened, result, table, period, fmt, as_json)
    return 0


def _print(opened: Store, result: Stats, table: UsageTable | None, period: str | None, fmt: str, as_json: bool) -> None:
    """The look back as ``--json``, as the ``--format`` table, or as text with the table after it."""
    if as_json:
        body = result.to_dict()
        if table is not None:
            body["by"], body["usage"] = period, json.loads(usage_lines(table, "json")[0])
        click.echo(json.dumps(body, ensure_ascii=False))
    elif table is not None and fmt != "text":
        for line in usage_lines(table, fmt):  # type: ignore[arg-type]  # click checked it
            click.echo(line)
    else:
        for line in format_stats(result, lambda sid: opened.get(sid).title):
            click.echo(line)
        if table is not None:
            _echo_table(usage_lines(table), f"by {period} ({table.timezone} time)")


def _nothing(location: str, filtered: bool) -> int:
    what = "match these filters" if filtered else "are recorded"
    click.echo(f"tiny-agent: no model calls in {location} {what}", err=True)
    return 1


def _echo_table(lines: list[str], title: str) -> None:
    """Bold head and total on a terminal; click leaves the styles out when the output is piped."""
    click.echo("")
    click.echo(title)
    for number, line in enumerate(lines):
        bold = number == 0 or number == len(lines) - 1
        click.echo(click.style(line, bold=True) if bold else line)


def _plot(store: SqlStore, result: Stats, path: Path) -> None:
    if importlib.util.find_spec("matplotlib") is None:  # an extra: only a plot needs it
        raise ConfigError("--plot needs matplotlib: pip install 'tiny-agent[plot]'")
    from tiny_agent.observe import plot

    drawn = io.BytesIO()  # drawn whole first, then written as an export is (never half a file)
    if len(result.sessions) == 1:
        (session_id,) = result.sessions
        plot.plot_session(store, session_id, drawn, query=result.query)
    else:
        plot.plot_days(store, result, drawn)
    write_bytes(path, drawn.getvalue())
    click.echo(f"wrote {path}", err=True)
