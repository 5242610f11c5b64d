"""``tiny-agent lint FILE.json``: the hazards of a request body, before anything is spent."""

from __future__ import annotations

import json

import click

from tiny_agent.errors import ConfigError
from tiny_agent.observe.lint import is_clean, lint_files
from tiny_agent.providers.wire import WIRES

__all__ = ["lint_command"]


@click.command("lint")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--wire", type=click.Choice(list(WIRES)), help="Default: from each body's shape.")
@click.option("--model", help="Model whose minimum cacheable length applies (default: the body's).")
@click.option("--json", "as_json", is_flag=True, help="One JSON object: the findings and whether the bodies are clean.")
def lint_command(files: tuple[str, ...], wire: str | None, model: str | None, as_json: bool) -> int:
    """Check request bodies (JSON, a JSON list, or JSONL; several files are one sequence of requests):
    illegal message order, volatile content (dates, times, ids) in the cached prefix, more than 4
    breakpoints, a prefix below the model's minimum, tools that change order. Exit 0 only if clean."""
    try:
        findings = lint_files(files, wire, model)
    except OSError as exc:
        raise ConfigError(f"cannot read {exc.filename}: {exc.strerror}") from exc
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"not a JSON request body ({exc}); give a JSON or JSONL file") from exc
    except (AttributeError, KeyError, TypeError) as exc:
        raise ConfigError(f"not a request body of either wire format ({type(exc).__name__}: {exc})") from exc
    clean = is_clean(findings)
    if as_json:
        click.echo(json.dumps({"clean": clean, "findings": [f.to_dict() for f in findings]}, ensure_ascii=False))
    else:
        for finding in findings:
            click.echo(str(finding))
        click.echo("clean" if clean else f"{sum(f.severity != 'info' for f in findings)} hazard(s)", err=True)
    return 0 if clean else 1
