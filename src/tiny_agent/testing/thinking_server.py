"""The thinking rules of the model APIs, enforced by the billing fake (``BillingFake(thinking=...)``).

Anthropic (reasoning facts, section 1): every reply opens with a thinking block (or, every
``redact_every``-th reply, a ``redacted_thinking`` block) whose signature is an HMAC of the block
and, on a preserved-thinking model, of its prefix (system + tools + every message and block before
it, ``cache_control`` left out, since breakpoints move). A request is answered 400, with the API's
own text, when a block was modified, when its prefix changed (unless ``drop_block`` is sent with its
beta header: the block and every later one are then dropped and listed in ``input_transformations``),
when the final assistant message of a tool loop does not start with thinking, when a thinking block
carries ``cache_control``, or when tool_choice forces a tool. Thinking is billed as output
(``output_tokens_details.thinking_tokens``, inside ``output_tokens``).

DeepSeek and Kimi (section 6): replies carry ``reasoning_content``; a tool-call assistant message sent
back without it is a 400 (``completion_tokens_details.reasoning_tokens`` bills it).
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tiny_agent.providers.prefix import block_tokens
from tiny_agent.testing.claude_models import thinking_type

__all__ = ["BINDING_BETA", "Admitted", "ThinkingRules", "binding_refused", "errors"]

BINDING_BETA = "thinking-binding-controls-2026-08-01"
_THINKING = ("thinking", "redacted_thinking")

errors = {
    "final": (
        "messages.{i}.content.0.type: Expected `thinking` or `redacted_thinking`, but found `{found}`. When "
        "`thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the "
        "lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from "
        "previous turns. To avoid this requirement, disable `thinking`."
    ),
    "modified": (
        "messages.{i}.content.{j}: `thinking` or `redacted_thinking` blocks in the latest assistant message "
        "cannot be modified. These blocks must remain as they were in the original response."
    ),
    "signature": "messages.{i}.content.{j}: Invalid `signature` in `thinking` block",
    "bound": (
        "messages.{i}.content.{j}: Invalid `signature` in `thinking` block. The block is bound to a different "
        'conversation. Remove the block, or set `thinking.block_binding.prefix_mismatch_behavior` to "drop_block".'
    ),
    "disabled": (
        "messages.{i}.content.{j}: When thinking is disabled, an `assistant` message in the final position cannot "
        "contain `thinking`. To use thinking blocks, enable `thinking` in your request."
    ),
    "cache_control": "messages.{i}.content.{j}.thinking.cache_control: Extra inputs are not permitted",
    "forced": "Thinking may not be enabled when tool_choice forces tool use.",
    "binding_beta": "thinking.block_binding: Extra inputs are not permitted",
    "deepseek": (
        "Missing `reasoning_content` field in the assistant message at message index {i}. The `reasoning_content` "
        "in the thinking mode must be passed back to the API."
    ),
    "moonshot": "thinking is enabled but reasoning_content is missing in assistant tool call message at index {i}",
    "moonshot_forced": "tool_choice specified is incompatible with thinking enabled",
    "moonshot_both": "cannot specify both 'thinking' and 'reasoning_effort'",
}
"""The APIs' texts (reasoning facts, sections 1 and 6; DeepSeek's own wording is not quoted there)."""


@dataclass(frozen=True)
class Admitted:
    """A request the rules let through: the body the model reads (dropped blocks taken out), what was
    dropped, or the 400's message."""

    body: Mapping[str, Any]
    error: str | None = None
    transformations: tuple[Mapping[str, Any], ...] = ()


@dataclass
class ThinkingRules:
    preserved: bool = True
    """Blocks are bound to their prefix (Fable 5.1, Opus 5.5, Sonnet 5.5, ...)."""
    words: int = 40
    """Words of each reply's thinking."""
    redact_every: int = 0
    """Every n-th reply's thinking comes back as ``redacted_thinking`` (0: never)."""
    extra: str = ""
    """Text at the end of every reply's thinking (a credential a model thought about, say)."""
    key: bytes = b"tiny-agent-thinking-server"
    rejected: list[str] = field(default_factory=list)
    """The message of every 400 the rules answered, in order."""
    transformations: list[list[Mapping[str, Any]]] = field(default_factory=list)
    """What each admitted Anthropic request had dropped (``input_transformations``)."""
    replies: int = 0

    # -- Anthropic ----------------------------------------------------------------------------

    def admit_anthropic(self, body: Mapping[str, Any], betas: str) -> Admitted:
        error, admitted = self._anthropic(body, betas)
        if error is not None:
            self.rejected.append(error)
            return Admitted(body, error)
        self.transformations.append(list(admitted.transformations))
        return admitted

    def _anthropic(self, body: Mapping[str, Any], betas: str) -> tuple[str | None, Admitted]:
        config = _config(body)
        kind, refused_model = thinking_type(body)
        if refused_model is not None:
            return refused_model, Admitted(body)
        on = kind in ("enabled", "adaptive")
        binding = config.get("block_binding")
        if (refused := binding_refused(body, betas)) is not None:
            return refused, Admitted(body)
        drop = isinstance(binding, Mapping) and binding.get("prefix_mismatch_behavior") == "drop_block"
        choice = body.get("tool_choice")
        if on and isinstance(choice, Mapping) and choice.get("type") in ("any", "tool"):
            return errors["forced"], Admitted(body)
        messages = [dict(m) for m in body.get("messages") or []]
        latest = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=-1)
        dropped: list[Mapping[str, Any]] = []
        invalid_from = False
        for i, message in enumerate(messages):
            content = message.get("content")
            if message.get("role") != "assistant" or not isinstance(content, list):
                continue
            kept = []
            for j, block in enumerate(content):
                if not isinstance(block, Mapping) or block.get("type") not in _THINKING:
                    kept.append(block)
                    continue
                if "cache_control" in block:
                    return errors["cache_control"].format(i=i, j=j), Admitted(body)
                whole, bound = self._verify(body, messages, i, j, block)
                if not whole:
                    return errors["modified" if i == latest else "signature"].format(i=i, j=j), Admitted(body)
                if invalid_from or not bound:
                    if not drop:
                        return errors["bound"].format(i=i, j=j), Admitted(body)
                    invalid_from = True  # "that block and every later thinking block are invalid"
                    dropped.append({"type": "thinking_block_dropped", "message": i, "block": j})
                    continue
                kept.append(block)
            message["content"] = kept
        final = _final_assistant(body.get("messages") or [])
        if final is not None:
            i, first = final
            if on and first not in _THINKING:
                return errors["final"].format(i=i, found=first), Admitted(body)
            if not on and config.get("type") == "disabled" and first in _THINKING:
                return errors["disabled"].format(i=i, j=0), Admitted(body)
        seen = [{**m, "content": m["content"] or [{"type": "text", "text": "(dropped)"}]} for m in messages]
        return None, Admitted({**body, "messages": seen}, None, tuple(dropped))

    def think_anthropic(self, body: Mapping[str, Any], opened: bool = False) -> tuple[dict[str, Any], int]:
        """The thinking block of this reply, signed to the request it answers, and its tokens; ``opened``:
        the body ends with the reply's own opening (a server compaction block), which the thinking follows."""
        self.replies += 1
        text = _thought(self.replies, self.words) + self.extra
        tokens = block_tokens({"type": "thinking", "thinking": text})
        messages = list(body.get("messages") or [])
        end = (len(messages) - 1, len(messages[-1]["content"])) if opened else (len(messages), 0)
        prefix = self._prefix(body, messages, *end)
        if self.redact_every and self.replies % self.redact_every == 0:
            data = f"rd.{self._mac(prefix)}.{self._mac('redacted' + text)}"
            return {"type": "redacted_thinking", "data": data}, tokens
        config = _config(body)
        shown = "" if config.get("display") == "omitted" else text
        signature = f"sg.{self._mac(prefix)}.{self._mac('thinking' + shown)}"
        return {"type": "thinking", "thinking": shown, "signature": signature}, tokens

    def _verify(
        self, body: Mapping[str, Any], messages: Sequence[Mapping[str, Any]], i: int, j: int, block: Mapping[str, Any]
    ) -> tuple[bool, bool]:
        """(the block is as it was produced, its prefix is the one it was produced on)."""
        if block.get("type") == "thinking":
            token, content = str(block.get("signature", "")), "thinking" + str(block.get("thinking", ""))
        else:
            token, content = str(block.get("data", "")), ""
        parts = token.split(".")
        if len(parts) != 3:
            return False, False
        if block.get("type") == "thinking" and not hmac.compare_digest(parts[2], self._mac(content)):
            return False, False
        if not self.preserved:
            return True, True
        return True, hmac.compare_digest(parts[1], self._mac(self._prefix(body, messages, i, j)))

    def _prefix(self, body: Mapping[str, Any], messages: Sequence[Mapping[str, Any]], i: int, j: int) -> str:
        head = [_unmarked(m) for m in messages[:i]]
        if i < len(messages):
            content = messages[i].get("content")
            head.append({"role": messages[i].get("role"), "content": _unmarked_blocks(content)[:j]})
        else:
            head.append({"role": "assistant", "content": []})
        system = body.get("system")
        tools = [_strip(t) for t in body.get("tools") or []]
        shown = _unmarked_blocks(system) if isinstance(system, list) else system
        return json.dumps([shown, tools, head], sort_keys=True, separators=(",", ":"))

    def _mac(self, text: str) -> str:
        return hmac.new(self.key, text.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()[:24]

    # -- DeepSeek / Kimi ----------------------------------------------------------------------

    def admit_openai(self, body: Mapping[str, Any], provider: str) -> str | None:
        """The 400 a thinking DeepSeek or Kimi model answers ``body`` with, or None."""
        error = self._openai(body, provider)
        if error is not None:
            self.rejected.append(error)
        return error

    def _openai(self, body: Mapping[str, Any], provider: str) -> str | None:
        config = _config(body)
        kimi = _KIMI_RULES.get(provider, False)  # Kimi refuses more than DeepSeek, in its own words
        if kimi and body.get("thinking") is not None and "reasoning_effort" in body:
            return errors["moonshot_both"]
        if config.get("type") == "disabled":
            return None
        choice = body.get("tool_choice")
        if kimi and (isinstance(choice, Mapping) or choice == "required"):
            return errors["moonshot_forced"]
        for i, message in enumerate(body.get("messages") or []):
            if message.get("role") == "assistant" and message.get("tool_calls") and "reasoning_content" not in message:
                return errors["moonshot" if kimi else "deepseek"].format(i=i)
        return None

    def think_openai(self, body: Mapping[str, Any]) -> tuple[str, int]:
        config = _config(body)
        if config.get("type") == "disabled":
            return "", 0
        self.replies += 1
        text = _thought(self.replies, self.words) + self.extra
        return text, block_tokens({"type": "text", "text": text})


_WORDS = "the next step reads one more file and keeps its lines in mind before the answer"
"""What a thought is made of (a stand-in: only its length and its bytes matter)."""


def binding_refused(body: Mapping[str, Any], betas: str) -> str | None:
    """The 400 for ``thinking.block_binding`` sent without its beta header, on any endpoint that takes
    ``thinking`` (``count_tokens`` too); None when the body is fine."""
    return errors["binding_beta"] if "block_binding" in _config(body) and BINDING_BETA not in betas else None


def _config(body: Mapping[str, Any]) -> Mapping[str, Any]:
    config = body.get("thinking")
    return config if isinstance(config, Mapping) else {}


def _thought(number: int, words: int) -> str:
    pool = _WORDS.split()
    return f"Reply {number}: " + " ".join(pool[k % len(pool)] for k in range(words))


def _strip(block: Any) -> Any:
    return {k: v for k, v in block.items() if k != "cache_control"} if isinstance(block, Mapping) else block


def _unmarked_blocks(content: Any) -> Any:
    return [_strip(b) for b in content] if isinstance(content, list) else content


def _unmarked(message: Mapping[str, Any]) -> dict[str, Any]:
    return {"role": message.get("role"), "content": _unmarked_blocks(message.get("content"))}


def _final_assistant(messages: Sequence[Any]) -> tuple[int, str] | None:
    if len(messages) < 2:
        return None
    last, before = messages[-1], messages[-2]
    content = last.get("content")
    if not isinstance(content, list) or not any(
        isinstance(b, Mapping) and b.get("type") == "tool_result" for b in content
    ):
        return None
    blocks = before.get("content")
    # The rule holds for what follows a server compaction block.
    blocks = (
        [b for b in blocks if isinstance(b, Mapping) and b.get("type") != "compaction"]
        if isinstance(blocks, list)
        else []
    )
    if before.get("role") != "assistant" or not blocks:
        return None
    return len(messages) - 2, str(blocks[0].get("type"))


_KIMI_RULES = {"moonshot": True}
"""Profiles whose server also refuses both ``thinking`` and ``reasoning_effort``, and a forced tool."""
