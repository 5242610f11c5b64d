"""``tiny-agent view [ID]``: a stored session in the browser, served on 127.0.0.1 until Ctrl-C."""

from __future__ import annotations

import threading

import click

from tiny_agent.cli.options import existing_store, store_option
from tiny_agent.errors import ConfigError
from tiny_agent.observe.view import serve
from tiny_agent.store import open_store

__all__ = ["view_command"]


@click.command("view")
@click.argument("session_id", metavar="[ID]", required=False)
@click.option("--no-browser", is_flag=True, help="Only print the URL; open no browser.")
@click.option("--port", type=click.IntRange(0, 65535), default=0, show_default=True, help="Port (0: a free one).")
@store_option
def view_command(session_id: str | None, no_browser: bool, port: int, store: str | None) -> int:
    """Show session ID (default: the newest) as a web page on 127.0.0.1: a timeline of its calls
    (input as cache read, cache write and uncached; output and reasoning; dollars), compactions and
    clearings; any call's request beside the previous one with the shared prefix shaded and the first
    divergence marked, our diagnosis beside the provider's; the replay what-ifs. The URL carries a
    random token: without it the server answers 403. The store is only read."""
    path = existing_store(store)
    if path is None:
        raise ConfigError("no sessions recorded yet: there is nothing to view")
    with open_store(path) as opened:
        server = serve(opened, session_id, open_browser=not no_browser, port=port)
    # Ctrl-C or SIGTERM once the server runs stops the view cleanly, even while the URL is still
    # being written: the warm-up thread holds the interpreter, so that can take milliseconds.
    try:
        click.echo(server.url)
        click.echo("serving the view; Ctrl-C stops it", err=True)
        threading.Event().wait()
    except KeyboardInterrupt:
        click.echo("view stopped", err=True)
    finally:
        server.close()
    return 0
