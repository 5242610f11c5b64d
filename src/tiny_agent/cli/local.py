"""``tiny-agent local start|stop|status``: one warm llama.cpp server that outlives runs, so a second
run within minutes reads the system prompt from the server's KV cache."""

from __future__ import annotations

import click

from tiny_agent.cli.param_types import Positive
from tiny_agent.providers.local import llama_server

__all__ = ["local_group"]


@click.group("local")
def local_group() -> None:
    """A warm local llama.cpp server that outlives runs (runs use it when it is up)."""


@local_group.command("start")
@click.option("--model", help="A .gguf file (default: the embedded SmolLM2-135M).")
@click.option("--ctx-size", type=Positive(int), default=llama_server.DEFAULT_CTX_SIZE, show_default=True)
def start(model: str | None, ctx_size: int) -> int:
    """Start the warm server, or show the one already running."""
    path = llama_server.check_model(model) if model else llama_server.find_default_model()
    warm = llama_server.start_warm_server(path, ctx_size=ctx_size)
    click.echo(f"running: pid {warm.pid} · {warm.base_url} · {warm.model}")
    return 0


@local_group.command("stop")
def stop() -> int:
    """Stop the warm server, answering or not."""
    stopped = llama_server.stop_warm_server()
    click.echo(f"stopped pid {stopped.pid}" if stopped else "no warm server was running")
    return 0


@local_group.command("status")
def status() -> int:
    """Exit 0 if the warm server runs and answers, 3 if not."""
    found = llama_server.read_warm_server()
    click.echo(f"running: pid {found.pid} · {found.base_url} · {found.model}" if found else "not running")
    return 0 if found else 3
