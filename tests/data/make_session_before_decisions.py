"""Writes session_before_decisions.json: a session as tiny-agent recorded it before the ``decision``
entry existed (commit e01d80d), with two compactions of the policy's and one that failed.

Run once, by hand, with the tiny-agent of that commit, when the fixture was made; kept so the
fixture's content is reviewable:
    git worktree add /tmp/old e01d80d && PYTHONPATH=/tmp/old/src python tests/data/make_session_before_decisions.py
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

from tiny_agent.context.config import ContextConfig
from tiny_agent.context.engine import Context
from tiny_agent.context.log import MemoryLog
from tiny_agent.context.shrink.compaction import SUMMARY_OPENING
from tiny_agent.errors import CompactionError
from tiny_agent.testing import ScriptedProvider, tool_call
from tiny_agent.types import Message, ToolResultBlock, ToolSpec

HERE = Path(__file__).resolve().parent
READ = ToolSpec("read_file", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}})
TURNS = 14


def main() -> None:
    clock = [1764600000.0]
    summaries = ["huge " * 6000, "the files read so far hold the settings", "the settings again, in short"]
    turns = iter(range(TURNS))

    def answer(body: dict[str, Any]) -> Message:
        if SUMMARY_OPENING in json.dumps(body["messages"][-1]):
            return Message.assistant(summaries.pop(0))  # the first is too big: that compaction fails
        i = next(turns)
        return tool_call("read_file", f"c{i}", path=f"{i}.txt")

    provider = ScriptedProvider([answer] * 40, name="anthropic", model="claude-sonnet-4-6", pricing_id="anthropic")
    config = ContextConfig(clear_after=None, policy="fraction", compact_at=3500, keep_turns=2)
    ctx = Context(
        system="s " * 300, tools=[READ], config=config, log=MemoryLog(clock=lambda: clock[0]), clock=lambda: clock[0]
    )
    ctx.record_run(provider="anthropic", model="claude-sonnet-4-6")
    ctx.add_user("go")
    for i in range(TURNS):
        clock[0] += 30
        ctx.maybe_clear(provider)
        with contextlib.suppress(CompactionError):  # the run goes on without it, as the loop's does
            ctx.maybe_compact(provider)
        ctx.complete(provider)
        ctx.add_tool_result(ToolResultBlock(f"c{i}", f"part {i} " + "data " * 400))
    entries = [{"seq": e.seq, "kind": e.kind, "body": e.body, "at": e.at, "id": e.id} for e in ctx.entries]
    (HERE / "session_before_decisions.json").write_text(json.dumps(entries, indent=0) + "\n")
    kinds = [e["kind"] for e in entries]
    print(len(entries), "entries,", kinds.count("compaction"), "compactions")


if __name__ == "__main__":
    main()
