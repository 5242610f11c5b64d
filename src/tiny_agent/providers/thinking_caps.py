"""What each model does with reasoning, declared per maker (never probed): ``thinking_caps`` gives
the ``ThinkingCaps`` of a model at an endpoint on a wire, ``openai_reasons`` which of OpenAI's models
reason."""

from __future__ import annotations

import dataclasses
import re

from tiny_agent.providers.thinking import EFFORTS, NO_THINKING, EarlierReasoning, ThinkingCaps

__all__ = ["CLAUDE_EFFORTS", "DISCONTINUED", "OPENAI_EFFORTS", "openai_reasons", "thinking_caps"]

CLAUDE_EFFORTS = ("low", "medium", "high", "max")
OPENAI_EFFORTS = ("low", "medium", "high")

_KIMI_NOW = "kimi-k2.6, which thinks by default"
DISCONTINUED = {
    m: _KIMI_NOW
    for m in (
        "kimi-k2-0711-preview",
        "kimi-k2-0905-preview",
        "kimi-k2-turbo-preview",
        "kimi-k2-thinking",
        "kimi-k2-thinking-turbo",
        "kimi-latest",
    )
}
"""Model ids discontinued by their maker, with what serves today (reasoning facts, section 6)."""
LOCAL = dataclasses.replace(NO_THINKING, local=True)

_PRESERVED = ("fable-5", "opus-5", "sonnet-5", "haiku-5", "mythos-5")
_ADAPTIVE = ("opus-4-6", "opus-4-7", "opus-4-8", "sonnet-4-6", *_PRESERVED)
_ADAPTIVE_ONLY = ("opus-4-7", "opus-4-8", *_PRESERVED)
"""Claude 4.7 and later refuse a thinking budget: '"thinking.type.enabled" is not supported for this
model. Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.'"""
_UNASKED = ("fable-5", "opus-5", "sonnet-5", "haiku-5", "mythos-5")
"""The Claude 5 models think unasked (adaptive by default); Opus 4.7 and 4.8 only when asked."""
_ALWAYS_ON = ("fable-5", "mythos-5", "opus-5-5", "sonnet-5-5")
"""Claude models that always think: ``thinking: {type: disabled}`` is a 400 (Fable 5 and 5.1, Mythos 5,
Opus 5.5; Sonnet 5.5 replaced it with a lighter setting of its own)."""
_OFF_UP_TO_HIGH = ("opus-5", "haiku-5-5")
"""Claude models that turn thinking off only at effort high or below (Opus 5, Haiku 5.5)."""
_STRIPS_EARLIER = re.compile(r"claude-(?:3-7-|haiku-4|sonnet-4(?!-[6-9])|opus-4(?:-[01])?(?:-20|$))")
"""Claude models whose window leaves earlier turns' thinking out (Sonnet 3.7, 4, 4.5, Opus 4, 4.1,
Haiku 4.5); Opus 4.5 and later keep it (reasoning facts, section 1)."""
_OUTPUT_32K = re.compile(r"claude-opus-4(?:-1)?(?:-20|$)")
_OUTPUT_64K = re.compile(r"claude-(?:3-7-sonnet|sonnet-4(?:-5)?(?:-20|$)|haiku-4-5|opus-4-5)")
"""Claude's output limits (models pages): 32,000 on Opus 4 and 4.1, 64,000 on Sonnet 3.7, 4 and 4.5,
Haiku 4.5 and Opus 4.5, 128,000 from Opus and Sonnet 4.6 on."""
_GPT = re.compile(r"^gpt-(\d+)(?:\.(\d+))?")
_OPENAI_REASONING = re.compile(r"^(?:gpt-5|o\d|codex-)")
"""OpenAI's reasoning models: they take ``reasoning`` and return reasoning items."""


def thinking_caps(name: str, model: str, wire: str = "") -> ThinkingCaps:
    """The declared capabilities of ``model`` at the endpoint ``name`` speaking ``wire`` (a llama.cpp
    server's model: none, whatever it is called). A model is its maker's wherever it is served: a
    DeepSeek model over the Messages wire has DeepSeek's switches there, not Claude's table."""
    m = model.lower()
    if name == "local":
        return LOCAL
    if m.startswith("claude"):
        return _claude_caps(m, wire)
    if name == "deepseek" or m.startswith("deepseek"):
        return _deepseek_caps(m, wire)
    if name == "moonshot" or m.startswith("kimi"):
        return _kimi_caps(m, wire)
    if name == "anthropic":
        return NO_THINKING
    return _openai_caps(m, wire)


def _claude_caps(m: str, wire: str) -> ThinkingCaps:
    if "claude-3-5" in m or "claude-3-haiku" in m or "claude-3-opus" in m:
        return NO_THINKING
    if wire not in ("", "anthropic"):
        # A Claude 5 model thinks unasked there too, and no off goes with it: --thinking off is refused.
        return ThinkingCaps(sent_on="the Messages API (--provider anthropic)", can_disable=not _unasked(m))
    adaptive = any(k in m for k in _ADAPTIVE)
    preserved = any(k in m for k in _PRESERVED)
    manual = not any(k in m for k in _ADAPTIVE_ONLY)
    efforts: tuple[str, ...] = CLAUDE_EFFORTS if adaptive or "opus-4-5" in m else ()
    if not manual:  # xhigh came with Opus 4.7
        efforts = ("low", "medium", "high", "xhigh", "max")
    strips = _STRIPS_EARLIER.match(m) is not None
    always = any(k in m for k in _ALWAYS_ON)
    return ThinkingCaps(
        manual=manual,
        adaptive=adaptive,
        interleaved_header=manual and not preserved,
        preserved=preserved,
        earlier_reasoning="stripped" if strips else "kept",
        efforts=efforts,
        default_on=_unasked(m),
        can_disable=not always,
        off_efforts=("low", "medium", "high") if any(k in m for k in _OFF_UP_TO_HIGH) and not always else None,
        max_output=32_000 if _OUTPUT_32K.match(m) else 64_000 if _OUTPUT_64K.match(m) else 128_000,
    )


def _unasked(m: str) -> bool:
    return any(k in m for k in _UNASKED)


def _deepseek_caps(m: str, wire: str) -> ThinkingCaps:
    """DeepSeek's Anthropic format has the switch and effort of its Chat Completions (reasoning facts,
    section 6); tiny-agent sends its Responses format none (no shape for them is on record), where the
    model still thinks by default, so ``--thinking off`` there is refused like any other setting."""
    if not (m.startswith("deepseek-v4") or m == "deepseek-reasoner"):
        return NO_THINKING
    efforts = ("low", "high", "max")
    read_as = (("medium", "high"), ("xhigh", "high"))  # "minimal→low, medium/xhigh→high" (api-docs)
    if wire == "anthropic":
        return ThinkingCaps(
            switch_only=True, default_on=True, efforts=efforts, efforts_read_as=read_as, earlier_reasoning="tool_turns"
        )
    if wire not in ("", "openai"):
        return ThinkingCaps(sent_on="Chat Completions (--provider deepseek) and the Messages wire", default_on=True)
    return ThinkingCaps(
        reasoning_content=True,
        default_on=True,
        efforts=efforts,
        efforts_read_as=read_as,
        forced_tool_choice=False,
        earlier_reasoning="tool_turns",
    )


def _kimi_caps(m: str, wire: str) -> ThinkingCaps:
    if not m.startswith(("kimi-k2.6", "kimi-k2.7", "kimi-k3")):
        return NO_THINKING
    if wire not in ("", "openai"):
        return ThinkingCaps(sent_on="Chat Completions (--provider moonshot)", default_on=True)
    return ThinkingCaps(
        reasoning_content=True,
        default_on=True,
        keep_all=True,
        earlier_reasoning="kept",
        efforts=("low", "medium", "high"),
        effort_with_thinking=False,
    )


def openai_reasons(model: str) -> bool:
    """Whether ``model`` is one of OpenAI's reasoning models (gpt-5*, the o-series, codex)."""
    return bool(_OPENAI_REASONING.match(model.strip().lower()))


def _openai_caps(model: str, wire: str) -> ThinkingCaps:
    """OpenAI's reasoning items: ``reasoning.context`` (not sent) defaults to ``all_turns`` from GPT-5.6
    on, to ``current_turn`` before (reasoning facts, section 2). ``reasoning.effort`` goes out on the
    Responses API only: low, medium and high everywhere; minimal (its least) on GPT-5, none (no
    reasoning) from GPT-5.1 on, xhigh from GPT-5.2 on; the o-series always reasons."""
    found = _GPT.match(model)
    version = (int(found[1]), int(found[2] or 0)) if found else (0, 0)
    earlier: EarlierReasoning = "kept" if version >= (5, 6) else "stripped"
    if not openai_reasons(model):
        return ThinkingCaps(earlier_reasoning=earlier)
    if wire != "responses":
        return ThinkingCaps(earlier_reasoning=earlier, effort_only=True)
    off = None if version < (5, 0) else "minimal" if version < (5, 1) else "none"
    extra = ("minimal",) if off == "minimal" else ("xhigh",) if version >= (5, 2) else ()
    efforts = tuple(e for e in EFFORTS if e in (*OPENAI_EFFORTS, *extra))
    return ThinkingCaps(earlier_reasoning=earlier, efforts=efforts, effort_only=True, off_effort=off)
