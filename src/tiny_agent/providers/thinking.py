"""Reasoning settings and what each model can do with them, declared (never probed).

``Thinking`` is what the user asked for (``--thinking off|adaptive|N``, ``--thinking-display``,
``--effort``); ``ThinkingCaps`` is what a model supports, declared per model family in
``providers.thinking_caps``. ``providers.thinking_check`` holds one against the other before any call.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Literal

from tiny_agent.errors import ConfigError

__all__ = [
    "EFFORTS",
    "MIN_BUDGET",
    "NO_THINKING",
    "OFF",
    "EarlierReasoning",
    "Thinking",
    "ThinkingCaps",
    "as_thinking",
    "is_on",
    "named_key",
    "parse_thinking",
    "sent_effort",
    "thinking_key",
    "thinking_of_key",
]

MIN_BUDGET = 1024
"""Anthropic's smallest ``budget_tokens``."""
EFFORTS = ("minimal", "low", "medium", "high", "xhigh", "max")
"""Every ``--effort`` a model takes somewhere; which ones a model takes is its ``ThinkingCaps.efforts``."""
Mode = Literal["default", "off", "adaptive", "enabled"]
EarlierReasoning = Literal["kept", "stripped", "tool_turns", "none"]


@dataclass(frozen=True)
class Thinking:
    """The reasoning a run asks for. ``default``: send nothing, the model's own default applies
    (DeepSeek, Kimi and the Claude 5 models think by default; earlier Claude models do not)."""

    mode: Mode = "default"
    budget: int | None = None
    """``budget_tokens`` of manual thinking (``mode == "enabled"``)."""
    display: Literal["summarized", "omitted"] | None = None
    effort: str | None = None
    binding: Literal["strict", "drop_block"] = "strict"
    """What a preserved-thinking model does with a block whose prefix changed: a 400 ("strict"), or
    dropped (``drop_block``, beta); the compaction strategy follows it (``context.shrink.thinking``)."""

    @property
    def shapes_default(self) -> bool:
        """The model's own thinking (a Claude 5 model's, on unasked) given a display or a binding: it
        is sent, and compared, as ``adaptive``."""
        return self.mode == "default" and (self.display is not None or self.binding != "strict")

    @property
    def label(self) -> str:
        """How lines and the log name it: ``off``, ``adaptive``, ``2048``, ``default``."""
        return str(self.budget) if self.mode == "enabled" else self.mode

    def to_dict(self) -> dict[str, object]:
        return {
            "mode": self.mode,
            "budget": self.budget,
            "display": self.display,
            "effort": self.effort,
            "binding": self.binding,
        }


OFF = Thinking()


def parse_thinking(
    value: str | int | None, display: str | None = None, effort: str | None = None, binding: str = "strict"
) -> Thinking:
    """``off``, ``adaptive`` or a budget of at least 1024 tokens; one line on anything else."""
    binding = binding.strip().lower() if isinstance(binding, str) else binding
    if binding not in ("strict", "drop_block"):
        raise ConfigError(f"--thinking-binding takes strict or drop_block, not {binding!r}")
    return dataclasses.replace(_parse(value, display, effort), binding=binding)  # type: ignore[arg-type]


def as_thinking(value: object) -> Thinking | None:
    """``value`` as settings: a ``Thinking`` as it is, what ``--thinking`` takes ("adaptive", "off",
    4096) parsed; one line for anything else."""
    if value is None or isinstance(value, Thinking):
        return value
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise ConfigError(f'thinking must be "off", "adaptive", a token budget like 4096 or a Thinking, not {value!r}')
    return parse_thinking(value)


def _parse(value: str | int | None, display: str | None, effort: str | None) -> Thinking:
    display = display.strip().lower() if isinstance(display, str) else display
    effort = effort.strip().lower() if isinstance(effort, str) else effort
    if display not in (None, "summarized", "omitted"):
        raise ConfigError(f"--thinking-display takes summarized or omitted, not {display!r}")
    if effort is not None and effort not in EFFORTS:
        raise ConfigError(f"--effort takes one of {', '.join(EFFORTS)}, not {effort!r}")
    shown: Literal["summarized", "omitted"] | None = display  # type: ignore[assignment]
    if value is None:
        return Thinking("default", None, shown, effort)
    text = str(value).strip().lower()
    if text in ("off", "adaptive"):
        return Thinking(text, None, shown, effort)  # type: ignore[arg-type]
    try:
        budget = int(text)
    except ValueError:
        raise ConfigError(
            f"--thinking takes off, adaptive or a token budget (at least {MIN_BUDGET}), not {value!r}"
        ) from None
    if budget < MIN_BUDGET:
        raise ConfigError(f"--thinking {budget}: the budget must be at least {MIN_BUDGET} tokens")
    return Thinking("enabled", budget, shown, effort)


@dataclass(frozen=True)
class ThinkingCaps:
    """What a model does with reasoning."""

    manual: bool = False
    """Takes ``thinking: {type: enabled, budget_tokens}``."""
    adaptive: bool = False
    """Takes ``thinking: {type: adaptive}`` (interleaves by itself)."""
    interleaved_header: bool = False
    """Manual thinking between tool calls needs the ``interleaved-thinking-2025-05-14`` beta."""
    preserved: bool = False
    """Earlier turns' thinking stays in context, is billed as input, and each block is bound to its
    prefix (system + tools + every message before it): change anything before it and it is invalid."""
    forced_tool_choice: bool = False
    """A forced tool_choice is accepted with thinking on (never on Claude; Kimi only with thinking off)."""
    reasoning_content: bool = False
    """Chat Completions ``reasoning_content`` comes back and must go back on tool-loop turns."""
    switch_only: bool = False
    """Thinking is switched on or off, with no budget: ``thinking: {type: enabled|disabled}`` on the
    Messages wire (DeepSeek's Anthropic format: the same switch and effort as its Chat Completions)."""
    default_on: bool = False
    """The model thinks unless told not to (DeepSeek V4, Kimi K2.6, the Claude 5 models)."""
    max_output: int | None = None
    """The most a reply may hold, its thinking included (Claude's, declared): a budget stays under it,
    and a budget with the answer's room beside it is sent capped to it."""
    off_efforts: tuple[str, ...] | None = None
    """The efforts ``--thinking off`` may go with, where not all (Opus 5: high or below)."""
    can_disable: bool = True
    """``--thinking off`` can be sent: not to the Claude models that always think (Fable 5, Opus 5.5...),
    whose API answers ``thinking: {type: disabled}`` with a 400."""
    keep_all: bool = False
    """Kimi's ``thinking.keep: "all"``: earlier turns' reasoning stays in context."""
    earlier_reasoning: EarlierReasoning = "stripped"
    """How the provider counts the reasoning of earlier turns sent back to it (the current tool loop's
    always counts): "kept" (in context and billed: Claude Opus 4.5+, Kimi's keep all, GPT-5.6's
    ``all_turns``), "stripped" (left out of the window: older Claude models, OpenAI's ``current_turn``),
    "tool_turns" (DeepSeek: kept from turns that made tool calls, ignored from those that did not).
    "none" is no model's: ``ProviderProfile.earlier_reasoning`` when none is sent at all."""
    efforts: tuple[str, ...] = ()
    efforts_read_as: tuple[tuple[str, str], ...] = ()
    """Efforts the API takes but reads as another (DeepSeek: medium as high): refused, naming it."""
    effort_with_thinking: bool = True
    """``reasoning_effort`` may be sent beside ``thinking`` (not on Kimi)."""
    effort_only: bool = False
    """The model reasons unasked and has no thinking switch, only an effort (OpenAI's reasoning
    models): ``--thinking off`` is sent as ``off_effort``, or refused where there is none."""
    off_effort: str | None = None
    """The effort that turns reasoning off (``none`` from GPT-5.1 on; ``minimal``, its least, on GPT-5)."""
    local: bool = False
    """The embedded model (llama.cpp): it takes no reasoning settings, whatever it is called."""
    sent_on: str = ""
    """Where tiny-agent sends this model's reasoning settings when not on this wire (Claude's: on the
    Messages API only): a refusal says so."""

    @property
    def thinks(self) -> bool:
        return self.manual or self.adaptive or self.own_measure

    @property
    def own_measure(self) -> bool:
        """The model thinks by its own measure, on or off (DeepSeek, Kimi): ``adaptive`` means on."""
        return self.reasoning_content or self.switch_only


NO_THINKING = ThinkingCaps()


def sent_effort(thinking: Thinking, caps: ThinkingCaps) -> str | None:
    """The reasoning effort a request carries for ``thinking`` on an effort-only model: the one asked
    for, or the model's ``off_effort`` for ``--thinking off``."""
    return caps.off_effort if thinking.mode == "off" and caps.effort_only else thinking.effort


def thinking_key(thinking: Thinking) -> str:
    """The settings as the request renders them, for the call's fingerprint: ``2048/omitted/low``, and
    the binding after them when it is not strict (``adaptive///drop_block``), so a redraw sends it too."""
    binding = "" if thinking.binding == "strict" else thinking.binding
    parts = (thinking.label, thinking.display or "", thinking.effort or "", binding)
    return "/".join(str(x) for x in parts).rstrip("/")


def thinking_of_key(key: str, binding: str = "strict") -> Thinking:
    """The settings a fingerprint's ``thinking_key`` names (a request redrawn from the log renders them
    again); ``binding`` where the key names none, as one written before keys named it does not (see
    ``_key_parts``). ``ConfigError`` for a key no setting makes."""
    label, display, effort, named = _key_parts(key, binding)
    return parse_thinking(None if label == "default" else label, display or None, effort or None, named)


def named_key(key: str, binding: str) -> str:
    """``key`` as ``thinking_key`` writes it, ``binding`` named where it names none (see ``_key_parts``)."""
    label, display, effort, named = _key_parts(key, binding)
    return "/".join((label, display, effort, "" if named == "strict" else named)).rstrip("/")


def _key_parts(key: str, binding: str) -> tuple[str, str, str, str]:
    """The label, display, effort and binding of ``key``, ``binding`` where it names none and its
    thinking is on: only blocks a thinking made are bound to their prefix (the drop_block of a run's
    settings stays in force after a resume with ``--thinking off``, which sends no block)."""
    label, display, effort, named = [*key.split("/"), "", "", ""][:4]
    return label, display, effort, named or (binding if label == "adaptive" or label.isdigit() else "strict")


def is_on(thinking: Thinking, caps: ThinkingCaps) -> bool:
    """Whether the model will think with this setting."""
    if thinking.mode == "default":
        return caps.default_on
    return thinking.mode != "off" and caps.thinks
