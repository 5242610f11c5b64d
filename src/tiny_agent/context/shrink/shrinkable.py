"""What compaction, clearing and the policies need from the engine: ``Shrinkable`` (``Context`` is one)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal, Protocol

from tiny_agent.context.config import ContextConfig
from tiny_agent.context.entries import TypedEntry
from tiny_agent.context.render import Rendered
from tiny_agent.context.shrink.compaction import Compaction, CompactionHooks
from tiny_agent.context.state import State
from tiny_agent.context.tokens import TokenLedger
from tiny_agent.providers.base import Provider
from tiny_agent.types import Entry, ModelResponse, Prompt

__all__ = ["Shrinkable"]


class Shrinkable(Protocol):
    """What compaction and clearing need from the engine (``Context`` is one)."""

    clock: Callable[[], float]
    decided: bool
    hooks: CompactionHooks | None

    @property
    def state(self) -> State: ...

    @property
    def config(self) -> ContextConfig: ...

    @property
    def ledger(self) -> TokenLedger: ...

    def append(self, values: Sequence[TypedEntry]) -> list[Entry]: ...

    def system_blocks(self) -> tuple[str, ...]: ...

    @property
    def tools(self) -> tuple[Any, ...]: ...

    def prompt(
        self, *, tool_choice: Literal["auto", "none"] = "auto", compaction: Compaction | None = None
    ) -> Prompt: ...

    def call(self, provider: Provider, prompt: Prompt, purpose: str) -> ModelResponse: ...

    def context_tokens(self, provider: Provider | None = None, prompt: Prompt | None = None) -> int: ...

    def context_window(self, provider: Provider | None = None) -> int: ...

    def legal(self, prompt: Prompt, provider: Provider, *, sending: bool = True) -> Rendered: ...

    def threshold(self, provider: Provider | None = None) -> int: ...
