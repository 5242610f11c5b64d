"""What the view shows, as JSON-ready values: a session's calls (the timeline), one call's request
beside the one before it (layers, shared prefix, first divergence), and the replay what-ifs.

Everything comes from the session's entries, read once: the calls' usage and costs and the miss
causes the engine diagnosed as they happened (``CallRecord.miss``, the per-call line's words), and
the requests themselves re-rendered from the log as it stood before each call (the window is a pure
function of the log, the policy and the profile), checked against the fingerprint recorded then.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tiny_agent.context.engine import Context
from tiny_agent.context.entries import CallDone, CallFailed, CallOpened, Clearing, CompactionMark, TypedEntry
from tiny_agent.context.entry_codec import read
from tiny_agent.context.log import MemoryLog
from tiny_agent.context.replayed import Unnamed, recorded_adapter, redrawn_request, written_now
from tiny_agent.context.tokens import CallRecord
from tiny_agent.context.tokens import canonical as fingerprint_key
from tiny_agent.errors import TinyAgentError, UnreadableEntry
from tiny_agent.observe.call_lines import server_compaction_text
from tiny_agent.observe.causes import miss_cause
from tiny_agent.observe.view.layers import block_view, divergence
from tiny_agent.observe.view.miss_line import diagnosed_break, diagnosed_character
from tiny_agent.observe.view.whatifs import WHAT_IFS, what_if_rows
from tiny_agent.providers.base import Provider
from tiny_agent.providers.cache_breaks import Break, prefix_breaks
from tiny_agent.providers.cache_expiry import expired
from tiny_agent.providers.cache_rules import CacheRules
from tiny_agent.providers.registry import offline_profile
from tiny_agent.providers.wire import cache_rules, prefix_blocks
from tiny_agent.store.base import SessionInfo
from tiny_agent.types import Entry, Wire
from tiny_agent.whatif.replay import Policy, Recording

__all__ = ["WHAT_IFS", "SessionView", "diagnosed_break", "diagnosed_character"]


@dataclass
class _Call:
    index: int
    seq: int
    opened: CallOpened
    record: CallRecord | None = None
    at: float = 0.0
    request: Mapping[str, Any] | None = None
    """The body itself, where the session was recorded from another program (``observe.record``)."""
    answered: float | None = None
    """When its answer was logged (``call_done``): a cache entry's lifetime starts there."""
    error: str | None = None
    """Why it got no answer (``call_failed``: an error, interrupted, the process stopped)."""


@dataclass
class SessionView:
    """A session's entries read once, and what the page asks of them."""

    info: SessionInfo
    entries: list[Entry]
    calls: list[_Call] = field(default_factory=list)
    marks: list[dict[str, Any]] = field(default_factory=list)
    _context: Context | None = None
    _recording: Recording | None = None
    _adapters: dict[tuple[str, str, str], Provider] = field(default_factory=dict)
    unnamed: Unnamed = field(default_factory=Unnamed)
    """The binding of the calls whose recorded thinking settings name none."""

    @staticmethod
    def of(info: SessionInfo, entries: Sequence[Entry]) -> SessionView:
        view = SessionView(info, list(entries))
        by_seq: dict[int, _Call] = {}
        values = [(entry, value) for entry in view.entries for value in _values(entry)]
        for entry, value in values:
            view._take(entry, value, by_seq)
        view.unnamed = Unnamed.of((entry.seq, value) for entry, value in values)
        return view

    def _take(self, entry: Entry, value: TypedEntry, by_seq: dict[int, _Call]) -> None:
        match value:
            case CallOpened():
                sent = value.request if value.request is not None else entry.body.get("request")
                call = _Call(
                    len(self.calls), entry.seq, value, at=entry.at, request=sent if isinstance(sent, Mapping) else None
                )
                self.calls.append(call)
                by_seq[entry.seq] = call
            case CallDone(call=seq, record=record) if seq in by_seq:
                by_seq[seq].record, by_seq[seq].answered = record, entry.at
                compacted = server_compaction_text(record.usage)
                if compacted:  # after the call it ran in: the requests from the next on start at its block
                    mark = {"kind": "compaction", "seq": entry.seq, "before": by_seq[seq].index + 1}
                    self.marks.append({**mark, "text": compacted})
            case CallFailed(call=seq, error=error) if seq in by_seq:
                by_seq[seq].error = error
            case CompactionMark():
                text = f"compacted {value.messages} messages"
                if value.tokens_before is not None and value.tokens_after is not None:
                    text += f": context {value.tokens_before:,} -> {value.tokens_after:,} tokens"
                self.marks.append({"kind": "compaction", "seq": entry.seq, "before": len(self.calls), "text": text})
            case Clearing(stubs=stubs):
                text = f"cleared {len(stubs)} old tool result(s)"
                self.marks.append({"kind": "clear", "seq": entry.seq, "before": len(self.calls), "text": text})

    # -- the timeline -------------------------------------------------------------------------

    def session(self) -> dict[str, Any]:
        """The session and every call's figures, with the compactions and clearings as marks."""
        calls = [_figures(call, self._previous_call(call)) for call in self.calls]
        known = [c["cost_usd"] for c in calls if c["cost_usd"] is not None]
        answered = [c for c in calls if c["status"] == "done"]
        return {
            "session": {"id": self.info.id, "title": self.info.title, "workspace": self.info.workspace},
            "calls": calls,
            "marks": self.marks,
            "totals": {
                "calls": len(calls),
                "cost_usd": sum(known) if known else None,
                "unpriced": len(calls) - len(known),
                **{k: _total(c[k] for c in answered) for k in _TOTAL_KEYS},
                # As stats sums it: the calls that reported their thinking (a call with thinking off
                # reports none, and is no unknown part of the total).
                "reasoning_tokens": sum(c["reasoning_tokens"] or 0 for c in answered)
                if any(c["reasoning_tokens"] is not None for c in answered)
                else None,
            },
        }

    def _previous_call(self, call: _Call) -> _Call | None:
        """The call before ``call`` on the same provider, whose fingerprint ``changed`` is read against."""
        return next((c for c in reversed(self.calls[: call.index]) if c.opened.provider == call.opened.provider), None)

    # -- one call beside the one before -------------------------------------------------------

    def call(self, index: int) -> dict[str, Any]:
        """Call ``index``'s request drawn as its blocks beside the previous turn's request: what they
        share, where they first differ, our diagnosis and the provider's reason."""
        if not 0 <= index < len(self.calls):
            raise IndexError(index)
        call = self.calls[index]
        previous = self._previous_turn(call)
        record = call.record
        out: dict[str, Any] = {
            "index": index,
            "purpose": call.opened.purpose,
            "previous": previous.index if previous is not None else None,
            "between": [c.index for c in self.calls[previous.index + 1 : index]] if previous else [],
            "ours": record.miss if record else None,
            "cause": miss_cause(record.miss) if record and record.miss else None,
            "provider": record.provider_miss if record else None,
        }
        now = self._request(call)
        before = self._request(previous) if previous is not None else None
        out["request"], out["before"] = now, before
        found = divergence(before, now) if before and now and now["blocks"] else None
        out["divergence"] = found
        out["breaks"] = []
        if before and now and "_body" in before and "_body" in now:
            rules = cache_rules(call.opened.model, now["wire"])
            breaks = prefix_breaks(before["_body"], now["_body"], now["wire"], rules)
            gone = _expired(previous, call, before["_body"], now["wire"], rules) if previous and not breaks else None
            out["breaks"] = [b.to_dict() for b in [*breaks, *filter(None, [gone])]]
        for side in (now, before):
            if side is not None:
                for key in ("_blocks", "_body"):
                    side.pop(key, None)
        said = diagnosed_character(out["ours"])
        if found is not None and said is not None and found.get("character") is not None:
            out["agrees"] = said == found["character"]
        return out

    def _previous_turn(self, call: _Call) -> _Call | None:
        """The newest answered request before ``call`` sent to the same provider (another's is another
        cache, as lint compares each wire's bodies with that wire's; a refused one cached nothing) that
        can be drawn: a turn, or a summary call whose body the log kept; so a turn after a summary is
        compared with the summary request, as the miss line compares it."""
        earlier = (c for c in reversed(self.calls[: call.index]) if c.record is not None)
        drawable = (c for c in earlier if c.opened.purpose == "turn" or c.request is not None)
        return next((c for c in drawable if c.opened.provider == call.opened.provider), None)

    def _request(self, call: _Call) -> dict[str, Any] | None:
        """The call's request re-rendered from the log as it stood before it (a turn's; a summary
        call asks another prompt, which is not redrawn)."""
        if call.opened.purpose != "turn" and call.request is None:
            return {"blocks": [], "note": f"a {call.opened.purpose} call: its request is not redrawn"}
        try:
            profile = offline_profile(call.opened.provider, call.opened.model)
            adapter = self._adapter(call) if call.request is None else None
        except TinyAgentError as exc:
            return {"blocks": [], "note": f"cannot redraw it: {exc}"}
        if adapter is None:
            body = dict(call.request or {})
            stored = prefix_blocks(body, profile.wire)
            blocks_shown = [block_view(b) for b in stored]
            return {
                "index": call.index,
                "wire": profile.wire,
                "exact": True,
                "note": "the body as it was sent",
                "blocks": blocks_shown,
                "_blocks": stored,
                "_body": body,
            }
        rendered = redrawn_request(self._engine(), call.seq, call.opened, adapter, strict=False)
        recorded = written_now(call.opened, self.unnamed.at(call.seq)).fingerprint
        exact = fingerprint_key(rendered.fingerprint) == fingerprint_key(recorded)
        blocks = prefix_blocks(rendered.body, profile.wire)
        return {
            "index": call.index,
            "wire": profile.wire,
            "exact": exact,
            "note": "" if exact else "redrawn from the log; its fingerprint differs from the one recorded",
            "blocks": [block_view(b) for b in blocks],
            "_blocks": blocks,
            "_body": rendered.body,
        }

    def bodies(self) -> list[tuple[str, dict[str, Any]]]:
        """(label, body) of every turn call's request, re-rendered from the log: what ``lint --session``
        reads."""
        return [(label, body) for label, body, _ in self.timed_bodies()]

    def timed_bodies(self) -> list[tuple[str, dict[str, Any], float | None]]:
        """(label, body, when its answer was logged) of every turn call's request: with the times,
        ``lint`` also finds the cache entries that expired between two requests."""
        out = []
        for call in self.calls:
            request = self._request(call)
            if request is not None and "_body" in request:
                out.append((f"session {self.info.id[:12]} call {call.index}", request["_body"], call.answered))
        return out

    def _adapter(self, call: _Call) -> Provider:
        """The adapter that redraws ``call``'s request, made once per provider, model and thinking
        settings (an SDK client each)."""
        opened, binding = call.opened, self.unnamed.at(call.seq)
        key = (opened.provider, opened.model, f"{opened.fingerprint.get('thinking')} {binding}")
        if key not in self._adapters:
            self._adapters[key] = recorded_adapter(opened, unnamed=binding)
        return self._adapters[key]

    def warm(self) -> None:
        """Build what a call's redraw needs (the engine over the whole log) ahead of the first one."""
        if any(c.request is None for c in self.calls):
            self._engine()

    def _engine(self) -> Context:
        if self._context is None:
            self._context = Context(log=MemoryLog(self.entries))
        return self._context

    def what_ifs(self, policies: Sequence[Policy] | None = None) -> list[dict[str, Any]]:
        """The session replayed under each policy (nothing sent): its totals, or why it cannot be."""
        if self._recording is None:
            self._recording = Recording.of(self.entries)
        return what_if_rows(self._recording, policies)


_TOTAL_KEYS = ("input_tokens", "cache_read_tokens", "cache_write_tokens", "uncached_tokens", "output_tokens")


def _total(values: Iterable[int | None]) -> int | None:
    """The sum over the answered calls, None (shown ``?``) where one of them did not report its figure."""
    known = list(values)
    return None if any(v is None for v in known) else sum(v for v in known if v is not None)


def _expired(previous: _Call, call: _Call, body: Mapping[str, Any], wire: Wire, rules: CacheRules) -> Break | None:
    """The previous request's entries outlived before ``call``'s answer (as the diagnosis times it)."""
    if previous.answered is None or call.answered is None:
        return None
    return expired(body, call.answered - previous.answered, wire, rules)


def _values(entry: Entry) -> list[TypedEntry]:
    if entry.kind not in ("call", "call_done", "call_failed", "compaction", "clear", "config", "run", "stop"):
        return []
    try:
        return list(read(entry))
    except UnreadableEntry:
        return []


def _figures(call: _Call, before: _Call | None) -> dict[str, Any]:
    record = call.record
    usage = record.usage if record else None
    read_tokens = usage.cache_read_tokens if usage else None
    write = usage.cache_write_tokens if usage else None
    total = usage.input_tokens if usage else None
    uncached = None if total is None else max(0, total - (read_tokens or 0) - (write or 0))
    return {
        "index": call.index,
        "seq": call.seq,
        "at": call.at,
        "purpose": call.opened.purpose,
        "model": call.opened.model,
        "status": "done" if record else "failed" if call.error is not None else "open",
        "error": call.error,
        "input_tokens": total,
        "cache_read_tokens": read_tokens,
        "cache_write_tokens": write,
        "uncached_tokens": uncached,
        "output_tokens": usage.output_tokens if usage else None,
        "reasoning_tokens": usage.reasoning_tokens if usage else None,
        "cost_usd": record.cost_usd if record else None,
        "seconds": record.seconds if record else None,
        "miss": record.miss if record else None,
        "provider_miss": record.provider_miss if record else None,
        "changed": _changed(before.opened if before else None, call.opened),
    }


def _changed(before: CallOpened | None, now: CallOpened) -> list[str]:
    """The prefix layers the recorded fingerprints say changed (as ``sessions show`` says them)."""
    if before is None or not now.fingerprint:
        return []
    old, new = before.fingerprint, now.fingerprint
    changed = [k for k in ("tools", "system", "pins") if old.get(k) and old.get(k) != new.get(k)]
    count = old.get("messages")
    if isinstance(now.shared_messages, int) and isinstance(count, int) and now.shared_messages < count:
        changed.append("messages")
    return changed
