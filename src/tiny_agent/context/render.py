"""One render per model call: the body, its check, its size and its fingerprint from one pass.

A conversation is re-sent in full every turn, but between two turns only its end changes. So the
renderer keeps, position by position, what it made of each message the last time (the message
object itself, the wire messages the adapter made of it, the hash chain up to it, the measured
length up to it, and the wire check's state before it), finds how far the new prompt's messages
are the very same objects, and does the work only from there on. Each message is serialised and
hashed once (``tokens.Serialized``); what the turn costs grows with what was appended, not with
the window. A compaction or a clearing rebuilds the window, and the next render starts over.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tiny_agent.context.cache import chain_step, head_fingerprint
from tiny_agent.context.tokens import Serialized, head_chars
from tiny_agent.providers.base import Provider
from tiny_agent.providers.check import WireCheck
from tiny_agent.providers.profile import ProviderProfile
from tiny_agent.providers.thinking import OFF, thinking_key
from tiny_agent.types import Message, Prompt, ReasoningBlock, ToolSpec

__all__ = ["Rendered", "Renderer", "holds_server_compaction"]


@dataclass(frozen=True)
class Rendered:
    """A prompt made into the exact body that will be sent, with what the engine knows of it."""

    prompt: Prompt
    body: dict[str, Any]
    problems: tuple[str, ...]
    """What the wire would refuse (empty: legal)."""
    chars: int
    """The estimator's measure of the prompt (``tokens.prompt_chars``)."""
    fingerprint: Mapping[str, Any]
    chain: tuple[str, ...]
    """The message hash chain, one hash per message (``cache.message_chain``)."""
    marks: int
    """``cache_control`` breakpoints in the body."""
    wire: str = ""
    """The wire ``body`` is written in."""

    @property
    def legal(self) -> bool:
        return not self.problems


@dataclass
class _Head:
    tools: tuple[ToolSpec, ...] | None = None
    system: tuple[str, ...] | None = None
    fingerprint: dict[str, Any] = field(default_factory=dict)
    chars: int = 0


class Renderer:
    """Renders prompts for one conversation; ``renders`` counts the passes (one per model call)."""

    def __init__(self, texts: Serialized | None = None) -> None:
        self.texts = texts or Serialized()
        self.renders = 0
        self._messages: list[Message] = []
        self._chain: list[str] = []
        self._chars: list[int] = []
        """Measured length of the messages up to and including each position."""
        self._cuts: list[int] = []
        """The newest server compaction's position up to each position (0: none)."""
        self._provider: Provider | None = None
        self._profile: ProviderProfile | None = None
        self._wire: list[list[dict[str, Any]]] = []
        self._names: dict[str, str] = {}
        self._check: WireCheck | None = None
        self._head = _Head()

    def render(self, prompt: Prompt, provider: Provider) -> Rendered:
        self.renders += 1
        profile = provider.profile
        # Another profile renders messages anew (a replay switches the settings a call was sent with).
        if provider is not self._provider or profile != self._profile or self._check is None:
            self._provider, self._profile = provider, profile
            self._wire, self._names, self._check = [], {}, profile.checker()
        messages = prompt.messages
        same = _same_prefix(self._messages, messages)
        self._extend(messages, same)
        start = min(same, len(self._wire))
        if start == 0:
            self._names = {}  # the tool names of a window that is gone must not name this one's results
        del self._wire[start:]
        self._check.rewind(start)
        for position in range(start, len(messages)):
            wire = provider.wire_messages(messages[position], self._names)
            self._wire.append(wire)
            self._check.feed(position, wire)
        body = provider.assemble(prompt, self._wire)
        head = self._head_of(prompt)
        chain = tuple(self._chain)
        count = len(messages)
        # The server drops what comes before its newest compaction: the request's size starts there.
        cut = self._cuts[-1] if self._cuts else 0
        chars = head.chars + (self._chars[-1] - (self._chars[cut - 1] if cut else 0) + count - cut + 1 if count else 0)
        fingerprint = {**head.fingerprint, "messages": count, "chain": chain[-1] if chain else ""}
        sent = profile.sent_thinking(body)  # as rendered into the body, not as asked for
        if sent != OFF:  # the model's default is written without a key
            fingerprint["thinking"] = thinking_key(sent)
        if prompt.tool_choice != "auto":  # a setting of the request, which a redraw from the log renders again
            fingerprint["tool_choice"] = prompt.tool_choice
        problems, marks = profile.finish_check(self._check, body)
        return Rendered(prompt, body, tuple(problems), chars, fingerprint, chain, marks, profile.wire)

    def _extend(self, messages: Sequence[Message], same: int) -> None:
        """The chain and the measured lengths for ``messages``, reusing the first ``same`` positions."""
        del self._messages[same:], self._chain[same:], self._chars[same:], self._cuts[same:]
        previous = self._chain[-1] if self._chain else ""
        total = self._chars[-1] if self._chars else 0
        cut = self._cuts[-1] if self._cuts else 0
        for message in messages[same:]:
            text = self.texts.text(message)
            previous = chain_step(previous, text)
            total += len(text)
            cut = len(self._messages) if holds_server_compaction(message) else cut
            self._messages.append(message)
            self._chain.append(previous)
            self._chars.append(total)
            self._cuts.append(cut)

    def _head_of(self, prompt: Prompt) -> _Head:
        head = self._head
        if head.tools is not prompt.tools or head.system != prompt.system:
            self._head = head = _Head(
                prompt.tools, prompt.system, head_fingerprint(prompt), head_chars(prompt.system, prompt.tools)
            )
        return head


def holds_server_compaction(message: Message) -> bool:
    """Whether ``message`` holds a server's compaction, which the wire sends from on (a failed one,
    ``content`` null, stands for nothing)."""
    for block in message.content:
        item = block.item if isinstance(block, ReasoningBlock) else None
        if item is not None and item.get("type") == "compaction" and item.get("content", "") is not None:
            return True
    return False


def _same_prefix(before: Sequence[Message], now: Sequence[Message]) -> int:
    """How many leading positions hold the very same message objects."""
    count = min(len(before), len(now))
    for i in range(count):
        if before[i] is not now[i]:
            return i
    return count
