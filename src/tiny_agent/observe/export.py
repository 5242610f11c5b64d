"""A session out of the store: as JSON lines (everything, to move or archive it), or as the request
body of a wire format (the window the engine would send next: the newest summary, the pins, the turns
after its cut, in that wire's shape); and the JSON lines read back (``read_export``), checked entry
by entry, to go into another store."""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

from tiny_agent.context.engine import Context
from tiny_agent.context.entries import CallOpened
from tiny_agent.context.entry_codec import read
from tiny_agent.context.log import MemoryLog
from tiny_agent.context.render import holds_server_compaction
from tiny_agent.context.replayed import Unnamed
from tiny_agent.errors import ConfigError, UnreadableEntry
from tiny_agent.providers.adapters import wire_adapter
from tiny_agent.providers.base import Provider
from tiny_agent.providers.responses.items import cannot_read
from tiny_agent.providers.thinking import OFF, thinking_key
from tiny_agent.providers.wire import wire_of
from tiny_agent.store.base import SessionInfo
from tiny_agent.store.migrations import SCHEMA_VERSION
from tiny_agent.types import REASONING_BLOCKS, Block, Entry, Message, Prompt, ReasoningBlock
from tiny_agent.whatif.thinking import recorded_thinking

__all__ = ["EXPORT_FORMAT", "JSONL", "ExportFormat", "export_lines", "read_export"]

EXPORT_FORMAT = "tiny-agent-session"
JSONL = "jsonl"
ExportFormat = str
"""``jsonl``, or the name of a wire (``providers.wire.WIRES``) to export as one request body of it."""


def export_lines(
    info: SessionInfo, entries: Sequence[Entry], fmt: ExportFormat = JSONL, on_note: Callable[[str], None] | None = None
) -> Iterator[str]:
    """The session as lines of text. ``jsonl``: a header, then one entry per line (a fork's inherited
    entries included). A wire's name (``anthropic``, ``openai``, ...): one request body of that wire:
    the window up to its last user turn, that is the request that asked for the session's last answer
    (a body ending on the assistant's reply is not a request a wire takes, and ``lint`` says so). Not
    the whole log: after a compaction, preserved thinking is bound to the summary's prefix. On the
    session's own wire it is the request tiny-agent would send; on another, what that wire has no
    place for is left out, and the body may be refused where the model needs it back (a DeepSeek tool
    loop exported as ``anthropic`` loses its reasoning_content). ``on_note`` hears what the body leaves
    out: thinking settings the model does not take on that wire, reasoning it has no place for
    (another wire's), and, apart, encrypted reasoning items it has a place for but the model cannot
    read (another model's, after a switch), in the words a run uses."""
    if fmt == JSONL:
        header = {"format": EXPORT_FORMAT, "version": 1, "schema": SCHEMA_VERSION, "session": info.to_dict()}
        yield json.dumps(header, ensure_ascii=False)
        for e in entries:
            yield json.dumps({"seq": e.seq, "id": e.id, "kind": e.kind, "at": e.at, "body": e.body}, ensure_ascii=False)
        return
    note = on_note or (lambda _: None)
    context = Context(log=MemoryLog(entries))
    model = str(context.run_settings.get("model") or "unknown")
    messages = _up_to_last_user(context.window())
    adapter = _adapter(fmt, model, entries, context.run_settings, note)
    body = adapter.render(Prompt(context.system_blocks(), context.tools, messages))
    left, unread = left_out(adapter, messages)
    if unread:
        note(f"the body leaves out {cannot_read(adapter.profile.model, unread)}")
    if left:
        owner = _recorded_provider(entries) or model
        note(f"the body leaves out {left} ({owner}'s own; the {fmt} format takes none)")
    profile = adapter.profile
    for name, value in profile.wire_format.body_headers(body, profile.thinking_caps.interleaved_header).items():
        note(f"send the body with the header {name}: {value} (its fields need it)")
    yield json.dumps(body, ensure_ascii=False, indent=2)


def _adapter(
    fmt: ExportFormat, model: str, entries: Sequence[Entry], run: Mapping[str, Any], on_note: Callable[[str], None]
) -> Provider:
    """The adapter of ``fmt`` (only that wire's SDK is imported) with the session's settings, so the
    body is the one tiny-agent would send next: its output cap, cache lifetime and thinking settings
    (``whatif.thinking``), where the model takes them on that wire; else the wire's defaults."""
    options: dict[str, Any] = {"max_tokens": run["max_tokens"]} if isinstance(run.get("max_tokens"), int) else {}
    if isinstance(ttl := run.get("cache_ttl"), str):
        options.update(wire_of(fmt).adapter_options(ttl, False))  # type: ignore[arg-type]  # the adapter checks it
    typed = [(e, read(e)) for e in entries]
    thinking = recorded_thinking(typed, Unnamed.of((e.seq, v) for e, values in typed for v in values))
    plain = wire_adapter(fmt, model, **options)
    if thinking == OFF:
        return plain
    left = f"the body has no thinking settings (the session's: {thinking_key(thinking)})"
    elsewhere = plain.profile.thinking_caps.sent_on
    if elsewhere:  # settings of a model tiny-agent sends on another wire: none of them has a place here
        on_note(f"{left}: tiny-agent sends {model}'s on {elsewhere} only")
        return plain
    try:
        return wire_adapter(fmt, model, thinking=thinking, **options)
    except ConfigError as exc:
        on_note(f"{left}: {exc}")
    return plain


def left_out(adapter: Provider, messages: Sequence[Message]) -> tuple[str, Counter[str]]:
    """The reasoning blocks of ``messages`` that ``adapter`` renders nothing of, counted by kind
    (``3 reasoning_content texts``; "" when it renders them all), and apart from them, by the model
    that wrote them, those it would render were they its model's own (encrypted items another model
    wrote: the format has their place, the model cannot read them). A block is left out when its
    message renders the same without it: no wire's rules need naming here."""
    counts: Counter[str] = Counter()
    unread: Counter[str] = Counter()
    model = adapter.profile.model
    names: dict[str, str] = {}
    # The wire sends nothing before the newest server compaction: nothing there is left out by it.
    start = max((i for i, m in enumerate(messages) if holds_server_compaction(m)), default=0)
    for i, message in enumerate(messages):
        for block in message.content if i >= start else ():
            if not isinstance(block, REASONING_BLOCKS):
                continue
            without = adapter.wire_messages(_with(message, block, None), dict(names))
            if adapter.wire_messages(message, dict(names)) != without:
                continue
            if isinstance(block, ReasoningBlock) and block.model not in ("", model):
                own = adapter.wire_messages(_with(message, block, replace(block, model=model)), dict(names))
                if own != without:
                    unread[block.model] += 1
                    continue
            counts[_kind(block)] += 1
        adapter.wire_messages(message, names)
    return ", ".join(f"{n} {kind}{'s' if n > 1 else ''}" for kind, n in counts.items()), unread


def _with(message: Message, block: Block, instead: Block | None) -> Message:
    """``message`` with ``block`` replaced by ``instead`` (None: left out)."""
    content = (instead if b is block else b for b in message.content)
    return Message(message.role, tuple(b for b in content if b is not None))


def _kind(block: Block) -> str:
    if isinstance(block, ReasoningBlock):
        return f"{block.item.get('type')} item" if block.item is not None else "reasoning_content text"
    return f"{block.type} block"


def _recorded_provider(entries: Sequence[Entry]) -> str:
    """The endpoint of the session's newest call (``deepseek``, ``anthropic``); "" before any."""
    calls = [v for e in entries if e.kind == CallOpened.kind for v in read(e) if isinstance(v, CallOpened)]
    return calls[-1].provider if calls else ""


def _up_to_last_user(messages: Sequence[Message]) -> tuple[Message, ...]:
    """``messages`` without the assistant turn(s) after the last user message (tool results are user
    messages: a session cut during a tool call keeps them, and is asked for the next step)."""
    end = len(messages)
    while end and messages[end - 1].role == "assistant":
        end -= 1
    return tuple(messages[:end])


def read_export(lines: Iterable[str], source: str) -> tuple[SessionInfo, list[Entry]]:
    """The session a ``jsonl`` export holds, every entry checked as a resume would read it; a
    ``ConfigError`` naming ``source`` and the line otherwise (nothing is half-read)."""
    info: SessionInfo | None = None
    entries: list[Entry] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{source} line {number}"
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise ConfigError(
                f"{where} is not JSON ({exc}); is it a session export (tiny-agent sessions export ID)?"
            ) from None
        if info is None:
            info = _header(row, where)
            continue
        entry = _entry(row, where, len(entries))
        try:
            read(entry)
        except UnreadableEntry as exc:
            raise ConfigError(f"{where}: {exc}") from exc
        entries.append(entry)
    if info is None:
        raise ConfigError(f"{source} is empty: there is no session in it")
    if info.head >= 0 and len(entries) != info.head + 1:
        raise ConfigError(
            f"{source} holds {len(entries)} entries of session {info.id[:12]}, and its header says "
            f"{info.head + 1}: the file was cut short (or added to); export the session again"
        )
    return info, entries


def _header(row: Any, where: str) -> SessionInfo:
    if not isinstance(row, dict) or row.get("format") != EXPORT_FORMAT or not isinstance(row.get("session"), dict):
        raise ConfigError(f"{where}: not the header of a session export (tiny-agent sessions export ID)")
    if row.get("version") != 1 or not isinstance(row.get("schema"), int) or row["schema"] > SCHEMA_VERSION:
        raise ConfigError(
            f"{where}: written by a newer tiny-agent (format {row.get('version')}, schema {row.get('schema')}); "
            "upgrade this one to import it"
        )
    session = row["session"]
    sid, created, updated = session.get("id"), session.get("created_at"), session.get("updated_at")
    if not isinstance(sid, str) or not sid or not all(_number(t) for t in (created, updated)):
        raise ConfigError(f"{where}: the session needs an id, created_at and updated_at")
    workspace, host = session.get("workspace"), session.get("host")
    return SessionInfo(
        sid,
        float(created),
        float(updated),
        workspace if isinstance(workspace, str) else None,
        str(session.get("title") or ""),
        head if isinstance(head := session.get("head"), int) and not isinstance(head, bool) else -1,
        host=host if isinstance(host, str) else None,
    )


def _entry(row: Any, where: str, seq: int) -> Entry:
    if not isinstance(row, dict):
        raise ConfigError(f"{where}: an entry is a JSON object, not {type(row).__name__}")
    if row.get("seq") != seq:
        raise ConfigError(
            f"{where}: expected entry #{seq}, found #{row.get('seq')} (entries are in order, none missing)"
        )
    eid, kind, at, body = row.get("id"), row.get("kind"), row.get("at"), row.get("body")
    if not isinstance(eid, str) or not isinstance(kind, str) or not _number(at) or not isinstance(body, dict):
        raise ConfigError(f"{where}: entry #{seq} needs an id, a kind, a time (at) and a body object")
    return Entry(kind, body, eid, seq, float(at))  # type: ignore[arg-type]  # _number said so


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
