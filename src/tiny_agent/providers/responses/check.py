"""The item rules of the Responses API, checked on the exact ``input`` before it is sent.

These are the failures Codex, the Agents SDK and the AI SDK's users report most (the exact texts
are the API's, ../shared/facts/reasoning.md section 2): a reasoning item without the item that
followed it, a ``function_call_output`` without its ``function_call`` (or the reverse), an ``rs_`` or
``msg_`` id the server never stored (``store: false``), a reasoning item without its ``summary``, a
function call whose id does not begin with ``fc``, a cache breakpoint on an output block or more
than four of them. The engine renders the whole input from its log, so each of these is a bug of
ours: the check finds it before the request leaves, and the test server refuses the same bodies.

``ResponsesCheck`` has the shape of the other wires' checks (``feed`` one neutral message's items
at a position, ``rewind``, ``finish``); it keeps each position's items and checks them whole at
``finish``, which is linear in the items and needs no fold state to take back.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = [
    "BREAKPOINT",
    "INPUT_PARTS",
    "ResponsesCheck",
    "breakpoint_problems",
    "check_input",
    "check_responses_body",
    "count_breakpoints",
]

BREAKPOINT = "prompt_cache_breakpoint"
INPUT_PARTS = frozenset({"input_text", "input_image", "input_file"})
"""Content blocks a breakpoint may go on (never an assistant's ``output_text``)."""


def check_input(items: Sequence[Mapping[str, Any]], *, store: bool = False) -> list[str]:
    """The item rules on a whole ``input``; the API's own words where it has them."""
    problems: list[str] = []
    calls: dict[str, int] = {}
    answered: set[str] = set()
    for n, item in enumerate(items):
        kind = item.get("type", "message")
        item_id = item.get("id")
        if kind == "reasoning":
            following = next((x for x in items[n + 1 :] if x.get("type") != "reasoning"), None)
            if following is None or not _follows_reasoning(following):
                problems.append(
                    f"Item '{item_id}' of type 'reasoning' was provided without its required following item."
                )
            if "summary" not in item:
                problems.append(f"Input[{n}] missing required field `summary`")
        if kind == "item_reference" or (
            not store
            and isinstance(item_id, str)
            and (item_id.startswith("msg_") or (item_id.startswith("rs_") and not item.get("encrypted_content")))
        ):
            problems.append(
                f"Item with id '{item_id}' not found. Items are not persisted when `store` is set to false. "
                "Try again with `store` set to true, or remove this item from your input."
            )
        if kind == "function_call":
            if isinstance(item_id, str) and not item_id.startswith("fc"):
                problems.append(f"Input[{n}]: Expected an ID that begins with 'fc'")
            calls[str(item.get("call_id"))] = n
        elif kind == "function_call_output":
            call_id = str(item.get("call_id"))
            if call_id not in calls:
                problems.append(f"No tool call found for function call output with call_id {call_id}.")
            answered.add(call_id)
    problems.extend(f"No tool output found for function call {c}." for c in calls if c not in answered)
    if not items:
        problems.append("no input items")
    return problems


def _follows_reasoning(item: Mapping[str, Any]) -> bool:
    kind = item.get("type", "message")
    return kind in ("function_call", "compaction") or (kind == "message" and item.get("role") == "assistant")


def _parts(item: Mapping[str, Any]) -> list[Any]:
    content = item.get("content") if item.get("type", "message") == "message" else item.get("output")
    return content if isinstance(content, list) else []


def count_breakpoints(items: Iterable[Mapping[str, Any]]) -> int:
    """``prompt_cache_breakpoint`` marks on the items' content blocks (any kind of block)."""
    return sum(1 for item in items for p in _parts(item) if isinstance(p, Mapping) and BREAKPOINT in p)


def breakpoint_problems(items: Sequence[Mapping[str, Any]], max_marks: int) -> list[str]:
    """Marks only on input content blocks, and at most ``max_marks`` of them."""
    problems = [
        f"input[{n}].content[{j}]: prompt_cache_breakpoint is only allowed on input content blocks, not {p.get('type')}"
        for n, item in enumerate(items)
        for j, p in enumerate(_parts(item))
        if isinstance(p, Mapping) and BREAKPOINT in p and p.get("type") not in INPUT_PARTS
    ]
    marks = count_breakpoints(items)
    if marks > max_marks:
        problems.append(f"{marks} prompt_cache_breakpoint marks; at most {max_marks} are allowed")
    return problems


def check_responses_body(body: Mapping[str, Any], max_marks: int = 4) -> list[str]:
    """Every item rule on a whole ``responses.create`` body."""
    raw = body.get("input")
    items = [x for x in raw if isinstance(x, Mapping)] if isinstance(raw, list) else []
    return [*check_input(items, store=bool(body.get("store", True))), *breakpoint_problems(items, max_marks)]


class ResponsesCheck:
    """The incremental form the engine's renderer uses: one neutral message's items at a time."""

    def __init__(self) -> None:
        self._positions: list[list[Mapping[str, Any]]] = []

    def rewind(self, position: int) -> None:
        del self._positions[position:]

    def feed(self, position: int, wire: Sequence[Mapping[str, Any]]) -> None:
        if position != len(self._positions):
            raise ValueError(f"feed position {position} after {len(self._positions)} positions")
        self._positions.append(list(wire))

    def finish(self, marks: int = 0, max_marks: int = 4) -> list[str]:
        """The problems of the items fed so far (under ``store: false``, the renderer's only mode for
        items; the breakpoints of the whole body are counted by the caller into ``marks``)."""
        items = [item for group in self._positions for item in group]
        problems = check_input(items)
        if items and not _ends_with_input(items[-1]):
            problems.append("the last item must be a user message or a function_call_output")
        problems.extend(p for p in breakpoint_problems(items, max_marks) if "at most" not in p)
        if marks > max_marks:
            problems.append(f"{marks} prompt_cache_breakpoint marks; at most {max_marks} are allowed")
        return problems


def _ends_with_input(item: Mapping[str, Any]) -> bool:
    kind = item.get("type", "message")
    return kind == "function_call_output" or (kind == "message" and item.get("role") == "user")
