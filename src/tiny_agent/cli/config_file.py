"""``tiny-agent.toml``: what flags carry badly, written once, in the user's config folder and in the workspace.

    provider = "anthropic"
    model = "claude-sonnet-4-6"
    # api = "chat"                 # provider "openai" only: "responses" or "chat" (docs/responses.md)
    pins = ["never edit dev.mjs"]
    protect = ["secrets/**"]
    allow_read = [".env.example"]

    [mcp.docs]                       # an MCP server over stdio, run in the workspace folder
    command = ["python", "tools/docs_server.py"]
    env = { DOCS_TOKEN = "${DOCS_TOKEN}" }    # ${VAR}: from tiny-agent's environment, never stored
    timeout = 30

    [mcp.search]                     # over streamable HTTP
    url = "https://search.example/mcp"
    headers = { Authorization = "Bearer ${SEARCH_TOKEN}" }

    [[hooks.PreToolUse]]
    matcher = "write_file"
    command = "python tools/check_write.py"
    timeout = 10

Both files are read (the user's, ``platformdirs.user_config_dir("tiny-agent")``, then the
workspace's) and flags come last. A value set in a closer place replaces the farther one's
(provider, model, base_url, api, effort, an MCP server of the same name); lists add up (pins, protect,
allow_read, hooks). Files are read on every run, a resumed one too: what they set is given like a
flag, and a change is recorded in the session. A file that cannot be used is one line naming the
file and the key. Every other option of ``run`` is a key too (``max_steps = 40``,
``compact_at = 0.6``, ``budget_usd = 2``: see ``run_keys``), a flag given replacing it.
"""

from __future__ import annotations

import difflib
import os
import shlex
import string
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import platformdirs

from tiny_agent.agent.settings import RunSettings
from tiny_agent.cli.config_name import CONFIG_NAME
from tiny_agent.cli.run_keys import apply_file_settings, checked_value, run_option_keys
from tiny_agent.errors import ConfigError
from tiny_agent.providers.registry import PROVIDER_NAMES
from tiny_agent.tools.hooks import DEFAULT_HOOK_TIMEOUT, HOOK_EVENTS, Hook
from tiny_agent.tools.mcp.tools import DEFAULT_MCP_TIMEOUT, McpServer

__all__ = ["CONFIG_KEYS", "CONFIG_NAME", "FileConfig", "config_paths", "load_config", "with_file_settings"]

SCALARS = ("provider", "model", "base_url")
LISTS = ("pins", "protect", "allow_read")
CONFIG_KEYS = (*SCALARS, *LISTS, "mcp", "hooks")
SERVER_KEYS = ("command", "url", "env", "env_vars", "headers", "timeout")
HOOK_KEYS = ("command", "matcher", "timeout")


@dataclass(frozen=True)
class FileConfig:
    """The files' values merged, with the file each came from."""

    values: dict[str, Any] = field(default_factory=dict)
    """Scalars and lists by key; ``mcp``: server name -> its table; ``hooks``: event -> its tables."""
    sources: dict[str, str] = field(default_factory=dict)
    """Where each value came from: ``provider``, ``pins``, ``mcp.docs``, ``hooks.PreToolUse`` -> the
    file (files, joined by " + ", for what adds up)."""
    files: tuple[Path, ...] = ()
    """The files that were read, farthest first."""

    def settings(self) -> RunSettings:
        """What the files set of a run's settings (provider, model, base_url, protect, allow_read)."""
        keys = (*SCALARS, "protect", "allow_read")
        return RunSettings.of({k: self.values[k] for k in keys if k in self.values})

    def under(self, given: RunSettings) -> RunSettings:
        """``given`` (the flags) over the files' settings: a value given replaces the files', lists add up."""
        files = self.settings()
        merged = given.over(files)
        lists = {}
        for key in LISTS[1:]:  # protect, allow_read
            first = getattr(files, key)
            lists[key] = (*first, *(v for v in getattr(given, key) if v not in first))
        return RunSettings.of({**merged.given(), **lists})

    @property
    def pins(self) -> tuple[str, ...]:
        return tuple(self.values.get("pins", ()))

    def servers(self, *, timeout: float | None = None, env: Mapping[str, str] = os.environ) -> list[McpServer]:
        """The MCP servers, their ``${VAR}`` values taken from ``env``; ``timeout`` for those that set none."""
        out = []
        for name, table in self.values.get("mcp", {}).items():
            where = f"{self.sources[f'mcp.{name}']}: mcp.{name}"
            expand = _Expander(env, where)
            command = table.get("command")
            words = _split(command, f"{where}.command") if isinstance(command, str) else list(command or [])
            values = {k: expand(v, f"env.{k}") for k, v in table.get("env", {}).items()}
            for variable in table.get("env_vars", ()):
                if variable not in env:
                    raise ConfigError(f"{where}.env_vars: {variable} is not set in the environment")
                values[variable] = env[variable]
            out.append(
                McpServer(
                    name=name,
                    command=tuple(expand(w, "command") for w in words),
                    url=expand(table["url"], "url") if "url" in table else None,
                    env=values,
                    headers={k: expand(v, f"headers.{k}") for k, v in table.get("headers", {}).items()},
                    timeout=float(table.get("timeout", timeout or DEFAULT_MCP_TIMEOUT)),
                    origin=where,
                )
            )
        return out

    def hooks(self) -> list[Hook]:
        out = []
        for event, tables in self.values.get("hooks", {}).items():
            for number, (table, path) in enumerate(tables, 1):
                out.append(
                    Hook(
                        event=event,
                        command=table["command"],
                        matcher=table.get("matcher"),
                        timeout=float(table.get("timeout", DEFAULT_HOOK_TIMEOUT)),
                        origin=f"{path}: hooks.{event} #{number}",
                    )
                )
        return out

    def to_dict(self) -> dict[str, Any]:
        hooks = {event: [table for table, _ in tables] for event, tables in self.values.get("hooks", {}).items()}
        values = {**self.values, **({"hooks": hooks} if hooks else {})}
        return {"files": [str(f) for f in self.files], "values": values, "sources": dict(self.sources)}


def config_paths(workspace: str | Path = ".") -> list[Path]:
    """Where the files are looked for, farthest first: the user's config folder, the workspace."""
    user = Path(platformdirs.user_config_dir("tiny-agent")) / CONFIG_NAME
    here = Path(workspace).resolve() / CONFIG_NAME
    return [user] if here == user.resolve() else [user, here]


def load_config(workspace: str | Path = ".") -> FileConfig:
    """The files of ``workspace`` merged; raises ConfigError naming the file and the key of a bad value."""
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    files = []
    for path in config_paths(workspace):
        table = _read(path)
        if table is None:
            continue
        files.append(path)
        _merge(values, sources, _checked(table, str(path)), str(path))
    return FileConfig(values, sources, tuple(files))


def _read(path: Path) -> dict[str, Any] | None:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        return None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot be read: {getattr(exc, 'strerror', None) or exc}") from exc


def with_file_settings(ctx: Any, opts: dict[str, Any]) -> dict[str, Any]:
    """``opts`` (a run's or a chat's options) with the files' run settings where no flag was given."""
    if opts.get("no_config"):
        return opts
    return apply_file_settings(ctx, opts, load_config(opts.get("workspace") or ".").values)


def _merge(values: dict[str, Any], sources: dict[str, str], table: dict[str, Any], path: str) -> None:
    for key, value in table.items():
        if key in SCALARS or key not in CONFIG_KEYS:  # a run setting: the closer file's value
            values[key], sources[key] = value, path
        elif key in LISTS:
            values[key] = [*values.get(key, []), *(v for v in value if v not in values.get(key, []))]
            sources[key] = f"{sources[key]} + {path}" if key in sources else path
        elif key == "mcp":
            for name, server in value.items():
                values.setdefault("mcp", {})[name] = server
                sources[f"mcp.{name}"] = path
        elif key == "hooks":
            for event, hooks in value.items():
                values.setdefault("hooks", {}).setdefault(event, []).extend((h, path) for h in hooks)
                name = f"hooks.{event}"
                sources[name] = f"{sources[name]} + {path}" if name in sources else path


def _checked(table: dict[str, Any], path: str) -> dict[str, Any]:
    """``table`` with every value of the expected type (a hook given as a string made a table)."""
    out: dict[str, Any] = {}
    for key, value in table.items():
        where = f"{path}: {key}"
        if key not in CONFIG_KEYS and key not in run_option_keys():
            known = (*CONFIG_KEYS, *run_option_keys())
            close = difflib.get_close_matches(key, known, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise ConfigError(f"{where}: unknown key; {hint}the keys are: {', '.join(known)}")
        if key not in CONFIG_KEYS:
            checked_value(key, value, where)
            out[key] = value
        elif key in SCALARS:
            out[key] = _string(value, where)
        elif key in LISTS:
            out[key] = _strings(value, where)
        elif key == "mcp":
            out[key] = {name: _server(server, f"{where}.{name}") for name, server in _table(value, where).items()}
        else:
            out[key] = {event: _hooks(hooks, f"{where}.{event}") for event, hooks in _table(value, where).items()}
    if "provider" in out and out["provider"] not in PROVIDER_NAMES:
        raise ConfigError(f"{path}: provider: {out['provider']!r} is not one of: {', '.join(PROVIDER_NAMES)}")
    return out


def _server(value: Any, where: str) -> dict[str, Any]:
    table = _table(value, where)
    _known(table, SERVER_KEYS, where)
    command = table.get("command")
    if command is not None and not isinstance(command, str):
        _strings(command, f"{where}.command")
    if "url" in table:
        _string(table["url"], f"{where}.url")
    if (command is None) == ("url" not in table):
        raise ConfigError(f"{where}: give a command (stdio) or a url (streamable HTTP), one of them")
    for key in ("env", "headers"):
        for name, text in _table(table.get(key, {}), f"{where}.{key}").items():
            _string(text, f"{where}.{key}.{name}")
    _strings(table.get("env_vars", []), f"{where}.env_vars")
    if "timeout" in table:
        _seconds(table["timeout"], f"{where}.timeout")
    return table


def _hooks(value: Any, where: str) -> list[dict[str, Any]]:
    event = where.rsplit(".", 1)[-1]
    if event not in HOOK_EVENTS:
        raise ConfigError(f"{where}: unknown hook event; the events are: {', '.join(HOOK_EVENTS)}")
    items = value if isinstance(value, list) else [value]
    out = []
    for number, item in enumerate(items, 1):
        spot = f"{where} #{number}" if len(items) > 1 else where
        table = {"command": item} if isinstance(item, str) else _table(item, spot)
        _known(table, HOOK_KEYS, spot)
        if "command" not in table:
            raise ConfigError(f"{spot}: a hook needs a command")
        _string(table["command"], f"{spot}.command")
        if "matcher" in table:
            _string(table["matcher"], f"{spot}.matcher")
        if "timeout" in table:
            _seconds(table["timeout"], f"{spot}.timeout")
        out.append(table)
    return out


def _known(table: Mapping[str, Any], keys: Sequence[str], where: str) -> None:
    unknown = [k for k in table if k not in keys]
    if unknown:
        raise ConfigError(f"{where}.{unknown[0]}: unknown key; the keys are: {', '.join(keys)}")


def _table(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: must be a table, not {_kind(value)}")
    return value


def _string(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise ConfigError(f"{where}: must be a string, not {_kind(value)}")
    return value


def _strings(value: Any, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: must be a list of strings, not {_kind(value)}")
    return value


def _seconds(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise ConfigError(f"{where}: must be a number of seconds above 0, not {value!r}")
    return float(value)


def _split(command: str, where: str) -> list[str]:
    try:
        words = shlex.split(command)
    except ValueError as exc:
        raise ConfigError(f"{where}: {exc}") from exc
    if not words:
        raise ConfigError(f"{where}: the command is empty")
    return words


def _kind(value: Any) -> str:
    names = {str: "a string", int: "a number", float: "a number", bool: "true/false", list: "a list", dict: "a table"}
    return names.get(type(value), type(value).__name__)


class _Expander:
    """``${VAR}`` and ``$VAR`` from the environment; a variable that is not set names where it is used."""

    def __init__(self, env: Mapping[str, str], where: str) -> None:
        self.env, self.where = env, where

    def __call__(self, text: str, key: str) -> str:
        try:
            return string.Template(text).substitute(self.env)
        except KeyError as exc:
            raise ConfigError(f"{self.where}.{key}: ${{{exc.args[0]}}} is not set in the environment") from exc
        except ValueError as exc:
            raise ConfigError(f"{self.where}.{key}: {exc} (write $$ for a $)") from exc
