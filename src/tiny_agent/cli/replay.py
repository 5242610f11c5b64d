"""``tiny-agent replay ID``: what a stored session would have cost under another policy (sends nothing)."""

from __future__ import annotations

import json
from typing import Any

import click

from tiny_agent.cli.options import existing_store, given, store_option
from tiny_agent.cli.param_types import CompactAt, PolicyName, Positive
from tiny_agent.errors import ConfigError, IllegalRequestError, UnreadableEntry
from tiny_agent.providers.cache_rules import TTLS
from tiny_agent.providers.registry import PROVIDER_NAMES
from tiny_agent.store import open_store
from tiny_agent.whatif.bodies import MARKS
from tiny_agent.whatif.figures import replay_lines, sweep_lines
from tiny_agent.whatif.recorded import ASSUMED_SUMMARY_TOKENS
from tiny_agent.whatif.replay import Policy, Recording, Replay, replay, sweep

__all__ = ["replay_command"]


class ClearAfter(click.ParamType[int | None]):
    name = "N|never"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int | None:
        if value is None or str(value).strip().lower() in ("never", "off", "none"):
            return None
        return int(Positive(int).convert(value, param, ctx))


SWEEPABLE: dict[str, tuple[str, click.ParamType[Any]]] = {
    "compact-at": ("compact_at", CompactAt()),
    "keep-turns": ("keep_turns", Positive(int)),
    "policy": ("policy", PolicyName()),
    "clear-after": ("clear_after", ClearAfter()),
    "cache-ttl": ("cache_ttl", click.Choice(TTLS)),
    "cache-marks": ("cache_marks", click.Choice(MARKS)),
    "model": ("model", click.STRING),
    "provider": ("provider", click.Choice(PROVIDER_NAMES)),
    "summary-tokens": ("summary_tokens", Positive(int)),
}


@click.command("replay")
@click.argument("session_id", metavar="ID")
@click.argument("specs", nargs=-1, metavar="[NAME=V1,V2 ...]")
@click.option("--compact-at", type=CompactAt(), help="Compact past a fraction of the window or a token count.")
@click.option("--keep-turns", type=Positive(int), help="Newest turns kept verbatim on compaction.")
@click.option("--policy", type=PolicyName(), help="When to compact: a compaction policy's name (cost, fraction, ...).")
@click.option("--clear-after", type=ClearAfter(), help="Clear tool output older than N turns (or never).")
@click.option("--cache-ttl", type=click.Choice(TTLS), help="Anthropic cache lifetime.")
@click.option(
    "--cache-marks",
    type=click.Choice(MARKS),
    help="A recorded session's (tiny-agent record): tiny-agent's own cache breakpoints, or none.",
)
@click.option("--model", help="Replay on another model of the provider.")
@click.option("--provider", type=click.Choice(PROVIDER_NAMES), help="Replay on another provider's rules and prices.")
@click.option(
    "--summary-tokens",
    type=Positive(int),
    help="Tokens of a summary the recording does not have (default: the recorded summaries' median, "
    f"else {ASSUMED_SUMMARY_TOKENS}).",
)
@click.option("--sweep", "sweeping", is_flag=True, help="Replay every combination of NAME=V1,V2 (e.g. keep-turns=2,4).")
@click.option("--no-calls", is_flag=True, help="Only the totals, not every call.")
@store_option
@click.option("--json", "as_json", is_flag=True, help="One JSON object: recorded and replayed, each with per_call.")
def replay_command(
    session_id: str,
    specs: tuple[str, ...],
    sweeping: bool,
    no_calls: bool,
    store: str | None,
    as_json: bool,
    **flags: Any,
) -> int:
    """Replay session ID under the policy these flags give (the rest as recorded) and compare the bills.

    Nothing is sent and no key is needed: the engine decides again (compaction, clearing, cache marks)
    over the stored log, with the recorded responses and tool results, and each request it would have
    sent is priced by the provider's cache rules."""
    if specs and not sweeping:
        raise click.UsageError(f"{specs[0]!r}: NAME=V1,V2 values are for --sweep")
    config = {k: flags[k] for k in ("compact_at", "keep_turns", "policy") if flags[k] is not None}
    if flags["clear_after"] is not None or given(click.get_current_context(), "clear_after"):
        config["clear_after"] = flags["clear_after"]
    policy = Policy(
        config,
        flags["cache_ttl"],
        flags["provider"],
        flags["model"],
        flags["summary_tokens"],
        cache_marks=flags["cache_marks"],
    )
    grid = _grid(specs) if sweeping else {}
    both = sorted(set(grid) & set(config))
    if both:
        flag = both[0].replace("_", "-")
        raise click.UsageError(f"--{flag} and the sweep's {flag}= both set {flag}: keep one of them")
    session, recording = _recording(store, session_id)
    try:
        if sweeping:
            _print_sweep(session, sweep(recording, grid, policy), as_json)
            return 0
        result = replay(recording, policy)
    except IllegalRequestError as exc:  # a log edited after the fact: no engine would have sent it
        raise ConfigError(
            f"session {session[:12]} cannot be replayed: its log holds a request the API refuses "
            f"({'; '.join(exc.violations)}); lint names the call: tiny-agent lint --session {session[:12]}"
        ) from exc
    if as_json:
        click.echo(json.dumps({"session": session, **result.to_dict()}, ensure_ascii=False))
    else:
        click.echo(f"session {session[:12]}")
        for line in replay_lines(result, per_call=not no_calls):
            click.echo(line)
    return 0


def _recording(store: str | None, session_id: str) -> tuple[str, Recording]:
    """The session's full id and its recording, read from the store."""
    path = existing_store(store)
    if path is None:
        raise ConfigError("no sessions recorded yet: there is nothing to replay")
    with open_store(path) as opened:
        info = opened.get(session_id)
        entries = opened.entries(info.id)
        location = opened.location
    if not any(e.kind == "call_done" for e in entries):
        raise ConfigError(f"session {info.id[:12]} has no model call to replay")
    try:
        recording = Recording.of(entries)
    except UnreadableEntry as exc:
        raise exc.located(location, info.id) from exc
    return info.id, recording


def _print_sweep(session: str, results: list[Replay], as_json: bool) -> None:
    if as_json:
        rows = [r.to_dict() for r in results]
        costs = [row["replayed"]["cost_usd"] for row in rows if row["replayed"]["cost_usd"] is not None]
        for row in rows:  # as the text marks it with *
            row["cheapest"] = bool(costs) and row["replayed"]["cost_usd"] == min(costs)
        click.echo(json.dumps({"session": session, "sweep": rows}, ensure_ascii=False))
    else:
        click.echo(f"session {session[:12]}: {len(results)} policies")
        for line in sweep_lines(results):
            click.echo(line)


def _grid(specs: tuple[str, ...]) -> dict[str, list[Any]]:
    if not specs:
        raise click.UsageError("--sweep needs NAME=V1,V2 ..., e.g. compact-at=12000,0.5,0.8 keep-turns=2,4")
    grid: dict[str, list[Any]] = {}
    for spec in specs:
        name, sep, values = spec.partition("=")
        if not sep or name not in SWEEPABLE or not values.strip():
            known = ", ".join(SWEEPABLE)
            raise click.UsageError(f"{spec!r}: give NAME=V1,V2 with NAME one of {known}")
        key, kind = SWEEPABLE[name]
        if key in grid:
            raise click.UsageError(f"{name} is swept twice: give all its values in one, e.g. {name}=V1,V2")
        grid[key] = [kind.convert(v.strip(), None, None) for v in values.split(",")]
    return grid
