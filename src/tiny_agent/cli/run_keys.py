"""The run settings a ``tiny-agent.toml`` may set: every option of ``run`` and ``chat``, derived from
the options themselves so the two cannot drift apart, and where each value in force came from.

A key is the option's long name with ``_`` for ``-`` (``max_steps``, ``compact_at``,
``budget_usd``, ``no_stream``); its value is checked and converted by the option's own type, so a
bad value is the same one line a bad flag is, naming the file. Left out: what names one invocation
(``workspace``, ``resume``, ``continue``, ``force``, ``no_session``, ``no_config``), what the file
has a key of its own for (``pins``, ``protect``, ``allow_read``, ``mcp``, ``hooks``, and ``provider``,
``model``, ``base_url``), and the output mode of one call (``json``).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from typing import Any

import click

from tiny_agent.cli.options import agent_options, given
from tiny_agent.errors import ConfigError
from tiny_agent.providers.thinking import parse_thinking

__all__ = ["NOT_IN_FILES", "apply_file_settings", "checked_value", "run_option", "run_option_keys", "setting_sources"]

NOT_IN_FILES = frozenset(
    {
        "workspace", "resume", "continue_", "force", "no_session", "no_config", "as_json",
        "pin", "protect", "allow_read", "mcp", "mcp_url", "hook", "provider", "model", "base_url",
    }
)  # fmt: skip
"""Options without a generic file key (see the module docstring)."""


@functools.cache
def _options() -> dict[str, click.Option]:
    command = click.command()(agent_options(lambda **_: None))
    return {p.name: p for p in command.params if isinstance(p, click.Option) and p.name}


def run_option_keys() -> tuple[str, ...]:
    """The file keys of run settings, in the options' order."""
    return tuple(name for name in _options() if name not in NOT_IN_FILES)


def run_option(key: str) -> click.Option:
    return _options()[key]


def checked_value(key: str, value: Any, where: str) -> Any:
    """``value`` converted by the option's type; a ConfigError naming ``where`` when it does not fit."""
    option = run_option(key)
    if key in _SETTING_CHECKS:
        return _SETTING_CHECKS[key](value, where)
    if option.is_flag and isinstance(option.flag_value, str):  # a plain flag's is True, or click's UNSET
        return _flag_value(key, value, where)
    if option.is_flag and not isinstance(value, bool):
        raise ConfigError(f"{where}: must be true or false, not {value!r}")
    try:
        return option.type_cast_value(click.Context(click.Command("run")), value)
    except click.BadParameter as exc:
        raise ConfigError(f"{where}: {exc.format_message()}") from None


def _thinking(value: Any, where: str) -> str:
    """``thinking``: off, adaptive or a budget (``4096`` or ``"4096"``), checked as ``--thinking`` is."""
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise ConfigError(f'{where}: must be "off", "adaptive" or a token budget like 4096, not {_toml(value)}')
    try:
        parse_thinking(value)
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    return str(value).strip().lower()


def _toml(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else repr(value)


_SETTING_CHECKS = {"thinking": _thinking}
"""Keys whose option takes any text and checks it later (at the run): a file's value is checked here."""


def _flag_value(key: str, value: Any, where: str) -> Any:
    """A setting several flags set to values of their own (``allow_shell``: ``--allow-shell`` is "ask",
    ``--allow-shell-yes`` "yes", ``--no-shell`` "off"): true is the first flag's, false "off", or a value."""
    command = click.command()(agent_options(lambda **_: None))
    values = [p.flag_value for p in command.params if isinstance(p, click.Option) and p.name == key]
    values = [v for v in values if isinstance(v, str)]
    if isinstance(value, bool):
        return values[0] if value else ("off" if "off" in values else None)
    if value in values:
        return value
    raise ConfigError(f"{where}: must be true, false or one of {', '.join(map(repr, values))}, not {value!r}")


def apply_file_settings(ctx: click.Context, opts: dict[str, Any], values: Mapping[str, Any]) -> dict[str, Any]:
    """``opts`` with the files' run settings where the user gave no flag (nor its environment variable)."""
    out = dict(opts)
    for key in run_option_keys():
        if key in values and key in out and not given(ctx, key):
            out[key] = checked_value(key, values[key], key)
    return out


def setting_sources(values: Mapping[str, Any], sources: Mapping[str, str]) -> list[tuple[str, Any, str]]:
    """Every run setting's value in force for a run given no flag, and where it comes from: a file
    (its path), the environment (the variable), or the default."""
    out: list[tuple[str, Any, str]] = []
    for key in run_option_keys():
        option = run_option(key)
        variables = [option.envvar] if isinstance(option.envvar, str) else list(option.envvar or ())
        found = next((v for v in variables if v in os.environ), None)
        if found is not None:
            out.append((key, os.environ[found], f"environment {found}"))
        elif key in values:
            out.append((key, values[key], sources[key]))
        else:
            default = option.default
            plain = default is None or isinstance(default, bool | int | float | str | tuple | list)
            out.append((key, list(default) if isinstance(default, tuple) else default if plain else None, "default"))
    return out
