"""``tiny-agent lint FILE.json``: the hazards of request bodies and the cache breaks between them."""

from __future__ import annotations

import json

import click

from tiny_agent.cli.options import existing_store, store_option
from tiny_agent.errors import ConfigError
from tiny_agent.observe.lint import Finding, is_clean, lint_files, lint_session
from tiny_agent.providers.cache_rules import MIN_TOKENS_BY_MODEL, normalise_model
from tiny_agent.providers.pricing import token_prices
from tiny_agent.providers.wire import WIRES
from tiny_agent.store import open_store

__all__ = ["lint_command"]


@click.command("lint")
@click.argument("files", nargs=-1, type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--session", "session_id", metavar="ID", help="Lint a stored session's requests instead of files.")
@click.option("--wire", type=click.Choice(list(WIRES)), help="Default: from each body's shape.")
@click.option("--model", help="Model whose minimum cacheable length applies (default: the body's).")
@click.option("--json", "as_json", is_flag=True, help="One JSON object: the findings and whether the bodies are clean.")
@store_option
def lint_command(
    files: tuple[str, ...],
    session_id: str | None,
    wire: str | None,
    model: str | None,
    as_json: bool,
    store: str | None,
) -> int:
    """Check request bodies (JSON, a JSON list, JSONL, - for stdin, or a session export; several files
    are one sequence of requests), or a stored session (--session ID): illegal message order, volatile
    content in the cached prefix, breakpoints (too many, none, below the minimum, on a block that may
    not carry one, past the lookback), and between consecutive bodies every cause of a cache miss with
    its place (docs/lint.md lists the rules). Exit 0 only if clean, 1 if not."""
    if bool(files) == bool(session_id):
        raise click.UsageError("give request body files (or -), or --session ID: one of the two")
    if model and not _known(model):
        click.echo(f"note: no cache rules known for model {model!r}: the wire's defaults apply", err=True)
    findings = _session(session_id, store, wire, model) if session_id else _files(files, wire, model)
    clean = is_clean(findings)
    if as_json:
        click.echo(json.dumps({"clean": clean, "findings": [f.to_dict() for f in findings]}, ensure_ascii=False))
    else:
        for finding in findings:
            click.echo(str(finding))
        click.echo("clean" if clean else f"{sum(f.severity != 'info' for f in findings)} hazard(s)", err=True)
    return 0 if clean else 1


def _files(files: tuple[str, ...], wire: str | None, model: str | None) -> list[Finding]:
    try:
        return lint_files(files, wire, model)
    except OSError as exc:
        raise ConfigError(f"cannot read {exc.filename}: {exc.strerror}") from exc
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"not a JSON request body ({exc}); give a JSON or JSONL file") from exc
    except (AttributeError, KeyError, TypeError) as exc:
        raise ConfigError("not a request body of any wire format: " + ", ".join(files)) from exc


def _known(model: str) -> bool:
    """A model with a price or a minimum cacheable length of its own on some wire."""
    key = normalise_model(model)
    return any(token_prices(model, name) or key in MIN_TOKENS_BY_MODEL.get(name, {}) for name in WIRES)


def _session(session_id: str, store: str | None, wire: str | None, model: str | None) -> list[Finding]:
    path = existing_store(store)
    if path is None:
        raise ConfigError("no sessions recorded yet: there is no session to lint")
    with open_store(path) as opened:
        return lint_session(opened, session_id, wire, model)
