"""A run's reasoning settings held against what the model takes (``ThinkingCaps``), before any call:
a setting the model does not take is one ``ConfigError`` line saying what to change, never a 400 from
the API and never a setting dropped in silence."""

from __future__ import annotations

from tiny_agent.errors import ConfigError
from tiny_agent.providers.thinking import Thinking, ThinkingCaps

__all__ = ["checked"]


def checked(thinking: Thinking, caps: ThinkingCaps, model: str) -> Thinking:
    """``thinking`` if ``model`` takes it; else the one line that says what to change."""
    try:
        return _checked(thinking, caps, model)
    except ConfigError as exc:
        if not caps.sent_on:
            raise
        raise ConfigError(f"{exc} over this API: tiny-agent sends its reasoning settings on {caps.sent_on}") from None


def _checked(thinking: Thinking, caps: ThinkingCaps, model: str) -> Thinking:
    if thinking.mode == "off" and thinking.display is not None:
        raise ConfigError(f"--thinking off shows no thinking: leave out --thinking-display {thinking.display}")
    if caps.effort_only and (thinking.mode != "default" or (thinking.effort and not caps.efforts)):
        _check_effort_only(thinking, caps, model)
    if thinking.mode == "off" and thinking.effort is not None and caps.own_measure:
        raise ConfigError(f"--thinking off spends no reasoning effort on {model}: leave out --effort {thinking.effort}")
    if thinking.binding == "drop_block" and not caps.preserved:
        raise ConfigError(
            f"{model} does not bind thinking blocks to their prefix (Claude 5 models do): leave out "
            "--thinking-binding drop_block"
        )
    if thinking.mode == "enabled" and not caps.manual:
        raise ConfigError(f"{model} does not take a thinking budget{_budget_hint(caps)}")
    if thinking.mode == "adaptive" and not (caps.adaptive or caps.own_measure):
        hint = " (use --thinking N with N >= 1024)" if caps.manual else ""
        raise ConfigError(f"{model} has no adaptive thinking{hint}")
    if thinking.mode in ("enabled", "adaptive") and not caps.thinks:
        raise ConfigError(f"{model} has no thinking; leave --thinking off")
    if thinking.effort is not None and caps.efforts and not caps.effort_with_thinking:
        raise ConfigError(
            f"{model} does not take --effort: its API refuses reasoning_effort beside the thinking switch "
            "tiny-agent sends it; leave --effort out"
        )
    if thinking.effort is not None and thinking.effort not in caps.efforts:
        if not caps.efforts:
            raise ConfigError(
                f"{model} does not take --effort {thinking.effort} (it has no effort: leave --effort out)"
            )
        raise ConfigError(f"{model} does not take --effort {thinking.effort} (it takes: {', '.join(caps.efforts)})")
    if thinking.display is not None and not (caps.manual or caps.adaptive):
        raise ConfigError(f"{model} does not take --thinking-display")
    return thinking


def _check_effort_only(thinking: Thinking, caps: ThinkingCaps, model: str) -> None:
    """An OpenAI reasoning model has no thinking switch: only ``--effort``, and ``--thinking off``
    where it has an effort that turns reasoning off."""
    given = f"--thinking {thinking.label}" if thinking.mode != "default" else f"--effort {thinking.effort}"
    if not caps.efforts:
        raise ConfigError(
            f"{model} reasons by itself and tiny-agent sends its reasoning settings only over "
            f"the Responses API: use --api responses, or leave out {given}"
        )
    if thinking.mode != "off":
        how_much = "|".join(caps.efforts)
        raise ConfigError(f"{model} reasons by itself: leave out {given}; --effort {how_much} sets how much")
    if caps.off_effort is None:
        least = caps.efforts[0]
        raise ConfigError(f"{model} always reasons: it has no --thinking off (--effort {least} reasons least)")
    if thinking.effort is not None:
        raise ConfigError(
            f"--thinking off is --effort {caps.off_effort} on {model}: leave out --effort {thinking.effort}"
        )


def _budget_hint(caps: ThinkingCaps) -> str:
    """What to give instead of a budget: a model that thinks by its own measure (DeepSeek, Kimi) has no
    field for one, and silently dropping it would spend what the user meant to cap."""
    if caps.own_measure:
        how_much = f"; --effort {'|'.join(caps.efforts)} sets how much" if caps.effort_with_thinking else ""
        return f": it thinks by its own measure (--thinking adaptive, or off){how_much}"
    return " (use --thinking adaptive)" if caps.adaptive else ""
