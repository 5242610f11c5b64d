"""What a fault test needs per wire: the adapter pointed at the fault server, and answers in its form."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.faults import wire
from tiny_agent.providers.anthropic.adapter import AnthropicProvider
from tiny_agent.providers.openai.adapter import OpenAICompatProvider
from tiny_agent.redaction import REDACTED
from tiny_agent.types import Message, ModelResponse, Prompt, ProviderEvent, TextDelta, ToolSpec

SRC = Path(__file__).resolve().parents[2] / "src"

KEY = "sk-ant-test-SECRET123"
"""The fake API key every fault test uses; it must never appear in anything shown or stored."""

SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
TOOLS = (ToolSpec("read_file", "Read a file.", SCHEMA),)
FAST = {"retry-after-ms": "10"}
"""A retry-after both ways of waiting honour, short enough for a test."""


@dataclass(frozen=True)
class Kit:
    name: str
    key_env: str
    model: str = ""
    """The model asked for (the wire's usual one when empty)."""

    @property
    def label(self) -> str:
        return f"{self.name}-{self.model}" if self.model else self.name

    def provider(self, url: str, **kwargs: Any) -> AnthropicProvider | OpenAICompatProvider:
        kwargs.setdefault("max_retries", 2)
        kwargs.setdefault("timeout", 5.0)
        kwargs.setdefault("retry_backoff", 0.01)
        common = {"api_key": KEY, "key_env": self.key_env, **kwargs}
        if self.name == "anthropic":
            return AnthropicProvider(model=self.model or "claude-haiku-4-5", base_url=url, **common)
        return OpenAICompatProvider(model=self.model or "gpt-4o-mini", base_url=f"{url}/v1", **common)

    def path(self) -> str:
        return "/v1/messages" if self.name == "anthropic" else "/v1/chat/completions"

    def text(self, text: str = "Hello!", stop: str | None = None, usage: Any = None) -> dict[str, Any]:
        if self.name == "anthropic":
            return wire.anthropic_message([wire.text_block(text)], usage, stop or "end_turn")
        return wire.openai_completion(text, finish_reason=stop or "stop", usage=usage)

    def tool(self, name: str, tool_input: Any, stop: str | None = None) -> dict[str, Any]:
        """A tool call; on the OpenAI wire a ``tool_input`` that is not a str is sent as JSON text."""
        if self.name == "anthropic":
            return wire.anthropic_message([wire.tool_use(name, tool_input)], None, stop or "tool_use")
        arguments = tool_input if isinstance(tool_input, str) else json.dumps(tool_input)
        return wire.openai_completion(
            None, tool_calls=[wire.function_call(name, arguments)], finish_reason=stop or "tool_calls"
        )

    def refusal(self) -> dict[str, Any]:
        if self.name == "anthropic":
            return wire.anthropic_message([wire.text_block("I can't help with that.")], None, "refusal")
        return wire.openai_completion(None, refusal="I can't help with that.")

    def empty(self) -> dict[str, Any]:
        if self.name == "anthropic":
            return wire.anthropic_message([], None, "end_turn")
        return wire.openai_completion("", finish_reason="stop")

    def error(self, kind: str, message: str) -> dict[str, Any]:
        if self.name == "anthropic":
            return {"type": "error", "error": {"type": kind, "message": message}, "request_id": "req_011CSHoEeqs"}
        return {"error": {"message": message, "type": kind, "param": None, "code": None}}

    def error_event(self, kind: str, message: str) -> wire.Event:
        if self.name == "anthropic":
            return wire.anthropic_error_event(kind, message)
        return wire.openai_error_chunk(kind, message)

    def events(self, answer: dict[str, Any]) -> list[wire.Event]:
        if self.name == "anthropic":
            return wire.anthropic_events(answer)
        return wire.openai_chunks(answer)


KITS = (Kit("anthropic", "ANTHROPIC_API_KEY"), Kit("openai", "OPENAI_API_KEY"))
ADAPTER_KITS = (*KITS, Kit("openai", "OPENAI_API_KEY", "gpt-5.6"))
"""The adapters' fault cases also run on a GPT-5.6 body (explicit cache marks and options)."""


def body(provider: AnthropicProvider | OpenAICompatProvider, tools: bool = False) -> dict[str, Any]:
    return provider.render(Prompt(("Be brief.",), TOOLS if tools else (), (Message.user("What is in README.md?"),)))


class Events(list[ProviderEvent]):
    """An ``on_event`` that keeps what it hears."""

    def __call__(self, event: ProviderEvent) -> None:
        self.append(event)

    @property
    def text(self) -> str:
        return "".join(e.text for e in self if isinstance(e, TextDelta))


def cli_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """An environment for ``python -m tiny_agent`` that sees nothing of this machine's user: its own
    home and XDG folders under ``tmp_path``, this checkout's source, a wide terminal."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "XDG_STATE_HOME": str(home / "state"),
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_CONFIG_HOME": str(home / "config"),
        "PYTHONPATH": str(SRC),
        "COLUMNS": "200",
        **extra,
    }


def assert_no_secret(*values: object) -> None:
    for value in values:
        assert KEY not in str(value), f"the key leaked into {value!r}"


def same(a: ModelResponse, b: ModelResponse) -> bool:
    return (a.message, a.stop_reason, a.model, a.prefill_ms, a.usage, dict(a.usage.details)) == (
        b.message,
        b.stop_reason,
        b.model,
        b.prefill_ms,
        b.usage,
        dict(b.usage.details),
    )


__all__ = [
    "ADAPTER_KITS",
    "FAST",
    "KEY",
    "KITS",
    "REDACTED",
    "Events",
    "Kit",
    "assert_no_secret",
    "body",
    "cli_env",
    "same",
]
