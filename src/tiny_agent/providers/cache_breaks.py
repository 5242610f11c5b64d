"""Why a request would not read the cache the request before it wrote: every cause, with its place.

Given two consecutive request bodies of one wire, ``prefix_breaks`` names what differs in the order
a prefix cache reads it (tools, system, messages), each cause as a stable rule id with the JSON path
and, in a text, the first character that differs: ``tools[1].description``, ``system[0]`` at
character 356, ``messages[2].content[0]``, ``model``, ``thinking``, ``tool_choice``; then whether
the newest breakpoint can still reach what the previous request wrote (Anthropic's lookback of 20
blocks). Each cause carries the tokens it costs: the previous request's prefix from the level it
invalidates on (the estimator's count, ``prefix.block_tokens``).

What each wire adds (which top-level settings invalidate which level, where a tool's parts are, which
blocks may not carry a marker) is a ``WireBreaks`` table in ``providers/<wire>/breaks.py``
(``providers.break_settings``). ``lint``
reports these; the view marks the first one in the two requests it draws.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from tiny_agent.providers.break_settings import Level, Setting, WireBreaks, consequence, earliest, wire_breaks
from tiny_agent.providers.cache_rules import CacheRules
from tiny_agent.providers.first_change import first_change, first_difference
from tiny_agent.providers.prefix import PrefixBlock, breakpoints, canonical
from tiny_agent.providers.thinking_caps import thinking_caps
from tiny_agent.providers.wire import prefix_blocks
from tiny_agent.types import Wire

__all__ = [
    "Break",
    "Setting",
    "WireBreaks",
    "prefix_breaks",
    "setting_value",
    "shared_blocks",
    "unmarkable",
    "wire_breaks",
]


@dataclass(frozen=True)
class Break:
    """One cause of a miss between two requests."""

    rule: str
    path: str
    message: str
    tokens_lost: int
    """Estimated tokens of the previous request's cached prefix this cause makes unreadable."""
    character: int | None = None
    """The first character that differs, in the text at ``path`` (or its JSON)."""
    excerpt: str = ""
    follows: str = ""
    """The path of the setting whose change brought this one (``Setting.follows``), where both changed."""
    level: Level | None = None
    """Where a setting's change invalidates the prefix from: its own level, or for a cause the earliest
    of the settings that changed with it (DeepSeek's switch, with the effort it dropped: the tools)."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def prefix_breaks(
    before: Mapping[str, Any], after: Mapping[str, Any], wire: Wire, rules: CacheRules | None = None
) -> list[Break]:
    """Every cause ``after`` would not read what ``before`` cached, in prefix order (settings first);
    empty when ``after`` extends ``before``. With ``rules``, also the lookback (a breakpoint too far
    past the entry the previous request wrote); without, the model's default thinking is ``after``'s
    model's on this wire."""
    table = wire_breaks(wire)
    old, new = prefix_blocks(before, wire), prefix_blocks(after, wire)
    model = str(after.get("model") or "")
    thinks = rules.thinks_by_default if rules is not None else thinking_caps(wire, model, wire).default_on
    found = _settings(before, after, table, old, thinks)
    out = [b for b in found if rules is None or b.path not in rules.unkeyed_settings]
    if any(b.rule == "thinking-changed" for b in found):
        # The switch takes the earlier turns' reasoning with it: that is its cause, not a message's.
        old, new = prefix_blocks(_without_reasoning(before), wire), prefix_blocks(_without_reasoning(after), wire)
    shared = shared_blocks(old, new)
    if shared < len(old):
        out.extend(_block_change(before, after, old, new, shared, table))
    if rules is not None and rules.lookback_blocks > 1 and shared >= len(old):
        out.extend(_lookback(before, after, old, new, shared, rules))
    return out


_REASONING = ("thinking", "redacted_thinking", "reasoning")


def _without_reasoning(body: Mapping[str, Any]) -> dict[str, Any]:
    """``body`` without its turns' reasoning (thinking blocks, reasoning_content, reasoning items)."""

    def kept(item: Any) -> Any:
        if not isinstance(item, Mapping):
            return item
        out = {k: v for k, v in item.items() if k != "reasoning_content"}
        if isinstance(out.get("content"), list):
            out["content"] = [b for b in out["content"] if not (isinstance(b, Mapping) and b.get("type") in _REASONING)]
        return out

    key = "input" if isinstance(body.get("input"), list) else "messages"
    items = body.get(key)
    if not isinstance(items, list):
        return dict(body)
    return {**body, key: [kept(i) for i in items if not (isinstance(i, Mapping) and i.get("type") in _REASONING)]}


def shared_blocks(old: Sequence[PrefixBlock], new: Sequence[PrefixBlock]) -> int:
    """Leading blocks with the same prefix key."""
    shared = 0
    for a, b in zip(old, new, strict=False):
        if a.key != b.key:
            break
        shared += 1
    return shared


def unmarkable(blocks: Sequence[PrefixBlock], wire: str) -> list[PrefixBlock]:
    """Blocks that carry a cache marker the API does not take there (a thinking block, empty text)."""
    kinds = wire_breaks(wire).unmarkable_types
    out = []
    for block in blocks:
        data = block.data if isinstance(block.data, Mapping) else {}
        empty_text = data.get("type") == "text" and not str(data.get("text") or "").strip()
        if block.ttl and (data.get("type") in kinds or empty_text):
            out.append(block)
    return out


def setting_value(body: Mapping[str, Any], setting: Setting, thinks_by_default: bool = False) -> Any:
    """The value of ``setting`` in ``body``. Left out, it is None, or on a model that thinks unasked
    (``CacheRules.thinks_by_default``) what the wire's table says it then means (``Setting.absent``)."""
    found = _get(body, setting.path)
    return (setting.absent if thinks_by_default else None) if found is None else found


def _get(data: Any, dotted: str) -> Any:
    for key in dotted.split("."):
        if not isinstance(data, Mapping):
            return None
        data = data.get(key)
    return data


def _lost(old: Sequence[PrefixBlock], level: Level, start: int = 0) -> int:
    """Tokens of ``old`` from ``start``, or from the first block of ``level`` on."""
    first = start
    if level != "tools":
        first = next((i for i, b in enumerate(old) if _level(b) in _LATER[level]), len(old))
    return sum(b.tokens for b in old[first:])


_LATER: dict[Level, tuple[Level, ...]] = {
    "tools": ("tools", "system", "messages"),
    "system": ("system", "messages"),
    "messages": ("messages",),
}


def _level(block: PrefixBlock) -> Level:
    if block.path.startswith("tools"):
        return "tools"
    return "system" if _is_system(block) else "messages"


def _is_system(block: PrefixBlock) -> bool:
    data = block.data if isinstance(block.data, Mapping) else {}
    return block.path.startswith("system") or data.get("role") in ("system", "developer")


def _settings(
    before: Mapping[str, Any], after: Mapping[str, Any], table: WireBreaks, old: list[PrefixBlock], thinks: bool
) -> list[Break]:
    changed = {s.path: s for s in table.settings if setting_value(before, s, thinks) != setting_value(after, s, thinks)}
    out = []
    for setting in sorted(changed.values(), key=lambda s: s.follows in changed):  # the causes first
        was, now = _get(before, setting.path), _get(after, setting.path)
        shown = f"{json.dumps(was, ensure_ascii=False)} -> {json.dumps(now, ensure_ascii=False)}"
        root = changed.get(setting.follows)
        brought = [s for s in changed.values() if s.follows == setting.path]
        level = earliest([setting.level, *(s.level for s in brought)])
        why = f" ({setting.why})" if setting.why else ""
        with_root = f" with {root.what}" if root is not None else ""
        with_them = f" ({', '.join(s.what for s in brought)} too)" if level != setting.level else ""
        message = f"{setting.what} changed{with_root}{why}{with_them}: {consequence(level)}"
        follows = root.path if root is not None else ""
        lost = _lost(old, level)
        out.append(Break(setting.rule, setting.path, message, lost, None, shown[:160], follows, level))
    return out


def _block_change(
    before: Mapping[str, Any],
    after: Mapping[str, Any],
    old: list[PrefixBlock],
    new: list[PrefixBlock],
    at: int,
    table: WireBreaks,
) -> list[Break]:
    block = old[at]
    lost = sum(b.tokens for b in old[at:])
    if _level(block) == "tools" or (at < len(new) and _level(new[at]) == "tools"):
        return _tool_changes(before.get("tools") or [], after.get("tools") or [], table, sum(b.tokens for b in old))
    if at >= len(new) or any(b.key == new[at].key for b in old[at + 1 :]):
        what = "system block" if _is_system(block) else "message"
        return [
            Break(
                "message-removed" if what == "message" else "system-changed",
                block.path,
                f"a {what} of the previous request is gone: the cache misses from here on",
                lost,
            )
        ]
    character, was, now = first_change(block.data, new[at].data)
    excerpt = f"{_around(was, character)!r} -> {_around(now, character)!r}"
    if _is_system(block) or _is_system(new[at]):
        message = f"the system prompt changed at character {character}: the cache misses from here on"
        return [Break("system-changed", new[at].path, message, lost, character, excerpt)]
    message = f"an earlier message was edited at character {character}: the cache misses from here on"
    return [Break("message-edited", new[at].path, message, lost, character, excerpt)]


def _tool_changes(old: Sequence[Any], new: Sequence[Any], table: WireBreaks, lost: int) -> list[Break]:
    names_old = [str(_get(t, table.tool_name)) for t in old]
    names_new = [str(_get(t, table.tool_name)) for t in new]
    out = [
        Break("tool-added", f"tools[{i}]", f"tool {n} added: the whole prefix is written again", lost)
        for i, n in enumerate(names_new)
        if n not in names_old
    ]
    out += [
        Break("tool-removed", f"tools[{i}]", f"tool {n} removed: the whole prefix is written again", lost)
        for i, n in enumerate(names_old)
        if n not in names_new
    ]
    for i, tool in enumerate(new):
        name = names_new[i]
        if name not in names_old:
            continue
        was = old[names_old.index(name)]
        for field, rule, what in (
            (table.tool_description, "tool-description-changed", "description"),
            (table.tool_schema, "tool-schema-changed", "input schema"),
        ):
            a, b = _get(was, field), _get(tool, field)
            if a != b:
                x, y = (a, b) if isinstance(a, str) and isinstance(b, str) else (canonical(a), canonical(b))
                at = first_difference(x, y)
                message = f"tool {name}'s {what} changed at character {at}: the whole prefix is written again"
                out.append(
                    Break(rule, f"tools[{i}].{field}", message, lost, at, f"{_around(x, at)!r} -> {_around(y, at)!r}")
                )
    if not out and names_old != names_new:
        message = "same tools, another order: the order is part of the cached prefix"
        out.append(Break("tools-reordered", "tools", message, lost, excerpt=f"{names_old} -> {names_new}"))
    return out


def _lookback(
    before: Mapping[str, Any],
    after: Mapping[str, Any],
    old: list[PrefixBlock],
    new: list[PrefixBlock],
    shared: int,
    rules: CacheRules,
) -> list[Break]:
    """A read walks back from each breakpoint over ``lookback_blocks`` blocks (the breakpoint itself
    first): it reads all the previous request wrote when one reaches its newest entry (an earlier
    one, such as the system prompt's, is a shorter read)."""
    written = [i for i, _ in breakpoints(before, old) if i < shared]
    marks = [i for i, _ in breakpoints(after, new)]
    if not written or not marks:
        return []
    reach, entry = rules.lookback_blocks, written[-1]
    if any(m - reach < entry <= m for m in marks):
        return []
    newest = marks[-1]
    message = (
        f"the breakpoint at block {newest} is {newest - entry} blocks past the previous request's entry "
        f"(block {entry}, {old[entry].path}); the cache looks back only {reach}: add a breakpoint nearer"
    )
    return [Break("breakpoint-lookback", new[newest].path, message, sum(b.tokens for b in old[: entry + 1]))]


def _around(text: str, at: int) -> str:
    return text[max(0, at - 20) : at + 30]
