"""A run's reasoning settings held against what the model takes (``ThinkingCaps``), before any call:
a setting the model does not take is one ``ConfigError`` line saying what to change, never a 400 from
the API and never a setting dropped in silence."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NoReturn

from tiny_agent.errors import ConfigError
from tiny_agent.providers.pricing import maker_of
from tiny_agent.providers.thinking import MIN_BUDGET, Thinking, ThinkingCaps
from tiny_agent.providers.thinking_caps import DISCONTINUED

__all__ = ["BINDING", "DISPLAY", "EFFORT", "THINKING", "SettingRefused", "checked"]

THINKING, DISPLAY, BINDING, EFFORT = "--thinking", "--thinking-display", "--thinking-binding", "--effort"
"""The flags a refusal names (``SettingRefused.flags``)."""


class SettingRefused(ConfigError):
    """A reasoning setting the model does not take; ``flags`` are those at fault (``--effort``...), so
    that a caller can say where each was set (a file's key rather than a flag). ``turn_on``: for
    ``--thinking off`` refused beside a setting of a thinking, the ``--thinking`` that turns it on on
    this model, for a caller to offer where the user did not give the ``off`` (a resumed session did)."""

    def __init__(self, line: str, *flags: str, turn_on: str = "") -> None:
        super().__init__(line)
        self.flags = flags
        self.turn_on = turn_on


def checked(thinking: Thinking, caps: ThinkingCaps, model: str) -> Thinking:
    """``thinking`` if ``model`` takes it; else the one line that says what to change."""
    asked = _asked(thinking, caps)
    if caps.sent_on and asked:
        line = f"{model} takes {_listed(asked)} only on {caps.sent_on}: tiny-agent sends no reasoning settings"
        _refuse(f"{line} over this API", *asked)
    _check_contradictions(thinking, caps, model)
    if caps.effort_only and (thinking.mode != "default" or (thinking.effort and not caps.efforts)):
        _check_effort_only(thinking, caps, model)
    if not (caps.thinks or caps.effort_only) and asked:
        _refuse(_does_not_think(model, caps, _listed(asked)), *asked)
    _check_model(thinking, caps, model)
    _check_thinking_on(thinking, caps)
    return thinking


def _does_not_think(model: str, caps: ThinkingCaps, asked: str) -> str:
    """Why ``model`` takes no reasoning settings: discontinued, an id no maker's catalogue has (a
    short name, a typo), or a model that does not think."""
    successor = DISCONTINUED.get(model.lower())
    if successor:
        return f"{model} was discontinued in 2026: name a model served today ({successor}), or leave out {asked}"
    if not caps.local and maker_of(model) is None:
        return (
            f"tiny-agent declares no thinking for the model id {model}, so it sends it no reasoning settings: "
            f"leave out {asked} (a short name or a typo? ids it knows to think include claude-sonnet-5, "
            "deepseek-v4-flash and kimi-k2.6)"
        )
    return f"{model} does not think: leave out {asked}"


def _refuse(line: str, *given: str, turn_on: str = "") -> NoReturn:
    """``given`` are flags with or without their values (``--effort low``, ``--effort``)."""
    raise SettingRefused(line, *dict.fromkeys(g.split(" ")[0] for g in given), turn_on=turn_on)


def _asked(thinking: Thinking, caps: ThinkingCaps) -> list[str]:
    """What of ``thinking`` a request would carry, as flags with their values: ``--thinking off``
    changes nothing where the model does not think unasked, so it is among them only on a model that
    does (``ThinkingCaps.default_on``: DeepSeek V4, Kimi K2.6, Claude 5) or cannot be sent off
    (``can_disable``), wherever it is served."""
    switches = ("enabled", "adaptive", "off") if caps.default_on or not caps.can_disable else ("enabled", "adaptive")
    asked = [f"{THINKING} {thinking.label}"] if thinking.mode in switches else []
    if thinking.display is not None:
        asked.append(f"{DISPLAY} {thinking.display}")
    if thinking.binding == "drop_block":
        asked.append(f"{BINDING} drop_block")
    if thinking.effort is not None:
        asked.append(f"{EFFORT} {thinking.effort}")
    return asked


def _listed(words: Sequence[str], last: str = "and") -> str:
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} {last} {words[-1]}"


def _check_contradictions(thinking: Thinking, caps: ThinkingCaps, model: str) -> None:
    if thinking.mode != "off":
        return
    on = _turn_on(caps)
    if thinking.display is not None:
        line = f"--thinking off shows no thinking: leave out {DISPLAY} {thinking.display}"
        _refuse(line, THINKING, DISPLAY, turn_on=on)
    if thinking.binding == "drop_block":
        _refuse(
            f"--thinking off binds no thinking blocks: leave out {BINDING} drop_block", THINKING, BINDING, turn_on=on
        )
    if thinking.effort is not None and caps.own_measure:
        line = f"--thinking off spends no reasoning effort on {model}: leave out --effort {thinking.effort}"
        _refuse(line, THINKING, EFFORT, turn_on=on)


def _turn_on(caps: ThinkingCaps) -> str:
    """The ``--thinking`` that turns thinking on on a model with ``caps``; "" where none does."""
    if caps.adaptive or caps.own_measure:
        return f"{THINKING} adaptive"
    return f"{THINKING} N (N >= {MIN_BUDGET})" if caps.manual else ""


def _check_model(thinking: Thinking, caps: ThinkingCaps, model: str) -> None:
    """What a model that reasons does not take of ``thinking``."""
    if thinking.binding == "drop_block" and not caps.preserved:
        line = f"{model} has no preserved thinking, whose blocks are bound to their prefix: leave out {BINDING}"
        _refuse(f"{line} drop_block", BINDING)
    if thinking.mode == "off" and not caps.can_disable:
        line = f"{model} always thinks (its API refuses thinking off): leave out --thinking off"
        _refuse(f"{line}; --effort {caps.efforts[0]} thinks least" if caps.efforts else line, THINKING)
    if thinking.mode == "off" and caps.off_efforts is not None and thinking.effort not in (None, *caps.off_efforts):
        line = f"{model} takes --thinking off only at --effort {_listed(caps.off_efforts, 'or')}"
        _refuse(f"{line}: leave out --effort {thinking.effort}, or --thinking off", THINKING, EFFORT)
    limit = caps.max_output
    if thinking.mode == "enabled" and caps.manual and limit and (thinking.budget or 0) >= limit:
        line = f"{model} writes at most {limit:,} output tokens a reply, its thinking included"
        _refuse(f"{line}: give a budget below that (--thinking N with N < {limit:,})", THINKING)
    if thinking.mode == "enabled" and not caps.manual:
        _refuse(f"{model} does not take a thinking budget{_budget_hint(caps)}", THINKING)
    if thinking.mode == "adaptive" and not (caps.adaptive or caps.own_measure):
        _refuse(f"{model} has no adaptive thinking (use --thinking N with N >= {MIN_BUDGET})", THINKING)
    if thinking.effort is not None and caps.efforts and not caps.effort_with_thinking:
        line = f"{model} does not take --effort: its API refuses reasoning_effort beside the thinking switch"
        _refuse(f"{line} tiny-agent sends it; leave --effort out", EFFORT)
    if thinking.effort is not None and thinking.effort not in caps.efforts:
        if not caps.efforts:
            _refuse(f"{model} has no reasoning effort: leave out --effort {thinking.effort}", EFFORT)
        read = dict(caps.efforts_read_as).get(thinking.effort)
        why = f"; its API would read {thinking.effort} as {read}: give --effort {read}" if read else ""
        _refuse(f"{model} does not take --effort {thinking.effort} (it takes: {', '.join(caps.efforts)}){why}", EFFORT)
    if thinking.display is not None and not (caps.manual or caps.adaptive):
        _refuse(f"{model} does not take {DISPLAY}: leave out {DISPLAY} {thinking.display}", DISPLAY)


def _check_thinking_on(thinking: Thinking, caps: ThinkingCaps) -> None:
    """A display shapes a thinking the request turns on: on a model that does not think unasked (Claude
    before 5), a request without ``--thinking`` carries none. (A binding needs preserved thinking,
    whose models all think unasked: ``_check_model`` refuses it elsewhere.)"""
    if thinking.mode != "default" or caps.default_on or thinking.display is None:
        return
    ways = [*(["--thinking adaptive"] if caps.adaptive else []), *(["--thinking N"] if caps.manual else [])]
    how = " or ".join(ways) + ("" if caps.adaptive else f" (N >= {MIN_BUDGET})")
    _refuse(f"{DISPLAY} {thinking.display} needs thinking on: add {how}", DISPLAY)


def _check_effort_only(thinking: Thinking, caps: ThinkingCaps, model: str) -> None:
    """An OpenAI reasoning model has no thinking switch: only ``--effort``, and ``--thinking off``
    where it has an effort that turns reasoning off."""
    given = f"--thinking {thinking.label}" if thinking.mode != "default" else f"--effort {thinking.effort}"
    if not caps.efforts:
        _refuse(
            f"{model} reasons by itself and tiny-agent sends its reasoning settings only over "
            f"the Responses API: use --api responses, or leave out {given}",
            given,
        )
    if thinking.mode != "off":
        how_much = "|".join(caps.efforts)
        _refuse(f"{model} reasons by itself: leave out {given}; --effort {how_much} sets how much", given)
    if caps.off_effort is None:
        least = caps.efforts[0]
        _refuse(f"{model} always reasons: it has no --thinking off (--effort {least} reasons least)", THINKING)
    if thinking.effort is not None:
        line = f"--thinking off is --effort {caps.off_effort} on {model}: leave out --effort {thinking.effort}"
        _refuse(line, THINKING, EFFORT)


def _budget_hint(caps: ThinkingCaps) -> str:
    """What to give instead of a budget: a model that thinks by its own measure (DeepSeek, Kimi) has no
    field for one, and silently dropping it would spend what the user meant to cap."""
    if caps.own_measure:
        how_much = f"; --effort {'|'.join(caps.efforts)} sets how much" if caps.effort_with_thinking else ""
        return f": it thinks by its own measure (--thinking adaptive, or off){how_much}"
    if caps.adaptive and caps.efforts:
        return f" (use --thinking adaptive; --effort {'|'.join(caps.efforts)} sets how much it thinks)"
    return " (use --thinking adaptive)" if caps.adaptive else ""
