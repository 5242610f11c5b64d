"""Tools the model may call, and the toolbox that runs them without ever crashing the loop.

A tool is a name, a description written for the model, a JSON schema for its input and a function
from that input to text. ``Toolbox.run`` turns every way a call can go wrong (unknown tool, arguments
that are not JSON or do not match the schema, a refusal, a bug in the tool) into an error
``ToolResultBlock`` the model can read and act on. Only ``BaseException``s that are not
``Exception``s (Ctrl-C, ``SystemExit``) get through.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from tiny_agent.text import has_surrogates, scrub
from tiny_agent.types import INVALID_JSON_KEY, ToolResultBlock, ToolSpec, ToolUseBlock

__all__ = ["Tool", "ToolFailure", "Toolbox"]

logger = logging.getLogger(__name__)


_MAX_SHOWN = 200
"""Longest echo of model input inside an error message; the model already has the full text."""


@dataclass(frozen=True)
class Tool:
    """A function the model can call."""

    name: str
    description: str
    """What the tool does and when to use it, written for the model."""
    input_schema: dict[str, Any]
    """JSON schema (Draft 2020-12) of the input object; checked before ``fn`` runs."""
    fn: Callable[[dict[str, Any]], str]
    """Gets the validated input; returns text for the model or raises ``ToolFailure``."""
    grammar: Callable[[], Mapping[str, Any] | None] | None = None
    """A narrower input schema for this turn (say, ``path`` limited to files that exist), used only to
    constrain a model's decoding where the provider supports it; None or a None result: no narrowing.
    The tool still validates against ``input_schema``."""
    source: str = ""
    """Where the call goes when that is not this process: an MCP server's name (the per-turn line shows it)."""
    terms: Callable[[], Mapping[str, Mapping[str, int]]] | None = None
    """What each path this tool offers holds, as counted word stems (``Prompt.path_terms``), so a
    guide can offer the file a request's words are in; None: the tool offers no files."""

    @property
    def spec(self) -> ToolSpec:
        """What the model is told about this tool."""
        return ToolSpec(self.name, self.description, self.input_schema)


class ToolFailure(Exception):
    """Raised by a tool to refuse or fail; the message goes to the model as an error result."""


_NOTE_ROOM = 2_000
"""Beyond the limit, room for the line a tool adds about its own cut (the workspace tools size
their output themselves and say how to read on)."""


class Toolbox:
    """Tools by name, in registration order. That order is part of the prompt-cache prefix."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        self._validators: dict[str, Draft202012Validator] = {}
        self.max_output_chars: int | None = None
        """A result longer than this is cut (with a line that says so): an MCP server or a Python
        tool may return anything, and one result must not overflow the window. None: never cut."""
        for tool in tools:
            self.add(tool)

    def add(self, tool: Tool) -> None:
        """Register a tool. Raises ValueError on a duplicate name, SchemaError on a broken schema."""
        if tool.name in self._tools:
            raise ValueError(f"duplicate tool name: {tool.name!r}")
        Draft202012Validator.check_schema(tool.input_schema)
        self._tools[tool.name] = tool
        self._validators[tool.name] = Draft202012Validator(tool.input_schema)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._tools)

    @property
    def specs(self) -> tuple[ToolSpec, ...]:
        """Specs in registration order (stable, so the cached prompt prefix stays valid)."""
        return tuple(tool.spec for tool in self._tools.values())

    def grammar(self) -> dict[str, Mapping[str, Any]]:
        """This turn's narrowed input schemas by tool name, for the tools that offer one. A grammar
        that raises is left out (and logged): it only narrows decoding, so the turn goes on."""
        out: dict[str, Mapping[str, Any]] = {}
        for tool in self._tools.values():
            if tool.grammar is None:
                continue
            try:
                schema = tool.grammar()
            except Exception:
                logger.warning("grammar of %s failed; its full input schema applies", tool.name, exc_info=True)
                continue
            if schema is not None:
                out[tool.name] = schema
        return out

    def source(self, name: str) -> str:
        """Where a call of ``name`` goes ("" for a tool of this process, or one that does not exist)."""
        tool = self._tools.get(name)
        return tool.source if tool is not None else ""

    def path_terms(self) -> dict[str, Mapping[str, int]]:
        """What each offered file holds (``Tool.terms``), merged over the tools; one that raises is
        left out (and logged), like a grammar."""
        out: dict[str, Mapping[str, int]] = {}
        for tool in self._tools.values():
            if tool.terms is None:
                continue
            try:
                out.update(tool.terms())
            except Exception:
                logger.warning("the file words of %s failed; the guide goes by names", tool.name, exc_info=True)
        return out

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    def run(self, call: ToolUseBlock) -> ToolResultBlock:
        """Run one tool call. Never raises for anything the model sent or a tool did wrong."""
        return self.bounded(call, self._run(call))

    def bounded(self, call: ToolUseBlock, result: ToolResultBlock) -> ToolResultBlock:
        """``result`` as it may enter the window: valid text, cut past ``max_output_chars``."""
        if has_surrogates(result.content):  # a tool's bytes that were not UTF-8: storable, sendable
            result = ToolResultBlock(call.id, scrub(result.content), is_error=result.is_error)
        limit = self.max_output_chars
        if limit is None or len(result.content) <= limit + _NOTE_ROOM:
            return result
        cut = (
            f"{result.content[:limit]}\n[cut: {call.name} returned {len(result.content):,} characters, more than a "
            f"tool result may take in this window ({limit:,}); ask it for less if you need the rest]"
        )
        return ToolResultBlock(call.id, cut, is_error=result.is_error)

    def _run(self, call: ToolUseBlock) -> ToolResultBlock:
        tool = self._tools.get(call.name)
        if tool is None:
            available = ", ".join(self._tools) or "(none)"
            return _error(call, f"unknown tool {call.name!r}; available tools: {available}")
        if not isinstance(call.input, Mapping):
            return _error(call, f"arguments for {tool.name} must be a JSON object, got {_shorten(repr(call.input))}")
        if INVALID_JSON_KEY in call.input:
            raw = _shorten(str(call.input[INVALID_JSON_KEY]))
            return _error(
                call, f"arguments were not valid JSON: {raw}\nsend the arguments for {tool.name} as one JSON object"
            )
        args = dict(call.input)
        problems = _problems(self._validators[tool.name], args)
        if problems:
            lines = "\n".join(f"  {p}" for p in problems)
            return _error(call, f"invalid arguments for {tool.name}:\n{lines}\nfix them and call {tool.name} again")
        try:
            result = tool.fn(args)
        except ToolFailure as exc:
            return _error(call, str(exc) or f"{tool.name} failed")
        except Exception as exc:
            logger.exception("tool %s raised on call %s", tool.name, call.id)
            return _error(call, f"{tool.name} failed: {type(exc).__name__}: {exc}")
        if not isinstance(result, str):
            logger.error("tool %s returned %s, not str", tool.name, type(result).__name__)
            return _error(call, f"{tool.name} failed: it returned {type(result).__name__}, not text")
        return ToolResultBlock(call.id, result)


def _error(call: ToolUseBlock, message: str) -> ToolResultBlock:
    return ToolResultBlock(call.id, message, is_error=True)


def _shorten(text: str) -> str:
    if len(text) <= _MAX_SHOWN:
        return text
    return f"{text[:_MAX_SHOWN]}... ({len(text) - _MAX_SHOWN} more characters)"


def _problems(validator: Draft202012Validator, args: dict[str, Any]) -> list[str]:
    """Every schema violation as one short line, ``location: what is wrong``, sorted by location."""
    errors = sorted(validator.iter_errors(args), key=lambda e: [str(p) for p in e.absolute_path])
    lines: list[str] = []
    for error in errors:
        lines.extend(_describe(error))
    return lines


def _describe(error: ValidationError) -> list[str]:
    where = [str(p) for p in error.absolute_path]
    if error.validator == "required" and isinstance(error.validator_value, list):
        # jsonschema names the missing property only in the message; locate it there.
        missing = [n for n in error.validator_value if error.message == f"{n!r} is a required property"]
        return [_line([*where, *missing[:1]], error.message)]
    if (
        error.validator == "additionalProperties"
        and isinstance(error.instance, Mapping)
        and isinstance(error.schema, Mapping)
    ):
        allowed = list(error.schema.get("properties", {}))
        extra = [k for k in error.instance if k not in allowed]
        hint = f"allowed: {', '.join(allowed)}" if allowed else "no arguments are allowed"
        if extra:
            return [_line([*where, str(k)], f"unexpected argument ({hint})") for k in extra]
    return [_line(where, error.message)]


def _line(where: list[str], message: str) -> str:
    return f"{'/'.join(where) or '(arguments)'}: {_shorten(message)}"
