"""``tiny-agent config show``: the ``tiny-agent.toml`` files merged, and where each value came from."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from tiny_agent.cli.config_file import CONFIG_KEYS, CONFIG_NAME, config_paths, load_config
from tiny_agent.cli.run_keys import setting_sources
from tiny_agent.redaction import redact_json

__all__ = ["config_group"]


@click.group("config")
def config_group() -> None:
    """The tiny-agent.toml files: the user's (in the user config folder) and the workspace's."""


@config_group.command("show")
@click.option("--workspace", type=click.Path(file_okay=False), help="The workspace whose file is read (default: here).")
@click.option("--json", "as_json", is_flag=True, help="One JSON object: the files, the values, their sources.")
def show_command(workspace: str | None, as_json: bool) -> int:
    """Print the merged configuration, each value with the file it came from (flags given to a run
    override a file's values; lists add up)."""
    config = load_config(workspace or ".")
    paths = config_paths(workspace or ".")
    settings = [(k, v, _where(source, paths)) for k, v, source in setting_sources(config.values, config.sources)]
    if as_json:
        shown = config.to_dict()
        shown["values"] = _masked({k: v for k, v in shown["values"].items() if k in CONFIG_KEYS})
        shown["settings"] = redact_json([{"key": k, "value": v, "source": where} for k, v, where in settings])
        print(json.dumps({"looked_in": [str(p) for p in paths], **shown}))
        return 0
    for path in config_paths(workspace or "."):
        click.echo(f"# {path}{'' if path in config.files else ' (none)'}")
    if not config.values:
        click.echo(f"# no {CONFIG_NAME} sets anything: flags and the defaults apply")
    values = _masked(config.to_dict()["values"])
    for key in (k for k in CONFIG_KEYS if k in values):
        value = values[key]
        if key in ("mcp", "hooks"):
            for name, item in value.items():
                click.echo(f"{key}.{name} = {_shown(item)}  # {config.sources[f'{key}.{name}']}")
        else:
            click.echo(f"{key} = {_shown(value)}  # {config.sources[key]}")
    click.echo("# run settings (a flag given to a run replaces any of them)")
    for key, value, where in redact_json(settings):
        click.echo(f"{key} = {_shown(value)}  # {where}")
    return 0


def _where(source: str, paths: list[Path]) -> str:
    """``default``, ``environment VAR``, or which file: the user's or the workspace's."""
    if source == str(paths[0]):
        return f"user config {source}"
    if len(paths) > 1 and source == str(paths[1]):
        return f"workspace config {source}"
    return source


def _shown(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _masked(values: dict[str, Any]) -> dict[str, Any]:
    """The values with what an MCP server's ``env`` and ``headers`` set written literally (a token, a
    key) masked; a value that takes a ``${VAR}`` from the environment is shown as written. Every
    value also goes through ``redact``: a URL's password and a key in its query are hidden."""
    values = redact_json(values)
    servers = values.get("mcp")
    if not isinstance(servers, dict):
        return values
    masked: dict[str, Any] = {}
    for name, server in servers.items():
        if isinstance(server, dict):
            server = dict(server)
            for key in ("env", "headers"):
                if isinstance(server.get(key), dict):
                    server[key] = {k: _secret(v) for k, v in server[key].items()}
        masked[name] = server
    return {**values, "mcp": masked}


def _secret(value: Any) -> Any:
    return value if isinstance(value, str) and "${" in value else "***"
