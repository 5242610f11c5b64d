"""What a recording holds, indexed for its replay: the answer of each turn call, the summaries of
each compaction (the policy's and the user's), every call entry and its bill, the characters per
token of each kind of call, and the window and output cap the run's requests were sized against."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from tiny_agent.context.entries import (
    CallDone,
    CallOpened,
    CompactionMark,
    ConfigChange,
    Response,
    RunChange,
    TypedEntry,
)
from tiny_agent.context.replayed import Unnamed, written_now
from tiny_agent.context.tokens import DEFAULT_CHARS_PER_TOKEN, CallRecord, canonical
from tiny_agent.types import Entry
from tiny_agent.whatif.replies import Reply, recorded_replies

__all__ = ["ASSUMED_SUMMARY_TOKENS", "Recorded"]

ASSUMED_SUMMARY_TOKENS = 200
"""The length assumed for a summary when the recording has none to measure: the one dense
paragraph the summary instructions ask for. Figures that depend on it are marked estimated."""


@dataclass
class Recorded:
    """What the recording holds, indexed for the replay."""

    responses: dict[int, Response] = field(default_factory=dict)
    """The reply to each turn call, by the seq of its ``call`` entry."""
    records: dict[int, CallRecord] = field(default_factory=dict)
    opened: dict[int, CallOpened] = field(default_factory=dict)
    """Every call entry, by its seq."""
    calls: list[tuple[CallOpened, CallRecord]] = field(default_factory=list)
    """Every answered call, in order."""
    call_seqs: list[int] = field(default_factory=list)
    """The seq of each of ``calls``' call entries (its id, which the replay's rows are paired by)."""
    sizes: dict[tuple[str, str, str], CallRecord] = field(default_factory=dict)
    """A recorded call by the provider, model and fingerprint of its request (its size is counted by
    that provider's tokenizer: no other's; the provider is "" in a log that did not name it)."""
    policy_replies: list[Reply] = field(default_factory=list)
    """The answers of the summary calls the policy's compactions made, in order (a retry included)."""
    manual_replies: dict[int, list[Reply]] = field(default_factory=dict)
    """The answers of the summary calls of each manual compaction, by the seq of its mark."""
    summaries: list[str] = field(default_factory=list)
    ratios: dict[str, float] = field(default_factory=dict)
    """Characters per token by purpose, the median over the recorded calls."""
    window: int | None = None
    """The provider's context window the newest recorded call was sized against (not an override)."""
    max_tokens: int | None = None
    """The output cap the run gave (``--max-tokens``, the newest): the reply room its thresholds kept."""
    unreplayed: set[int] = field(default_factory=set)
    """Calls a replay cannot redo, repeated as recorded: the summary calls of a manual compaction
    that failed (it left no mark saying what was asked)."""

    @staticmethod
    def of(typed: Sequence[tuple[Entry, Sequence[TypedEntry]]], unnamed: Unnamed) -> Recorded:
        """``unnamed``: the binding of the calls whose thinking settings name none."""
        found = Recorded()
        opened = found.opened
        pending: list[CallDone] = []
        ratios: dict[str, list[float]] = {}
        overridden = False
        for entry, values in typed:
            for value in values:
                if isinstance(value, ConfigChange) and "context_window" in value.settings:
                    overridden = value.settings["context_window"] is not None
                elif isinstance(value, RunChange) and "max_tokens" in value.settings:
                    found.max_tokens = value.settings["max_tokens"]
                elif isinstance(value, CallOpened):
                    opened[entry.seq] = written_now(value, unnamed.at(entry.seq))
                    if not overridden:
                        found.window = value.window or found.window
                    if value.purpose == "turn":  # summary calls before a turn: a compaction that failed
                        found._failed(pending, opened)
                        pending = []
                elif isinstance(value, Response) and value.call is not None:
                    found.responses[value.call] = value
                elif isinstance(value, CallDone) and value.call in opened:
                    call, record = opened[value.call], value.record
                    found.records[value.call] = record
                    found.calls.append((call, record))
                    found.call_seqs.append(value.call)
                    found.sizes.setdefault((call.provider, call.model, canonical(call.fingerprint)), record)
                    if record.usage.input_tokens and call.chars:
                        ratios.setdefault(call.purpose, []).append(call.chars / record.usage.input_tokens)
                    if record.purpose == "compaction":
                        pending.append(value)
                elif isinstance(value, CompactionMark):
                    found.summaries.append(value.summary)
                    # Its own calls: the policy's or the user's; any other is a compaction that failed.
                    own = [c for c in pending if opened[c.call].decided != value.manual]
                    found._failed([c for c in pending if c not in own], opened)
                    replies = recorded_replies(own, value.summary)
                    if value.manual:
                        found.manual_replies[entry.seq] = replies
                    else:
                        found.policy_replies.extend(replies)
                    pending = []
        found._failed(pending, opened)
        found.ratios = {k: statistics.median(v) for k, v in ratios.items()}
        return found

    def _failed(self, calls: Sequence[CallDone], opened: Mapping[int, CallOpened]) -> None:
        """Summary calls of a compaction that failed: the policy's are asked again by the replay's
        policy (which may fail or not); a manual one's are repeated as they were."""
        self.policy_replies.extend(recorded_replies([done for done in calls if opened[done.call].decided], None))
        self.unreplayed.update(done.call for done in calls if not opened[done.call].decided)

    def ratio(self, purpose: str) -> float:
        return self.ratios.get(purpose) or self.ratios.get("turn") or DEFAULT_CHARS_PER_TOKEN

    def median_summary(self, tokens: int | None = None) -> str:
        """A stand-in summary of ``tokens`` if given, else as long as the recorded ones' median, else
        of ``ASSUMED_SUMMARY_TOKENS``."""
        lengths = [len(text) for text in self.summaries]
        if tokens is not None or not lengths:
            size = int((tokens or ASSUMED_SUMMARY_TOKENS) * self.ratio("compaction"))
        else:
            size = int(statistics.median(lengths))
        filler = "A replayed compaction: the recording had no summary here, so this stands in for one. "
        return (filler * (size // len(filler) + 1))[: max(1, size)]
