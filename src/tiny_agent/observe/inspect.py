"""What the next request holds, layer by layer: the answer behind ``/context``.

Layers come in cache order (tools, system, pins, then the window's messages); each has its size
in tokens (estimated at the calibrated ratio; the total is counted exactly where the provider can)
and whether the prompt cache should read it, that is, whether it is part of the prefix the
previous request already sent.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from tiny_agent.context.cache import fingerprint, message_chain, shared_layers
from tiny_agent.context.engine import Context
from tiny_agent.context.shrink.compaction import SUMMARY_HEADER
from tiny_agent.providers.base import Provider
from tiny_agent.types import Message, TextBlock, ToolResultBlock, ToolUseBlock

__all__ = ["ContextReport", "Layer", "inspect_context"]


@dataclass(frozen=True)
class Layer:
    name: str
    tokens: int
    detail: str
    cached: bool
    """Part of the prefix the previous request sent: the cache should read it (within its lifetime)."""


@dataclass(frozen=True)
class ContextReport:
    layers: list[Layer]
    total: int
    """Tokens of the whole next request (exact where the provider counts, else estimated)."""
    threshold: int
    window: int

    @property
    def cached_tokens(self) -> int:
        return sum(layer.tokens for layer in self.layers if layer.cached)

    def lines(self) -> list[str]:
        rows = [f"  {'*' if x.cached else ' '} {x.name:<12} {x.tokens:>7,}  {x.detail}" for x in self.layers]
        left = self.threshold - self.total
        where = f"{left:,} tokens before compaction" if left > 0 else f"{-left:,} tokens past the compaction threshold"
        return [
            *rows,
            f"  total {self.total:,} of a {self.window:,}-token window; threshold {self.threshold:,} ({where})",
            f"  * = the cache should read it: about {self.cached_tokens:,} tokens already sent in the previous request",
        ]


def inspect_context(context: Context, provider: Provider | None = None) -> ContextReport:
    prompt = context.prompt()
    estimate = context.ledger.estimate
    ratio = context.ledger.chars_per_token
    before = context.previous_request(provider)
    shared: list[str] = []
    shared_messages = 0
    if before is not None:
        chain = message_chain(prompt.messages, context.ledger.texts)
        shared, shared_messages = shared_layers(before.fingerprint, fingerprint(prompt, chain), chain, before.chain)
    tools_chars = len(json.dumps([{"n": t.name, "d": t.description, "s": dict(t.input_schema)} for t in prompt.tools]))
    layers = [
        Layer("tools", int(tools_chars / ratio), ", ".join(t.name for t in prompt.tools) or "-", "tools" in shared)
    ]
    pins = context.pins
    system = context.system
    layers.append(Layer("system", int(len(system) / ratio), f"{len(system):,} characters", "system" in shared))
    if pins:
        layers.append(Layer("pins", int(len(prompt.system[-1]) / ratio), f"{len(pins)} pinned", "pins" in shared))
    for index, message in enumerate(prompt.messages):
        name = "summary" if index == 0 and message.text.startswith(SUMMARY_HEADER) else f"#{index + 1} {message.role}"
        layers.append(Layer(name, estimate([message]), _describe(message), index < shared_messages))
    total = context.context_tokens(provider)
    return ContextReport(layers, total, context.threshold(provider), context.context_window(provider))


def _describe(message: Message) -> str:
    parts: list[str] = []
    for block in message.content:
        if isinstance(block, TextBlock):
            text = " ".join(block.text.split())
            parts.append(text[:60] + ("..." if len(text) > 60 else ""))
        elif isinstance(block, ToolUseBlock):
            args = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)[:30]}" for k, v in block.input.items())
            parts.append(f"{block.name}({args})")
        elif isinstance(block, ToolResultBlock):
            parts.append(f"{'error' if block.is_error else 'result'} {len(block.content):,} chars")
    return "; ".join(parts)
