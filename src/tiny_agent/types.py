"""Plain value types shared by every layer: content blocks, messages, usage, tools, prompts.

The message model follows Anthropic's shape (a message is a role plus content blocks) because it is
the richer of the two wire formats: OpenAI's tool messages map onto it one to one. These are pure
values; ids, ordering in a session and storage belong to the context engine and the store.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "INVALID_JSON_KEY",
    "REASONING_BLOCKS",
    "Block",
    "CachePlan",
    "Entry",
    "Message",
    "ModelResponse",
    "OnProviderEvent",
    "Prompt",
    "ProviderEvent",
    "ReasoningBlock",
    "RedactedThinkingBlock",
    "RetryNotice",
    "Role",
    "TextBlock",
    "TextDelta",
    "ThinkingBlock",
    "ThinkingDelta",
    "ToolResultBlock",
    "ToolSpec",
    "ToolUseBlock",
    "Usage",
    "Wire",
    "block_from_dict",
    "message_from_dict",
]

Role = Literal["user", "assistant"]
Wire = str
"""A wire format's name ("anthropic": Anthropic Messages, "openai": OpenAI Chat Completions, ...): a key
of ``providers.wire.WIRES``, where each wire's object says what differs by wire."""

INVALID_JSON_KEY = "__invalid_json__"
"""Key of a tool call's input when the model's arguments were not a JSON object; holds the raw text,
so the tool layer can tell the model instead of the loop crashing."""


@dataclass(frozen=True)
class TextBlock:
    """Plain text, from the user or the model."""

    text: str
    type: Literal["text"] = "text"
    phase: str = ""  # the Responses API's, replayed as received

    def to_dict(self) -> dict[str, Any]:
        return {"type": "text", "text": self.text, **({"phase": self.phase} if self.phase else {})}


@dataclass(frozen=True)
class ToolUseBlock:
    """The model asks for a tool to run. ``id`` pairs it with its result."""

    id: str
    name: str
    input: Mapping[str, Any]
    type: Literal["tool_use"] = "tool_use"

    def to_dict(self) -> dict[str, Any]:
        return {"type": "tool_use", "id": self.id, "name": self.name, "input": dict(self.input)}


@dataclass(frozen=True)
class ToolResultBlock:
    """What a tool returned (or why it refused), sent back to the model in the next user message."""

    tool_use_id: str
    content: str
    is_error: bool = False
    type: Literal["tool_result"] = "tool_result"

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": "tool_result",
            "tool_use_id": self.tool_use_id,
            "content": self.content,
            "is_error": self.is_error,
        }


@dataclass(frozen=True)
class ThinkingBlock:
    """A model's extended thinking (Anthropic), with the signature that binds it to its prefix. Sent
    back byte-exact, in place: never edited, reordered, filtered or marked for the cache."""

    thinking: str
    signature: str
    type: Literal["thinking"] = "thinking"

    def to_dict(self) -> dict[str, Any]:
        return {"type": "thinking", "thinking": self.thinking, "signature": self.signature}


@dataclass(frozen=True)
class RedactedThinkingBlock:
    """Thinking the provider encrypted (Anthropic's ``redacted_thinking``): opaque, sent back as received."""

    data: str
    type: Literal["redacted_thinking"] = "redacted_thinking"

    def to_dict(self) -> dict[str, Any]:
        return {"type": "redacted_thinking", "data": self.data}


@dataclass(frozen=True)
class ReasoningBlock:
    """A model's reasoning on an OpenAI-style wire, kept raw: Chat Completions' ``reasoning_content``
    (DeepSeek, Kimi) in ``text``, or a Responses API reasoning item exactly as received in ``item``
    (its id, ``encrypted_content`` and ``summary``). ``model`` is the model that produced it: encrypted
    reasoning can only be read by the model that wrote it."""

    text: str = ""
    item: Mapping[str, Any] | None = None
    model: str = ""
    type: Literal["reasoning"] = "reasoning"

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"type": "reasoning", "text": self.text}
        if self.item is not None:
            data["item"] = dict(self.item)
        if self.model:
            data["model"] = self.model
        return data


Block = TextBlock | ToolUseBlock | ToolResultBlock | ThinkingBlock | RedactedThinkingBlock | ReasoningBlock
REASONING_BLOCKS = (ThinkingBlock, RedactedThinkingBlock, ReasoningBlock)
"""The kinds of block that hold a model's reasoning rather than its answer."""


def block_from_dict(data: Mapping[str, Any]) -> Block:
    """Inverse of ``Block.to_dict``; raises ValueError on an unknown block type."""
    kind = data.get("type")
    if kind == "text":
        return TextBlock(str(data["text"]), phase=str(data.get("phase") or ""))
    if kind == "tool_use":
        return ToolUseBlock(str(data["id"]), str(data["name"]), dict(data.get("input") or {}))
    if kind == "tool_result":
        return ToolResultBlock(str(data["tool_use_id"]), str(data.get("content", "")), bool(data.get("is_error")))
    if kind == "thinking":
        return ThinkingBlock(str(data.get("thinking", "")), str(data.get("signature", "")))
    if kind == "redacted_thinking":
        return RedactedThinkingBlock(str(data["data"]))
    if kind == "reasoning":
        item = dict(data["item"]) if isinstance(data.get("item"), Mapping) else None
        return ReasoningBlock(str(data.get("text", "")), item, str(data.get("model", "")))
    raise ValueError(f"unknown content block type: {kind!r}")


@dataclass(frozen=True)
class Message:
    """One turn of the conversation: a role and its content blocks, in order."""

    role: Role
    content: tuple[Block, ...]

    @staticmethod
    def user(text: str) -> Message:
        return Message("user", (TextBlock(text),))

    @staticmethod
    def assistant(text: str) -> Message:
        return Message("assistant", (TextBlock(text),))

    @property
    def text(self) -> str:
        """All text blocks joined; tool blocks are left out."""
        return "\n".join(b.text for b in self.content if isinstance(b, TextBlock))

    @property
    def tool_uses(self) -> list[ToolUseBlock]:
        return [b for b in self.content if isinstance(b, ToolUseBlock)]

    @property
    def tool_results(self) -> list[ToolResultBlock]:
        return [b for b in self.content if isinstance(b, ToolResultBlock)]

    def to_dict(self) -> dict[str, Any]:
        return {"role": self.role, "content": [b.to_dict() for b in self.content]}


def message_from_dict(data: Mapping[str, Any]) -> Message:
    """Inverse of ``Message.to_dict``."""
    role = data["role"]
    if role not in ("user", "assistant"):
        raise ValueError(f"unknown role: {role!r}")
    content = data["content"]
    if isinstance(content, str):
        return Message(role, (TextBlock(content),))
    return Message(role, tuple(block_from_dict(b) for b in content))


def _add(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else a + b


@dataclass(frozen=True)
class Usage:
    """Token usage of one model call, normalised across providers.

    ``input_tokens`` is the WHOLE prompt, cached tokens included, whatever the provider's convention
    (Anthropic reports uncached input only; the adapter adds the cache counts back). A field is
    ``None`` when the provider did not say, never a made-up zero.
    """

    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    details: Mapping[str, Any] = field(default_factory=dict)
    """The provider's raw usage object, for what the normalised fields do not carry."""
    reasoning_tokens: int | None = None
    """Of ``output_tokens``, those the model spent reasoning (Anthropic's ``thinking_tokens``, OpenAI's
    ``reasoning_tokens``): billed as output, already counted in ``output_tokens``."""

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            _add(self.input_tokens, other.input_tokens),
            _add(self.output_tokens, other.output_tokens),
            _add(self.cache_read_tokens, other.cache_read_tokens),
            _add(self.cache_write_tokens, other.cache_write_tokens),
            reasoning_tokens=_add(self.reasoning_tokens, other.reasoning_tokens),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "details": dict(self.details),
            **({"reasoning_tokens": self.reasoning_tokens} if self.reasoning_tokens is not None else {}),
        }

    @staticmethod
    def from_dict(data: Mapping[str, Any]) -> Usage:
        def count(key: str) -> int | None:
            value = data.get(key)
            return value if isinstance(value, int) and not isinstance(value, bool) else None

        details = data.get("details")
        return Usage(
            count("input_tokens"),
            count("output_tokens"),
            count("cache_read_tokens"),
            count("cache_write_tokens"),
            dict(details) if isinstance(details, Mapping) else {},
            count("reasoning_tokens"),
        )

    @property
    def uncached_input_tokens(self) -> int | None:
        """Input billed at the full rate: total minus cache reads and writes."""
        if self.input_tokens is None:
            return None
        return self.input_tokens - (self.cache_read_tokens or 0) - (self.cache_write_tokens or 0)


@dataclass(frozen=True)
class ToolSpec:
    """What the model is told about a tool: its name, what it does, and a JSON schema for its input."""

    name: str
    description: str
    input_schema: Mapping[str, Any]


@dataclass(frozen=True)
class CachePlan:
    """Where the prompt-cache breakpoints go. Anchors that do not move: tools, system, a sealed turn.

    Providers with explicit markers (Anthropic) place one ``cache_control`` per anchor; providers
    with automatic prefix caching ignore the plan but still profit from its stable-first order.
    """

    tools: bool = True
    system: bool = True
    message_indices: tuple[int, ...] = ()
    """Indices into ``Prompt.messages`` whose last block gets a breakpoint."""


@dataclass(frozen=True)
class Prompt:
    """One provider-neutral request: what the model will see this turn, stable parts first.

    ``system`` holds blocks in order of stability: the base system prompt, then the pinned
    constraints. ``messages`` is the rendered window (summary first if compacted), already legal.
    """

    system: tuple[str, ...]
    tools: tuple[ToolSpec, ...]
    messages: tuple[Message, ...]
    cache: CachePlan = CachePlan()
    tool_choice: Literal["auto", "none"] = "auto"
    """``"none"`` forbids tool calls (used by the summary call) without changing the tool prefix."""
    max_tokens: int | None = None
    """Cap on output tokens; None leaves the provider profile's default."""
    previous_response_id: str | None = None
    """The id of the previous answer, for providers that explain a cache miss against it (Anthropic's
    cache diagnostics); not part of the prompt's text."""
    tool_grammar: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """Narrowed input schemas by tool name (for example ``path`` limited to the workspace's real
    files), used only to constrain decoding where a provider supports it (the local model's JSON
    tool mode). Never rendered into the prompt text, so the cached prefix does not change with it."""
    cache_key: str | None = None
    """The conversation's cache routing key (OpenAI's ``prompt_cache_key``), for providers that take
    one; not part of the prompt's text."""
    omit: frozenset[str] = frozenset()
    """Request fields the model refused earlier in the session (a 400 named them): not sent again."""
    path_terms: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    """What each file on offer holds: its words' stems, counted (``providers.words.terms`` of its
    head), so a guide can offer the file a request's words are in. Like ``tool_grammar``, decoding
    only: never rendered."""


@dataclass(frozen=True)
class ModelResponse:
    """What one model call produced, normalised."""

    message: Message
    usage: Usage
    stop_reason: str
    """"end_turn", "tool_use", "max_tokens", "refusal", or the provider's own word when it has no equivalent."""
    model: str
    prefill_ms: float | None = None
    """Time the server spent reading the prompt, where it reports it (llama.cpp ``timings``)."""
    response_id: str | None = None
    provider_miss: str | None = None
    """The provider's own reason for a cache miss, where it gives one (Anthropic's cache diagnostics)."""
    refused: tuple[tuple[str, str], ...] = ()
    """(field, the error) of each request field the model refused with a 400 and the adapter sent the
    request again without: the engine leaves them out of the session's later requests."""


@dataclass(frozen=True)
class TextDelta:
    """A piece of the answer's text as it streams in."""

    text: str


@dataclass(frozen=True)
class ThinkingDelta:
    """A piece of the reply's reasoning as it streams in (thinking, reasoning_content or a summary)."""

    text: str


@dataclass(frozen=True)
class RetryNotice:
    """A provider call failed in a way a retry can fix; the next attempt starts after ``wait_seconds``."""

    attempt: int
    """The attempt that failed, 1-based."""
    max_attempts: int
    """0 for a resend that is not a retry (a field the model refused, left out)."""
    wait_seconds: float
    reason: str
    """What failed, in one line (``429 rate_limit_error``, ``connection reset``, ...)."""


@dataclass(frozen=True)
class ProviderNote:
    text: str
    """A line an adapter says once (another model's encrypted reasoning left out after a switch)."""


ProviderEvent = TextDelta | ThinkingDelta | RetryNotice | ProviderNote
OnProviderEvent = Callable[[ProviderEvent], None]


@dataclass(frozen=True)
class Entry:
    """One record of a session's append-only log, as the store keeps it.

    ``kind`` names what ``body`` holds (user input, a model response, a tool result, a compaction
    marker, a call record, a pin or config change); ``body`` is plain JSON. ``seq`` is the entry's
    position in its session (0, 1, 2, ... without gaps) and the only order; ``id`` is unique across
    sessions; ``at`` is a Unix timestamp, for people, never for ordering.
    """

    kind: str
    body: Mapping[str, Any]
    id: str
    seq: int
    at: float
