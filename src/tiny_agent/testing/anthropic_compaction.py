"""Anthropic's server-side compaction (``compact_20260112``) on the billing fake
(``BillingFake(compaction=ServerCompaction())``), as the docs describe it (reasoning facts, section 5).

A request that asks for it is read as the API reads it: every message block before the newest
compaction block is dropped (a failed one, ``content: null``, is a no-op and drops nothing), and each
compaction block's ``encrypted_content`` must be the one the server minted for it. When what is left
passes the trigger, the reply opens with a new compaction block (a summary of fixed length;
``encrypted_content`` minted here), and the model goes on from it alone. The request is billed as two
passes by the cache simulator: the compaction pass reads the request's cached prefix, the message
pass starts the new one (system, tools, the block). The reply's top-level usage is the message
pass's; ``usage.iterations`` has both. A trigger below 50,000 is a 400 with the API's wording.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tiny_agent.providers.cache_bill import SimCall
from tiny_agent.providers.cache_sim import Simulator
from tiny_agent.providers.prefix import Counter, block_tokens
from tiny_agent.providers.wire import prefix_blocks
from tiny_agent.testing.tasks import summary_text

__all__ = ["Compacted", "ServerCompaction", "compaction_errors"]

EDIT = "compact_20260112"
BETA = "compact-2026-01-12"
DEFAULT_TRIGGER = 150_000
MIN_TRIGGER = 50_000

compaction_errors = {
    "trigger": "context_management.edits.{k}.trigger.value: Input should be greater than or equal to 50000",
    "encrypted": "messages.{i}.content.{j}: Invalid `encrypted_content` in `compaction` block",
    "beta": "context_management: Extra inputs are not permitted",
}
"""The 400s' texts (plausible: the docs quote none)."""


@dataclass(frozen=True)
class Compacted:
    """The compaction block a reply opens with, and the body its message pass reads (ending in the
    assistant message the block opens; a failed block leaves the conversation before it)."""

    block: Mapping[str, Any]
    body: Mapping[str, Any]
    tokens_before: int


@dataclass
class ServerCompaction:
    summary_words: int = 400
    """Words of every summary: the same length each time, so two runs compare."""
    fail_every: int = 0
    """Every n-th compaction fails (``content: null``; 0: none does)."""
    key: bytes = b"tiny-agent-compaction-server"
    compactions: int = 0
    failures: int = 0
    rejected: list[str] = field(default_factory=list)

    def admit(
        self, body: Mapping[str, Any], betas: str, counter: Counter
    ) -> tuple[str | None, dict[str, Any], Compacted | None]:
        """(the 400's message or None, the body the model reads, the compaction this reply runs or None)."""
        error, seen = self._read(body)
        if error is None and "context_management" in body and BETA not in betas:
            error = compaction_errors["beta"]
        if error is not None:
            self.rejected.append(error)
            return error, dict(body), None
        trigger = _trigger(body)
        if trigger is None:
            return None, seen, None
        tokens = sum(b.tokens for b in prefix_blocks(seen, "anthropic", counter))
        if tokens <= trigger:
            return None, seen, None
        self.compactions += 1
        failed = bool(self.fail_every) and self.compactions % self.fail_every == 0
        self.failures += failed
        summary = None if failed else summary_text(self.summary_words)
        block = {"type": "compaction", "content": summary, "encrypted_content": self._mint(summary)}
        opener = {"role": "assistant", "content": [block]}  # the model goes on from the block
        after = [*seen.get("messages", []), opener] if failed else [opener]
        return None, seen, Compacted(block, {**seen, "messages": after}, tokens)

    def bill(
        self, sim: Simulator, at: float, body: Mapping[str, Any], compacted: Compacted, output: int
    ) -> tuple[SimCall, tuple[SimCall, SimCall]]:
        """The request billed as its two passes: their sum, and the passes."""
        summary = compacted.block.get("content")
        written = block_tokens({"type": "text", "text": summary}) if summary else 1
        first = sim.send(at, body, written, label="compaction")
        second = sim.send(at, compacted.body, output)
        summed = dataclasses.replace(
            second,
            input_tokens=first.input_tokens + second.input_tokens,
            cache_read=first.cache_read + second.cache_read,
            cache_write_5m=first.cache_write_5m + second.cache_write_5m,
            cache_write_1h=first.cache_write_1h + second.cache_write_1h,
            output_tokens=first.output_tokens + second.output_tokens,
            usd=first.usd + second.usd,
        )
        return summed, (first, second)

    @staticmethod
    def reply(reply: dict[str, Any], compacted: Compacted, passes: tuple[SimCall, SimCall]) -> dict[str, Any]:
        """``reply`` opened by the block; its usage the message pass's, both passes in ``iterations``."""
        first, second = passes
        iterations = [_iteration("compaction", first), _iteration("message", second)]
        usage = {**reply["usage"], **_counts(second), "iterations": iterations}
        return {**reply, "content": [dict(compacted.block), *reply["content"]], "usage": usage}

    def _read(self, body: Mapping[str, Any]) -> tuple[str | None, dict[str, Any]]:
        edits = (body.get("context_management") or {}).get("edits") or []
        for k, edit in enumerate(edits):
            value = (edit.get("trigger") or {}).get("value") if edit.get("type") == EDIT else None
            if isinstance(value, int) and value < MIN_TRIGGER:
                return compaction_errors["trigger"].format(k=k), dict(body)
        messages = [dict(m) for m in body.get("messages") or []]
        newest: tuple[int, int] | None = None
        for i, message in enumerate(messages):
            content = message.get("content")
            for j, block in enumerate(content if isinstance(content, list) else ()):
                if not isinstance(block, Mapping) or block.get("type") != "compaction":
                    continue
                if not hmac.compare_digest(str(block.get("encrypted_content")), self._mint(block.get("content"))):
                    return compaction_errors["encrypted"].format(i=i, j=j), dict(body)
                if block.get("content") is not None:
                    newest = (i, j)
        if newest is None:
            return None, dict(body)
        i, j = newest  # "the API drops every message block before the compaction block"
        kept = [{**messages[i], "content": messages[i]["content"][j:]}, *messages[i + 1 :]]
        return None, {**body, "messages": kept}

    def _mint(self, summary: str | None) -> str:
        text = "failed" if summary is None else "summary:" + summary
        return "cmp." + hmac.new(self.key, text.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()[:32]


def _trigger(body: Mapping[str, Any]) -> int | None:
    edits = (body.get("context_management") or {}).get("edits") or []
    edit = next((e for e in edits if isinstance(e, Mapping) and e.get("type") == EDIT), None)
    if edit is None:
        return None
    value = (edit.get("trigger") or {}).get("value")
    return value if isinstance(value, int) else DEFAULT_TRIGGER


def _counts(call: SimCall) -> dict[str, int]:
    return {
        "input_tokens": call.uncached,
        "cache_read_input_tokens": call.cache_read,
        "cache_creation_input_tokens": call.cache_write,
        "output_tokens": call.output_tokens,
    }


def _iteration(kind: str, call: SimCall) -> dict[str, Any]:
    creation = {"ephemeral_5m_input_tokens": call.cache_write_5m, "ephemeral_1h_input_tokens": call.cache_write_1h}
    return {"type": kind, **_counts(call), "cache_creation": creation}
