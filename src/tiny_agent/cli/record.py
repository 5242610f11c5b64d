"""``tiny-agent record -- CMD ...``: another program's model calls stored as a session."""

from __future__ import annotations

import os
import subprocess

import click

from tiny_agent.cli.options import store_option
from tiny_agent.errors import ConfigError
from tiny_agent.observe.record import UPSTREAMS, Recorder
from tiny_agent.store.location import default_location

__all__ = ["record_command"]


@click.command("record", context_settings={"ignore_unknown_options": True})
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED, metavar="-- CMD [ARG]...")
@store_option
def record_command(command: tuple[str, ...], store: str | None) -> int:
    """Run CMD with its Anthropic and OpenAI SDK calls sent through a recording proxy on 127.0.0.1
    (ANTHROPIC_BASE_URL, OPENAI_BASE_URL), on to the base URLs it had; each call's body and usage is
    stored as a session that lint --session, stats, replay and view read. Exits with CMD's status."""
    upstreams = {name: os.environ.get(wire.variable, "") for name, wire in UPSTREAMS.items()}
    with Recorder(store or default_location(os.environ), upstreams, workspace=os.getcwd()) as recorder:
        try:
            status = subprocess.call(list(command), env={**os.environ, **recorder.environment()})
        except OSError as exc:
            raise ConfigError(f"cannot run {command[0]}: {exc.strerror}") from exc
        recorder.exit_status = status
    if not recorder.session_id:
        click.echo(
            f"recorded no call: {command[0]} sent no model request through the recorder; nothing stored", err=True
        )
        return status
    click.echo(f"recorded {recorder.calls} call(s) as session {recorder.session_id}", err=True)
    return status
