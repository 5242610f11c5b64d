"""Kill points for the crash test, installed in the child process only: production code has no hooks.

``install()`` reads ``$TINY_AGENT_CRASH`` (JSON: ``journal``, ``run``, ``kill``, ``sabotage``) and
wraps a few functions of the real code. Each wrapper passes a named point; the ``n``-th pass of the
point named in ``kill`` SIGKILLs this process there and then. Points:

- ``append:before`` / ``append:after``: around the store's ``append_entries`` (the label names the
  kinds), which a stored session's every batch goes through;
- ``sql:before:VERB`` / ``sql:after:VERB``: around each ``BEGIN``, ``INSERT``, ``UPDATE``,
  ``COMMIT``, ... the store's connection executes (inside the transaction, before/after COMMIT),
  SQLite's or PostgreSQL's;
- ``tool:before`` / ``tool:after``: around ``Toolbox.run`` (before the tool starts; after it
  finished and before its result is committed);
- ``send:before`` / ``send:after``: around ``AnthropicProvider.send`` (the ``call`` entry is
  committed; the reply is not).

Everything is written to the journal (one JSON line per event, ``O_APPEND``, so a line written
before the kill is there after it): each point passed, each commit with its seqs and ids, each tool
start and end, each repair of an illegal request. ``sabotage`` breaks the engine on purpose, to show
that the crash test catches it.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import time
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

ENV = "TINY_AGENT_CRASH"
SQL_VERBS = ("BEGIN", "INSERT", "UPDATE", "DELETE", "COMMIT", "ROLLBACK", "CREATE", "ALTER")

_spec: dict[str, Any] = {}
_counts: Counter[str] = Counter()
_label: list[str] = []
"""What the store is doing now (``append[tool_result]``, ``acquire``, ``migrate``): names a sql point."""
_fd = -1


def event(kind: str, **fields: Any) -> None:
    line = json.dumps({"ev": kind, "run": _spec.get("run"), "pid": os.getpid(), "t": time.time(), **fields})
    os.write(_fd, (line + "\n").encode())


def point(name: str, label: str) -> None:
    _counts[name] += 1
    n = _counts[name]
    event("hit", point=name, n=n, label=label)
    kill = _spec.get("kill")
    if kill and kill["point"] == name and kill["n"] == n:
        event("kill", point=name, n=n, label=label)
        os.kill(os.getpid(), signal.SIGKILL)


def install() -> None:
    """Wrap the real functions as ``$TINY_AGENT_CRASH`` says; nothing at all without it."""
    global _fd
    raw = os.environ.get(ENV)
    if not raw:
        return
    _spec.update(json.loads(raw))
    _fd = os.open(_spec["journal"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    _wrap_store()
    _wrap_sqlite()
    _wrap_postgres()
    _wrap_tools()
    _wrap_provider()
    _wrap_repair()
    for name in filter(None, str(_spec.get("sabotage") or "").split(",")):
        SABOTAGE[name]()


def _labelled(text: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn``, naming what the store is doing while it runs (for the sql points inside it)."""

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        _label.append(text)
        try:
            return fn(*args, **kwargs)
        finally:
            _label.pop()

    return wrapper


def _wrap_store() -> None:
    from tiny_agent.store.sql_store import SqlStore
    from tiny_agent.store.sqlite import SQLiteStore

    original_append = SqlStore.append_entries

    def append_entries(self: SqlStore, session_id: str, entries: Sequence[Any]) -> int:
        kinds = [e.kind for e in entries]
        named = [f"{e.kind}:{e.body['purpose']}" if e.kind in ("call", "call_done") else e.kind for e in entries]
        text = f"append[{','.join(named)}]"
        _label.append(text)
        try:
            point("append:before", text)
            written = original_append(self, session_id, entries)
            event(
                "commit",
                session=session_id,
                seqs=[e.seq for e in entries],
                ids=[e.id for e in entries],
                kinds=kinds,
            )
            point("append:after", text)
            return written
        finally:
            _label.pop()

    SqlStore.append_entries = append_entries  # type: ignore[method-assign]
    for name in ("create", "acquire", "release"):
        setattr(SqlStore, name, _labelled(name, getattr(SqlStore, name)))
    SQLiteStore._migrate = _labelled("migrate", SQLiteStore._migrate)  # type: ignore[method-assign]
    try:
        from tiny_agent.store.postgres import PostgresStore
    except ImportError:  # no psycopg: only SQLite is tested
        return
    PostgresStore._migrate = _labelled("migrate", PostgresStore._migrate)  # type: ignore[method-assign]


_lazy_commit: list[bool] = []


class _Connection(sqlite3.Connection):
    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        verb = sql.split(None, 1)[0].upper() if sql.strip() else ""
        if verb not in SQL_VERBS:
            return super().execute(sql, parameters)
        if _lazy_commit and verb == "BEGIN" and self.in_transaction:
            super().execute("COMMIT")
        if _lazy_commit and verb == "COMMIT":
            point(f"sql:before:{verb}", _label[-1] if _label else "?")
            return self.cursor()
        label = _label[-1] if _label else "?"
        point(f"sql:before:{verb}", label)
        cursor = super().execute(sql, parameters)
        point(f"sql:after:{verb}", label)
        return cursor


def _wrap_sqlite() -> None:
    original = sqlite3.connect

    def connect(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        kwargs.setdefault("factory", _Connection)
        return original(*args, **kwargs)

    sqlite3.connect = connect


def _wrap_postgres() -> None:
    """The same points around the statements of the PostgreSQL store (its ``?`` connection)."""
    try:
        from tiny_agent.store import postgres
    except ImportError:
        return
    original = postgres.QmarkDb.execute

    def execute(self: Any, sql: str, parameters: Any = (), /) -> Any:
        verb = sql.split(None, 1)[0].upper() if sql.strip() else ""
        if verb not in SQL_VERBS:
            return original(self, sql, parameters)
        in_transaction = self.conn.info.transaction_status != 0  # not IDLE
        if _lazy_commit and verb == "BEGIN" and in_transaction:
            original(self, "COMMIT")
        label = _label[-1] if _label else "?"
        point(f"sql:before:{verb}", label)
        if _lazy_commit and verb == "COMMIT":
            return None
        cursor = original(self, sql, parameters)
        point(f"sql:after:{verb}", label)
        return cursor

    postgres.QmarkDb.execute = execute  # type: ignore[method-assign]


def _wrap_tools() -> None:
    from tiny_agent.tools.toolbox import Toolbox
    from tiny_agent.types import ToolResultBlock, ToolUseBlock

    original = Toolbox.run

    def run(self: Toolbox, call: ToolUseBlock) -> ToolResultBlock:
        label = f"{call.name} {call.id}"
        point("tool:before", label)
        event("tool_start", id=call.id, name=call.name)
        result = original(self, call)
        event("tool_end", id=call.id, name=call.name, error=result.is_error)
        point("tool:after", label)
        return result

    Toolbox.run = run  # type: ignore[method-assign]


def _wrap_provider() -> None:
    from tiny_agent.providers.anthropic.adapter import AnthropicProvider
    from tiny_agent.types import ModelResponse

    original = AnthropicProvider.send

    def send(self: AnthropicProvider, body: dict[str, Any], **kwargs: Any) -> ModelResponse:
        label = "summary" if (body.get("tool_choice") or {}).get("type") == "none" else "turn"
        point("send:before", label)
        response = original(self, body, **kwargs)
        point("send:after", label)
        return response

    AnthropicProvider.send = send  # type: ignore[method-assign]


def _wrap_repair() -> None:
    from tiny_agent.context import engine

    original = engine.repair

    def repair(messages: Any) -> Any:
        event("repair")
        return original(messages)

    engine.repair = repair


# -- deliberate breakage, to show the crash test fails when the engine is wrong -------------------


def _batch_results() -> None:
    """Commit a turn's tool results together once all have run (instead of each as it finishes)."""
    from tiny_agent.context.engine import Context
    from tiny_agent.context.entries import ToolResult
    from tiny_agent.types import ToolResultBlock

    def add_tool_result(self: Context, result: ToolResultBlock) -> None:
        held: list[ToolResultBlock] = self.__dict__.setdefault("_held_results", [])
        held.append(result)
        if {r.tool_use_id for r in held} >= set(self.state.pending):
            self.append([ToolResult(r) for r in held])
            held.clear()

    Context.add_tool_result = add_tool_result  # type: ignore[method-assign]


def _no_close() -> None:
    """Resume without closing what the crash left open (no "not run" results, no call_failed)."""
    from tiny_agent.context.session import Session

    Session._close_what_a_crash_left = lambda self: None  # type: ignore[method-assign]


def _late_call() -> None:
    """Commit the ``call`` entry together with the reply instead of before the send."""
    from tiny_agent.context.engine import Context
    from tiny_agent.context.entries import CallOpened
    from tiny_agent.context.entry_codec import encode
    from tiny_agent.types import Entry

    original = Context.append

    def append(self: Context, batch: Sequence[Any]) -> list[Entry]:
        held: list[Any] = self.__dict__.setdefault("_held_call", [])
        if len(batch) == 1 and isinstance(batch[0], CallOpened):
            held.extend(batch)
            kind, body = encode(batch[0])
            return [Entry(kind, body, "not-yet-committed", self.state.head + 1, time.time())]
        combined = [*held, *batch]
        skip = len(held)
        held.clear()
        return original(self, combined)[skip:]

    Context.append = append  # type: ignore[method-assign]


def _lazy() -> None:
    """Leave each transaction open until the next one begins: a COMMIT that does not commit."""
    _lazy_commit.append(True)


SABOTAGE: dict[str, Callable[[], None]] = {
    "lazy_commit": _lazy,
    "batch_results": _batch_results,
    "no_close": _no_close,
    "late_call": _late_call,
}
