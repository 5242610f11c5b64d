"""``tiny-agent stats [ID...]``: what the stored sessions cost, what the cache read, which prefix layers
kept changing; ``--plot FILE.png`` draws it. A subcommand: nothing here is ever sent to a model."""

from __future__ import annotations

import importlib.util
import io
import json
import os
from pathlib import Path

import click

from tiny_agent.cli.options import existing_store, store_option
from tiny_agent.cli.output import write_bytes
from tiny_agent.errors import ConfigError
from tiny_agent.observe.report import format_stats
from tiny_agent.observe.stats import BY, Stats, stats
from tiny_agent.store import open_store
from tiny_agent.store.base import GroupKey
from tiny_agent.store.location import default_location
from tiny_agent.store.sql_store import SqlStore

__all__ = ["stats_command"]


@click.command("stats")
@click.argument("ids", nargs=-1, metavar="[ID]...")
@click.option("--since", metavar="DATE", help="Calls from this date or time on (2026-12-01, 2026-12-01T14:30, 7d).")
@click.option("--until", metavar="DATE", help="Calls before this time, or up to the end of this date.")
@click.option("--workspace", type=click.Path(file_okay=False), help="Only sessions of this folder.")
@click.option("--model", metavar="M", help="Only calls to this model.")
@click.option("--by", type=click.Choice(BY), help="A table by session, day, model or workspace.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object (every session's figures included).")
@click.option("--plot", type=click.Path(dir_okay=False), metavar="FILE.png", help="Draw it (needs matplotlib).")
@store_option
def stats_command(
    ids: tuple[str, ...],
    since: str | None,
    until: str | None,
    workspace: str | None,
    model: str | None,
    by: GroupKey | None,
    as_json: bool,
    plot: str | None,
    store: str | None,
) -> int:
    """Calls, tokens by class, hit rate, dollars and what caching saved, compactions, budget stops,
    miss causes, and how often each prefix layer (tools, system, pins, messages) changed. With no
    ID: every session in the store."""
    if plot is not None and Path(plot).suffix.lower() != ".png":
        raise ConfigError(f"--plot {plot}: the figure is a PNG; give a file name ending in .png")
    path = existing_store(store)
    if path is None:
        click.echo(f"tiny-agent: no sessions recorded yet ({default_location(os.environ)} does not exist)", err=True)
        return 1
    with open_store(path) as opened:
        result = stats(opened, ids, since=since, until=until, workspace=workspace, model=model, by=by)
        if not result.total.calls and not result.sessions:
            filtered = ids or since or until or workspace or model
            what = "match these filters" if filtered else "are recorded"
            click.echo(f"tiny-agent: no model calls in {opened.location} {what}", err=True)
            return 1
        if plot is not None:
            _plot(opened, result, Path(plot))
        if as_json:
            click.echo(json.dumps(result.to_dict(), ensure_ascii=False))
        else:
            for line in format_stats(result, lambda sid: opened.get(sid).title):
                click.echo(line)
    return 0


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
