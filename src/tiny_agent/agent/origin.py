"""Where a refused run setting was set, said after the refusal, whose words are the flag's though the
user may have given no flag: ``(set by the session: --thinking off)`` for a resumed session's setting
(``session_origin``, in ``Run.open``), ``(set by thinking = 4096 in FILE)`` for a config file's (the
command line, with ``at_fault`` and ``set_by``)."""

from __future__ import annotations

from collections.abc import Iterable

from tiny_agent.agent.settings import RunSettings
from tiny_agent.errors import ConfigError
from tiny_agent.providers.thinking_check import BINDING, DISPLAY, EFFORT, THINKING, SettingRefused

__all__ = ["SETTING_FLAGS", "at_fault", "session_origin", "set_by"]

SETTING_FLAGS = {"thinking": THINKING, "thinking_display": DISPLAY, "effort": EFFORT, "thinking_binding": BINDING}
"""The flag a model's refusal names for each reasoning setting (``SettingRefused.flags``)."""
_WORDS = {
    "thinking": f"{THINKING} ",
    "thinking_display": f"{DISPLAY} ",
    "effort": f"{EFFORT} ",
    "server_compact_at": "--server-compact-at",
}
"""The words of the other refusals (the window's room, server compaction), by the setting at fault:
its flag, with its value where the line gives one (``--thinking 200000 with the answer's room``), so
that ``--thinking-display takes summarized or omitted`` is not taken for the thinking's."""


def at_fault(exc: ConfigError, keys: Iterable[str]) -> list[str]:
    """Which of the run settings ``keys`` ``exc`` refused: a model's refusal names the flags at fault;
    another line is known by its words."""
    if isinstance(exc, SettingRefused):
        return [k for k in keys if SETTING_FLAGS.get(k) in exc.flags]
    return [k for k in keys if k in _WORDS and _WORDS[k] in str(exc)]


def set_by(exc: ConfigError, where: str) -> ConfigError:
    """``exc`` with ``(set by WHERE)`` after it, of its own kind (a refusal keeps its flags)."""
    line = f"{exc} (set by {where})"
    if isinstance(exc, SettingRefused):
        return SettingRefused(line, *exc.flags, turn_on=exc.turn_on)
    return ConfigError(line)


def session_origin(exc: ConfigError, stored: RunSettings, given: RunSettings) -> ConfigError:
    """``exc`` saying which of its settings the resumed session set (``stored``, where ``given`` did
    not replace them, nor its ``--thinking off`` leave them out), and, for the session's ``--thinking
    off`` refused beside another setting, the ``--thinking`` that turns thinking on; else ``exc``."""
    values, replaced = stored.given(), {*given.given(), *given.thinking_reset()}
    said = at_fault(exc, [k for k in values if k not in replaced])
    if not said:
        return exc
    flags = ", ".join(f"{SETTING_FLAGS.get(k, '--' + k.replace('_', '-'))} {values[k]}" for k in said)
    how = exc.turn_on if isinstance(exc, SettingRefused) and "thinking" in said else ""
    return set_by(exc, f"the session: {flags}" + (f"; give {how} to turn thinking on" if how else ""))
