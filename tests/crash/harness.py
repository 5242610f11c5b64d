"""The crash test: SIGKILL a real ``tiny-agent`` run at a chosen moment, resume it, check everything.

A case is one conversation in its own folder (workspace, store, journal) against the scripted
server: the first task in a new session, then a second task on ``--resume``. One of those two runs
is killed with SIGKILL at a chosen moment:

- at the N-th pass of a kill point inside the process (``child/killpoints.py``: store appends and
  the SQL statements inside them, tool runs, provider sends), or
- by the server, at the run's N-th request: while the call is in flight, or half-way through the
  reply, or
- by the test, a fixed (seeded) time after the start, against a server that answers slowly.

Then, on a copy of the store as the kill left it, the store is checked (integrity, contiguous seqs,
bodies, every commit the process saw is there) and the library resumes it (``Session.resume``): the
calls left without results are the ones expected, the call in flight is the one expected, and the
next request is legal as rendered, with nothing to repair; ``sessions show --json`` reads it.
Then the real CLI continues the real store (``-c "go on"``) and finishes the work, and the whole
story is checked: nothing committed before the kill changed, the resume first closed exactly what
was open, no tool whose result was committed ran again, every request the server ever got was
legal and none was repaired, the resumed request starts with the bytes of the last one before the
kill, and the work is complete (every scripted call succeeded once, every file is right).
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from tests.crash.server import KEYS, MODEL, TASK_TEXT, WRITES, Exchange, RunPlan, ScriptedAnthropicServer, key_of
from tests.crash.stores import CaseStore, PostgresCaseStore, SQLiteCaseStore, StoreView
from tiny_agent.agent.loop import DEFAULT_SYSTEM
from tiny_agent.context.engine import NOT_RUN
from tiny_agent.context.legality import check_anthropic_body
from tiny_agent.context.session import Session
from tiny_agent.providers.anthropic.adapter import AnthropicProvider
from tiny_agent.providers.prefix import without_marks
from tiny_agent.store import open_store
from tiny_agent.types import Entry

ROOT = Path(__file__).resolve().parents[2]
CHILD_DIR = Path(__file__).resolve().parent / "child"
API_KEY = "sk-ant-crash-test-0123456789abcdef"
REPAIR_WARNING = "repairing an illegal request"
COMPACT_AT = "4000"
FILES = {
    "a.txt": "".join(f"a line {i:04d}: the quick brown fox jumps over the lazy dog\n" for i in range(160)),
    "b.txt": "".join(f"b line {i:04d}: pack my box with five dozen liquor jugs\n" for i in range(160)),
    "c.txt": "".join(f"c line {i:04d}: how vexingly quick daft zebras jump\n" for i in range(160)),
}
RUN_TIMEOUT = 120.0


# -- cases ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Kill:
    """Where one run of a case dies: one of ``point``, ``server`` or ``after`` is set (none: no kill)."""

    phase: Literal[1, 2]
    """1: the first task, in a new session; 2: the second task, on ``--resume``."""
    point: str | None = None
    n: int = 0
    """With ``point``: the n-th pass of it; with ``server``: the run's n-th request."""
    server: Literal["in_flight", "mid_reply"] | None = None
    after: float | None = None
    """Seconds after the start (the server then answers slowly)."""


@dataclass(frozen=True)
class Case:
    name: str
    kill: Kill
    real_cli: bool = False
    """Start ``python -m tiny_agent`` for every run, instead of a fork of a process that imported it."""
    sabotage: str = ""
    """Break the engine on purpose (see ``child/killpoints.SABOTAGE``): the case must then fail."""
    then: Kill | None = None
    """Kill the resume too, at this point (its ``phase`` is ignored), and resume again."""


SLOW_DELAY = 0.12
"""Seconds the server waits before each reply in the time-based cases."""


def deterministic_cases() -> list[Case]:
    """Kill points spread over store writes, tool runs, provider calls and the compaction.

    The numbers count passes of a point in the scripted conversation, whose order of events is fixed
    (``trace()`` lists them). In the first run: transaction 1 is the schema migration, 2 creates the
    session, 3 takes the writer mark, 4-5 record settings, 6 the task; then each turn is a ``call``
    (7, 10, 14, 20, 25), the reply with its ``call_done`` (8, 11, 15, 21, 26) and one transaction per
    tool result (9; 12-13 for two parallel reads; 16; 22-24 for three parallel calls); the
    compaction before the fourth turn is 17 (its call), 18 (its call_done) and 19 (the compaction
    entry); 27 drops the writer mark. Requests: five turns and the summary (the 4th). Tools: 1
    list_dir; 2-3 two parallel reads; 4 a write; 5-7 a read, a write and a listing in parallel.
    The second run (the second task, on ``--resume``) has turns at requests 1, 2, 4, the summary at
    3, tools 1 (read), 2-3 (a write and a read in parallel).
    """
    cases: list[Case] = []

    def add(phase: Literal[1, 2], point: str, numbers: Sequence[int]) -> None:
        for n in numbers:
            cases.append(Case(f"p{phase}-{point.replace(':', '-')}-{n}", Kill(phase, point, n)))

    def server(phase: Literal[1, 2], mode: Literal["in_flight", "mid_reply"], numbers: Sequence[int]) -> None:
        for n in numbers:
            cases.append(Case(f"p{phase}-server-{mode}-{n}", Kill(phase, None, n, mode)))

    # Store writes: all written and nothing committed (before COMMIT), committed but not yet in
    # memory (after COMMIT), inside a transaction, inside the schema migration.
    add(1, "sql:before:COMMIT", (1, 2, 3, 5, 6, 7, 8, 12, 13, 21, 23, 26, 27))
    add(1, "sql:after:COMMIT", (2, 4, 6, 9, 11, 15, 22, 25, 26))
    add(1, "sql:after:BEGIN", (7, 11))
    add(1, "sql:after:INSERT", (6,))  # between a response and its call_done, in one transaction
    add(1, "sql:after:CREATE", (2,))  # half of the first migration
    add(1, "sql:before:ALTER", (2,))  # half of the second migration
    add(2, "sql:before:COMMIT", (2, 6, 8, 13))
    add(2, "sql:after:COMMIT", (3, 16))
    # The compaction: its call committed or not, the summary in flight, back but not recorded,
    # its call_done committed and the compaction entry not, the compaction entry committed.
    add(1, "sql:before:COMMIT", (17, 18, 19))
    add(1, "sql:after:COMMIT", (17, 18, 19))
    add(1, "send:before", (4,))
    add(1, "send:after", (4,))
    server(1, "in_flight", (4,))
    server(1, "mid_reply", (4,))
    server(2, "in_flight", (3,))
    # Tool runs: before each tool starts (for parallel calls: after the previous one's result is
    # committed), and after each finished but before its result is committed.
    add(1, "tool:before", range(1, 8))
    add(1, "tool:after", range(1, 8))
    add(2, "tool:before", (2, 3))
    add(2, "tool:after", (1, 2))
    # Provider calls: the call is committed and not sent; the reply is back and not committed; the
    # server read the request and the client dies waiting; the client dies half-way through the reply.
    add(1, "send:before", (1, 3, 6))
    add(1, "send:after", (2, 5, 6))
    server(1, "in_flight", (1, 2, 3, 5, 6))
    server(1, "mid_reply", (2, 6))
    server(2, "in_flight", (1, 4))
    server(2, "mid_reply", (2,))
    return cases


def resume_cases() -> list[Case]:
    """The resume killed too: while it closes what the first kill left open, and just after.

    A resume's transactions are 1 the migration check, 2 the writer mark, 3 the entries that close
    the crash (``call_failed`` for a call in flight, "not run" results for tool calls).
    """
    firsts = {"in_flight-2": Kill(1, None, 2, "in_flight"), "tool-after-2": Kill(1, "tool:after", 2)}
    thens = {
        "sql-before-COMMIT-3": Kill(1, "sql:before:COMMIT", 3),
        "append-after-1": Kill(1, "append:after", 1),
        "send-before-1": Kill(1, "send:before", 1),
    }
    return [
        Case(f"p1-{first}+resume-{then}", kill, then=again)
        for first, kill in firsts.items()
        for then, again in thens.items()
    ]


def timed_cases(count: int = 10, seed: int = 7) -> list[Case]:
    """Kills at seeded random times against a slow server: wherever the run happens to be."""
    import random

    rng = random.Random(seed)
    cases = []
    for i in range(count):
        phase: Literal[1, 2] = 1 if i % 3 else 2
        after = rng.uniform(0.1, 1.5 if phase == 1 else 1.0)
        cases.append(Case(f"p{phase}-time-{i:02d}", Kill(phase, after=round(after, 3))))
    return cases


def real_cli_cases() -> list[Case]:
    """A few of the same moments, with every run a real ``python -m tiny_agent`` process."""
    return [
        Case("real-p1-sql-before-COMMIT-13", Kill(1, "sql:before:COMMIT", 13), real_cli=True),
        Case("real-p1-tool-after-6", Kill(1, "tool:after", 6), real_cli=True),
        Case("real-p2-server-in_flight-2", Kill(2, None, 2, "in_flight"), real_cli=True),
    ]


def postgres_cases() -> list[Case]:
    """Moments whose pass numbers differ on PostgreSQL: its migrations record each version with an
    INSERT, so the INSERT between a reply's ``response`` and its ``call_done`` is #11 there."""
    return [Case("pg-p1-sql-after-INSERT-11", Kill(1, "sql:after:INSERT", 11))]


SABOTAGE_CASES = {
    # A turn's results committed together after the last tool: the first read's result dies with
    # the second read.
    "batch_results": (Kill(1, "tool:before", 3), "came before its result was committed"),
    # Resume without closing what the crash left: the next request needs a repair.
    "no_close": (Kill(1, "tool:after", 2), "repair"),
    # The call entry committed with its reply: a kill in flight leaves no trace of the call.
    "late_call": (Kill(1, None, 2, "in_flight"), "call entries were committed"),
    # COMMIT deferred to the next transaction: a kill loses what the process thought was stored.
    "lazy_commit": (Kill(1, "tool:before", 2), "is not in the store"),
}


def sabotage_cases() -> list[Case]:
    """Cases run against a deliberately broken engine: each must fail, with the failure named."""
    return [Case(f"sabotage-{name}", kill, sabotage=name) for name, (kill, _) in SABOTAGE_CASES.items()]


# -- starting runs --------------------------------------------------------------------------------


class Child(Protocol):
    pid: int

    def wait(self, timeout: float) -> int: ...

    def kill(self) -> None:
        """SIGKILL, unless it has ended already (never another process that got its pid)."""
        ...


class Launcher(Protocol):
    def start(self, argv: list[str], env: dict[str, str], cwd: Path, out: Path, err: Path) -> Child: ...


def child_env(home: Path, extra: dict[str, str]) -> dict[str, str]:
    """A clean environment: the worktree's code and the kill points first, every folder under ``home``."""
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT")}
    certs = home / "certs"
    certs.mkdir(parents=True, exist_ok=True)
    return {
        **keep,
        "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{CHILD_DIR}",
        "PYTHONDONTWRITEBYTECODE": "1",
        "HOME": str(home),
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_STATE_HOME": str(home / "state"),
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_CACHE_HOME": str(home / "cache"),
        # Plain HTTP only: an empty CA folder spares each client loading the system's CA bundle.
        "SSL_CERT_DIR": str(certs),
        **extra,
    }


@dataclass
class _Popen:
    process: subprocess.Popen[bytes]

    @property
    def pid(self) -> int:
        return self.process.pid

    def wait(self, timeout: float) -> int:
        return self.process.wait(timeout)

    def kill(self) -> None:
        self.process.kill()


class RealProcesses:
    """Each run a new ``python -m tiny_agent`` process; the kill points come in by ``sitecustomize``."""

    def start(self, argv: list[str], env: dict[str, str], cwd: Path, out: Path, err: Path) -> Child:
        with open(out, "wb") as stdout, open(err, "wb") as stderr:
            process = subprocess.Popen(
                [sys.executable, "-m", "tiny_agent", *argv],
                env=env,
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                stdout=stdout,
                stderr=stderr,
            )
        return _Popen(process)


class Zygote:
    """Forks each run from a process that has imported the CLI already (see ``child/zygote.py``)."""

    def __init__(self, home: Path) -> None:
        env = child_env(home, {"TINY_AGENT_STORE": str(home / "unused.db")})
        self._process = subprocess.Popen(
            [sys.executable, str(CHILD_DIR / "zygote.py")],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            cwd=home,
        )
        self._lines: queue.Queue[dict[str, Any]] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self._exits: dict[int, int] = {}
        ready = self._lines.get(timeout=120)
        assert "ready" in ready, ready

    def _read(self) -> None:
        assert self._process.stdout is not None
        for line in self._process.stdout:
            self._lines.put(json.loads(line))

    def start(self, argv: list[str], env: dict[str, str], cwd: Path, out: Path, err: Path) -> Child:
        command = {"argv": argv, "env": env, "cwd": str(cwd), "stdout": str(out), "stderr": str(err)}
        assert self._process.stdin is not None
        self._process.stdin.write((json.dumps(command) + "\n").encode())
        self._process.stdin.flush()
        while True:
            message = self._lines.get(timeout=30)
            if "code" in message:
                self._exits[message["pid"]] = message["code"]
            else:
                pid = int(message["pid"])
                try:
                    pidfd: int | None = os.pidfd_open(pid)
                except ProcessLookupError:  # it died (at an early kill point) and the zygote reaped it
                    pidfd = None
                return _Forked(self, pid, pidfd)

    def _wait(self, pid: int, timeout: float) -> int:
        deadline = time.monotonic() + timeout
        while pid not in self._exits:
            message = self._lines.get(timeout=max(0.01, deadline - time.monotonic()))
            if "code" in message:
                self._exits[message["pid"]] = message["code"]
        return self._exits.pop(pid)

    def close(self) -> None:
        assert self._process.stdin is not None
        self._process.stdin.close()
        self._process.wait(timeout=10)


@dataclass
class _Forked:
    zygote: Zygote
    pid: int
    pidfd: int | None
    """Names this process even after the zygote reaped it and its pid went to another."""

    def wait(self, timeout: float) -> int:
        code = self.zygote._wait(self.pid, timeout)
        if self.pidfd is not None:
            os.close(self.pidfd)
        return code

    def kill(self) -> None:
        if self.pidfd is None:
            return
        with contextlib.suppress(ProcessLookupError):
            signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)


# -- reading a store as a kill left it ------------------------------------------------------------


def pending_calls(entries: Sequence[Entry]) -> list[str]:
    """tool_use ids of the newest response that have no result after it. (Read from the raw rows,
    not with the engine's fold, so that a check does not share the engine's mistakes.)"""
    last = max((i for i, e in enumerate(entries) if e.kind == "response"), default=None)
    if last is None:
        return []
    asked = [b["id"] for b in entries[last].body["content"] if b["type"] == "tool_use"]
    answered = {e.body["block"]["tool_use_id"] for e in entries[last:] if e.kind == "tool_result"}
    return [i for i in asked if i not in answered]


def open_calls(entries: Sequence[Entry]) -> list[int]:
    closed = {int(e.body["call"]) for e in entries if e.kind in ("call_done", "call_failed")}
    return [e.seq for e in entries if e.kind == "call" and e.seq not in closed]


# -- one case -------------------------------------------------------------------------------------


@dataclass
class RunRecord:
    run: str
    argv: list[str]
    code: int
    stderr: str
    seconds: float


@dataclass
class Outcome:
    """What happened in one case, for the report and the assertions."""

    name: str
    phase: int = 1
    category: str = ""
    where: str = ""
    """The moment of the kill: the kill point and what the process was doing there."""
    killed: bool = False
    committed: int = 0
    """Entries in the store after the kill."""
    interrupted: list[str] = field(default_factory=list)
    lost_calls: int = 0
    compactions: int = 0
    real_cli: bool = False
    sabotage: str = ""
    seconds: float = 0.0
    runs: list[RunRecord] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.killed and not self.failures

    def summary(self) -> dict[str, Any]:
        data = asdict(self)
        data["runs"] = [{"run": r.run, "code": r.code, "seconds": round(r.seconds, 3)} for r in self.runs]
        data["ok"] = self.ok
        data["seconds"] = round(self.seconds, 3)
        return data


class CaseRunner:
    def __init__(
        self, case: Case, server: ScriptedAnthropicServer, launcher: Launcher, folder: Path, store: CaseStore
    ) -> None:
        self.case = case
        self.server = server
        self.launcher = launcher
        self.folder = folder
        self.workspace = folder / "workspace"
        self.store = store
        self.journal = folder / "journal.jsonl"
        self.outcome = Outcome(case.name, case.kill.phase, real_cli=case.real_cli, sabotage=case.sabotage)
        self._runs = 0
        self._plans: dict[str, RunPlan] = {}

    # -- driving ------------------------------------------------------------------------------

    def run(self) -> Outcome:
        started = time.monotonic()
        try:
            self._story()
        except Exception as exc:  # a harness failure is a failed case, with its reason
            self.outcome.failures.append(f"{type(exc).__name__}: {exc}")
        self.outcome.seconds = time.monotonic() - started
        return self.outcome

    def _story(self) -> None:
        self.workspace.mkdir(parents=True)
        for name, text in FILES.items():
            (self.workspace / name).write_text(text)
        kill = self.case.kill
        first = self._launch(self._new_session_args(TASK_TEXT["A"]), kill if kill.phase == 1 else None)
        if kill.phase == 2:
            self._expect(first, 0, "the first task")
            sid = self.store.view("after-first").session
            assert sid is not None, "the first run left no session"
            second = self._launch(["--resume", sid, TASK_TEXT["B"]], kill)
            killed_run = second
        else:
            killed_run = first
        if killed_run.code == 0 and kill.after is not None:
            self.outcome.where = "the run finished before the timed kill"
            return
        if killed_run.code != -signal.SIGKILL:
            self.outcome.failures.append(
                f"{killed_run.run} was not killed: exit {killed_run.code} (if the engine now passes this point "
                f"fewer times, see benchmarks/crash_test.py --trace)\n{killed_run.stderr[-2000:]}"
            )
            return
        self.outcome.killed = True
        self._describe_kill(killed_run.run)
        at_kill = self.store.view("at-kill")
        self._check_after_kill(killed_run.run, at_kill)
        self._recover(killed_run.run, at_kill)

    def _new_session_args(self, task: str) -> list[str]:
        return ["--provider", "anthropic", "--model", MODEL, "--compact-at", COMPACT_AT, "--keep-turns", "1", task]

    def _launch(self, args: list[str], kill: Kill | None, *, agent: bool = True) -> RunRecord:
        self._runs += 1
        run = f"r{self._runs}"
        case = self.case.name
        plan = RunPlan()
        if kill is not None and kill.server is not None:
            plan.kill_at, plan.kill_mode = kill.n, kill.server
        if kill is not None and kill.after is not None:
            plan.delay = SLOW_DELAY
        self._plans[run] = self.server.plan(case, run, plan)
        spec = {
            "journal": str(self.journal),
            "run": f"{case}/{run}",
            "kill": {"point": kill.point, "n": kill.n} if kill is not None and kill.point else None,
            "sabotage": self.case.sabotage,
        }
        env = child_env(
            self.folder / "home",
            {
                "ANTHROPIC_API_KEY": API_KEY,
                "TINY_AGENT_STORE": self.store.location,
                "TINY_AGENT_CRASH": json.dumps(spec),
            },
        )
        argv = ["--base-url", self.server.base_url(case, run), "--no-stream", *args] if agent else args
        out, err = self.folder / f"{run}.stdout", self.folder / f"{run}.stderr"
        started = time.monotonic()
        child = self.launcher.start(argv, env, self.workspace, out, err)
        self.server.set_pid(case, run, child.pid)
        if kill is not None and kill.after is not None:
            time.sleep(kill.after)
            child.kill()
        try:
            code = child.wait(RUN_TIMEOUT)
        except (queue.Empty, subprocess.TimeoutExpired):
            child.kill()
            child.wait(30)
            raise AssertionError(f"{case}/{run} did not end in {RUN_TIMEOUT:.0f} s") from None
        record = RunRecord(f"{case}/{run}", argv, code, err.read_text(errors="replace"), time.monotonic() - started)
        self.outcome.runs.append(record)
        return record

    def _expect(self, record: RunRecord, code: int, what: str) -> None:
        if record.code != code:
            raise AssertionError(f"{what} ({record.run}) exited {record.code}, not {code}:\n{record.stderr[-2000:]}")

    # -- the journal ----------------------------------------------------------------------------

    def events(self, run: str | None = None) -> list[dict[str, Any]]:
        if not self.journal.exists():
            return []
        lines = self.journal.read_text().splitlines()
        rows = []
        for number, line in enumerate(lines, 1):
            try:
                rows.append(json.loads(line))
            except ValueError:
                if number < len(lines):
                    raise
                # A write cut by a timed kill: a line the process never finished saying.
        return [r for r in rows if run is None or r["run"] == run]

    def _describe_kill(self, run: str) -> None:
        kill = self.case.kill
        mine = self.server_exchanges(run)
        if kill.point is not None:
            marks = [e for e in self.events(run) if e["ev"] == "kill"]
            if not marks:
                self.outcome.failures.append("killed, but not at its kill point")
                return
            label = marks[0]["label"]
            self.outcome.where = f"run {kill.phase}: {kill.point} #{kill.n} ({label})"
            if kill.point.startswith("tool:"):
                self.outcome.category = "tool run"
            elif "summary" in label or "compaction" in label:
                self.outcome.category = "compaction"
            elif kill.point.startswith("send:"):
                self.outcome.category = "provider call"
            else:
                self.outcome.category = "store write"
        elif kill.server is not None:
            if not self._plans[run.split("/")[1]].killed:
                self.outcome.failures.append("killed, but not by the server")
            target = next((e for e in mine if e.index == kill.n), None)
            what = target.kind if target else "?"
            self.outcome.where = f"run {kill.phase}: server {kill.server} at request #{kill.n} ({what})"
            self.outcome.category = "compaction" if what == "summary" else "provider call"
        else:
            hits = [e for e in self.events(run) if e["ev"] == "hit"]
            last = hits[-1] if hits else None
            doing = "start-up"
            if mine and mine[-1].sent != "all":
                doing = "a provider call in flight"
            elif last is not None:
                doing = f"after {last['point']} ({last['label']})"
            self.outcome.where = f"run {kill.phase}: {kill.after:.3f} s, {doing}"
            self.outcome.category = "timed"

    def server_exchanges(self, run: str) -> list[Exchange]:
        return [e for e in self.server.of_case(self.case.name) if e.run == run]

    # -- checks right after the kill ------------------------------------------------------------

    def _check_after_kill(self, run: str, view: StoreView) -> None:
        fail = self.outcome.failures.append
        fail_all = self.outcome.failures.extend
        fail_all(f"after the kill: {p}" for p in view.problems)
        self.outcome.committed = len(view.entries)
        by_seq = {e.seq: e for e in view.entries}
        for commit in (e for e in self.events() if e["ev"] == "commit"):
            for seq, eid, kind in zip(commit["seqs"], commit["ids"], commit["kinds"], strict=True):
                stored = by_seq.get(seq)
                if stored is None or (stored.id, stored.kind) != (eid, kind):
                    fail(f"entry #{seq} ({kind}) was committed by {commit['run']} but is not in the store")
        self._check_calls(run, view)
        self._check_tools(run, view)
        if view.session is not None:
            self._check_library_resume(view)
            self._check_show(view)

    def _check_calls(self, run: str, view: StoreView) -> None:
        """Every request the server got had its ``call`` committed first; every reply that was fully
        delivered and is not the last one is in the log."""
        fail = self.outcome.failures.append
        ids_of_run = {i for e in self.events(run) if e["ev"] == "commit" for i in e["ids"]}
        calls = [e for e in view.of_kind("call") if e.id in ids_of_run]
        requests = self.server_exchanges(run)
        if not len(requests) <= len(calls) <= len(requests) + 1:
            fail(f"{run}: the server got {len(requests)} request(s) but {len(calls)} call entries were committed")
        answered = {
            tuple(b["id"] for b in e.body["content"] if b["type"] == "tool_use") for e in view.of_kind("response")
        }
        for exchange in requests[:-1]:
            if exchange.kind == "turn" and exchange.sent == "all" and tuple(exchange.tool_ids) not in answered:
                fail(f"{run}: reply to request #{exchange.index} was delivered and then lost")
        self.outcome.lost_calls = len(open_calls(view.entries))
        self.outcome.interrupted = pending_calls(view.entries)

    def _check_tools(self, run: str, view: StoreView) -> None:
        """A finished tool's result is committed before anything else happens."""
        events = self.events(run)
        results = view.results()
        for i, event in enumerate(events):
            if event["ev"] != "tool_end" or event["id"] in results:
                continue
            later = [e for e in events[i + 1 :] if e["ev"] == "hit"]
            own = f"{event['name']} {event['id']}"
            stray = [e for e in later if e["label"] not in (own, "append[tool_result]")]
            if stray:
                self.outcome.failures.append(
                    f"{run}: {own} finished, but {stray[0]['point']} ({stray[0]['label']}) came before its result "
                    "was committed, and the kill lost it"
                )

    def _check_show(self, view: StoreView) -> None:
        """``sessions show ID --json`` reads the crashed session (on a copy) and agrees with the rows."""
        assert view.session is not None
        copy = self.store.copy("show")
        shown = self._launch(["sessions", "show", view.session, "--json", "--store", copy], None, agent=False)
        try:
            entries = json.loads((self.folder / f"{shown.run.split('/')[1]}.stdout").read_text())["entries"]
        except (ValueError, KeyError) as exc:
            self.outcome.failures.append(
                f"sessions show --json failed (exit {shown.code}): {exc} {shown.stderr[-500:]}"
            )
            return
        if [(e["seq"], e["id"], e["kind"]) for e in entries] != [(e.seq, e.id, e.kind) for e in view.entries]:
            self.outcome.failures.append("sessions show --json does not list the entries in the store")

    def _check_library_resume(self, view: StoreView) -> None:
        fail = self.outcome.failures.append
        copy = self.store.copy("library-resume")
        assert view.session is not None
        with open_store(copy) as store:
            try:
                session = Session.resume(store, view.session)
            except Exception as exc:
                fail(f"Session.resume failed: {type(exc).__name__}: {exc}")
                return
            got = [c.id for c in session.interrupted]
            if got != pending_calls(view.entries):
                fail(f"resume marked {got} as not run; expected {pending_calls(view.entries)}")
            if session.lost_calls != len(open_calls(view.entries)):
                fail(f"resume counted {session.lost_calls} lost calls; expected {len(open_calls(view.entries))}")
            context = session.context
            if context.state.open_calls or context.pending_calls:
                fail("after resume, calls are still open")
            context.add_user("go on")
            body = AnthropicProvider(model=MODEL, api_key="k").render(context.prompt())
            problems = check_anthropic_body(body)
            if problems:
                fail(f"the resumed request needs a repair: {problems}")
            session.close()

    # -- resuming for real and finishing the work -----------------------------------------------

    def _resume_args(self, at_kill: StoreView) -> list[str]:
        """What a user would run next, in the same folder: continue the newest session (``-c``) with the
        task again if it never made it into the log, else with "go on"; the second task names the
        session (``--resume ID``), so both ways in are exercised."""
        if at_kill.session is None:
            return self._new_session_args(TASK_TEXT["A"])
        task = TASK_TEXT["A" if self.case.kill.phase == 1 else "B"]
        return ["--continue", "go on" if any(task in t for t in at_kill.user_texts()) else task]

    def _recover(self, killed_run: str, at_kill: StoreView) -> None:
        fail = self.outcome.failures.append
        phase = self.case.kill.phase
        first_kill = at_kill
        recovery = self._launch(self._resume_args(at_kill), self.case.then)
        if self.case.then is not None:
            then = self.case.then
            if recovery.code != -signal.SIGKILL:
                fail(f"the resume {recovery.run} was not killed: exit {recovery.code}")
                return
            label = next((e["label"] for e in self.events(recovery.run) if e["ev"] == "kill"), "?")
            self.outcome.where += f"; then the resume at {then.point} #{then.n} ({label})"
            self.outcome.category = "resume"
            killed_run, at_kill = (
                recovery.run,
                self.store.view("at-kill-2"),
            )
            self._check_after_kill(killed_run, at_kill)
            recovery = self._launch(self._resume_args(at_kill), None)
        self._expect(recovery, 0, "the resumed run")
        self._check_notes(recovery, at_kill)
        self._check_prefix(killed_run, recovery.run)
        final_view = self.store.view("final")
        if phase == 1:
            assert final_view.session is not None
            second = self._launch(["--resume", final_view.session, TASK_TEXT["B"]], None)
            self._expect(second, 0, "the second task after the recovery")
            final_view = self.store.view("final2")
        self.outcome.compactions = len(final_view.of_kind("compaction"))
        self._check_closing_entries(at_kill, final_view)
        self._check_final(final_view, first_kill)
        for record in self.outcome.runs:
            if REPAIR_WARNING in record.stderr:
                fail(f"{record.run} repaired an illegal request")
        if any(e["ev"] == "repair" for e in self.events()):
            fail("the engine called repair()")
        turns = [e for e in self.server.of_case(self.case.name) if e.kind == "turn"]
        for exchange in self.server.of_case(self.case.name):
            if exchange.problems:
                fail(f"{exchange.run} request #{exchange.index} is illegal: {exchange.problems}")
        # The system prompt and the tools come from the session: every run sends what a new one would.
        if any([b["text"] for b in e.body.get("system", [])] != [DEFAULT_SYSTEM] for e in turns):
            fail("a turn was sent without the default system prompt")
        if len({json.dumps(_plain(e.body).get("tools"), sort_keys=True) for e in turns}) > 1:
            fail("the turns of this conversation were sent with different tool definitions")
        for where in self.store.holding(API_KEY):
            fail(f"the API key is written in {where}")

    def _check_notes(self, recovery: RunRecord, at_kill: StoreView) -> None:
        fail = self.outcome.failures.append
        interrupted = pending_calls(at_kill.entries)
        if interrupted:
            if "they are marked as interrupted and were not run again" not in recovery.stderr:
                fail("the resumed run did not say which tool calls were marked as not run")
            calls = {
                b["id"]: b for e in at_kill.of_kind("response") for b in e.body["content"] if b["type"] == "tool_use"
            }
            for call_id in interrupted:
                if f"{calls[call_id]['name']}(" not in recovery.stderr:
                    fail(f"the resumed run did not name the interrupted call {calls[call_id]['name']}")
        if open_calls(at_kill.entries) and "in flight when the previous run stopped" not in recovery.stderr:
            fail("the resumed run did not say a call was in flight")

    def _check_prefix(self, killed_run: str, recovery_run: str) -> None:
        """The first request after the resume starts with what the last request before the kill sent."""
        before = self.server_exchanges(killed_run)
        after = self.server_exchanges(recovery_run)
        if not before or not after or before[-1].kind != "turn" or after[0].kind != "turn":
            return
        last, first = _plain(before[-1].body), _plain(after[0].body)
        same = {k: v for k, v in first.items() if k != "messages"} == {k: v for k, v in last.items() if k != "messages"}
        old, new = last["messages"], first["messages"]
        same = same and len(new) >= len(old) and new[: len(old) - 1] == old[:-1]
        same = same and new[len(old) - 1]["content"][: len(old[-1]["content"])] == old[-1]["content"]
        if not same:
            self.outcome.failures.append("the resumed request does not start with the last request's prefix")

    def _check_closing_entries(self, at_kill: StoreView, final: StoreView) -> None:
        """Nothing before the kill changed; the resume closed exactly what the kill left open."""
        fail = self.outcome.failures.append
        fail_all = self.outcome.failures.extend
        fail_all(f"at the end: {p}" for p in final.problems)
        kept = final.entries[: len(at_kill.entries)]
        if [(e.id, e.kind, e.body) for e in kept] != [(e.id, e.kind, e.body) for e in at_kill.entries]:
            fail("entries committed before the kill changed or disappeared")
        if at_kill.session is None:
            return
        added = final.entries[len(at_kill.entries) :]
        lost, waiting = open_calls(at_kill.entries), pending_calls(at_kill.entries)
        closing = added[: len(lost) + len(waiting)]
        expected = [("call_failed", seq) for seq in lost] + [("tool_result", i) for i in waiting]
        got = [
            (e.kind, e.body.get("call") if e.kind == "call_failed" else e.body.get("block", {}).get("tool_use_id"))
            for e in closing
        ]
        if got != expected:
            fail(f"the resume closed {got}; expected {expected}")
        for entry in closing:
            if entry.kind == "tool_result" and (entry.body["block"]["content"], entry.body["block"]["is_error"]) != (
                NOT_RUN,
                True,
            ):
                fail(f"an interrupted call got {entry.body['block']} instead of the 'not run' result")

    def _check_final(self, view: StoreView, at_kill: StoreView) -> None:
        """The work is complete and nothing ran twice that had finished."""
        fail = self.outcome.failures.append
        results = view.results()
        asked = [b["id"] for e in view.of_kind("response") for b in e.body["content"] if b["type"] == "tool_use"]
        for call_id in asked:
            if len(results.get(call_id, [])) != 1:
                fail(f"tool_use {call_id} has {len(results.get(call_id, []))} results")
        done = {key_of(i) for i, blocks in results.items() if not blocks[0]["is_error"]}
        for key in (*KEYS["A"], *KEYS["B"]):
            if key not in done:
                fail(f"the scripted call {key} never completed")
        answers = " ".join(b.get("text", "") for e in view.of_kind("response") for b in e.body["content"])
        for task in ("A", "B"):
            if f"DONE {task}" not in answers:
                fail(f"task {task} never got its final answer")
        if open_calls(view.entries) or pending_calls(view.entries):
            fail("calls are still open at the end")
        for path, content in WRITES.items():
            target = self.workspace / path
            if not target.exists() or target.read_text() != content:
                fail(f"{path} is missing or wrong at the end")
        runs: Counter[str] = Counter()
        for event in self.events():
            if event["ev"] == "tool_end":
                runs[key_of(event["id"]) or event["id"]] += 1
        # A tool that finished just before the kill, whose result was not committed yet, is asked
        # for again after the resume: that one may run twice, no other.
        unrecorded = at_kill.results()
        lost = {key_of(e["id"]) for e in self.events() if e["ev"] == "tool_end" and e["id"] not in unrecorded}
        for key, count in runs.items():
            if count > 1 + (key in lost):
                fail(f"the call {key} ran {count} times")


def _plain(body: dict[str, Any]) -> dict[str, Any]:
    """A body without its cache markers (they move to the newest message on every request)."""
    return without_marks(body)  # type: ignore[no-any-return]


# -- many cases -----------------------------------------------------------------------------------


def case_store(folder: Path, postgres: str | None = None) -> CaseStore:
    """A case's store: a SQLite file in its folder, or, with the URL of a PostgreSQL server, a
    database of its own there."""
    return PostgresCaseStore(postgres) if postgres else SQLiteCaseStore(folder)


def run_cases(cases: Sequence[Case], folder: Path, *, workers: int = 2, postgres: str | None = None) -> list[Outcome]:
    """Every case in its own folder, ``workers`` at a time (each worker forks from its own zygote);
    against a PostgreSQL server when its URL is given (each case in a database of its own)."""
    folder.mkdir(parents=True, exist_ok=True)
    todo: queue.Queue[tuple[int, Case]] = queue.Queue()
    for item in enumerate(cases):
        todo.put(item)
    outcomes: dict[int, Outcome] = {}
    with ScriptedAnthropicServer() as server:

        def work(worker: int) -> None:
            zygote: Zygote | None = None
            real = RealProcesses()
            try:
                while True:
                    try:
                        index, case = todo.get_nowait()
                    except queue.Empty:
                        return
                    launcher: Launcher
                    if case.real_cli:
                        launcher = real
                    else:
                        if zygote is None:
                            home = folder / f"zygote-{worker}"
                            home.mkdir(exist_ok=True)
                            zygote = Zygote(home)
                        launcher = zygote
                    store = case_store(folder / case.name, postgres)
                    try:
                        outcomes[index] = CaseRunner(case, server, launcher, folder / case.name, store).run()
                    finally:
                        store.close()
            finally:
                if zygote is not None:
                    zygote.close()

        with ThreadPoolExecutor(workers) as pool:
            for future in [pool.submit(work, w) for w in range(workers)]:
                future.result()
    return [outcomes[i] for i in range(len(cases))]


def trace(folder: Path, postgres: str | None = None) -> list[dict[str, Any]]:
    """Every moment a kill point passes in the two runs of a case without a kill, in order."""
    with ScriptedAnthropicServer() as server:
        home = folder / "zygote"
        home.mkdir(parents=True, exist_ok=True)
        zygote = Zygote(home)
        store = case_store(folder / "trace", postgres)
        try:
            runner = CaseRunner(Case("trace", Kill(2)), server, zygote, folder / "trace", store)
            runner.workspace.mkdir(parents=True)
            for name, text in FILES.items():
                (runner.workspace / name).write_text(text)
            first = runner._launch(runner._new_session_args(TASK_TEXT["A"]), None)
            runner._expect(first, 0, "the first task")
            sid = store.view("after-first").session
            assert sid is not None
            second = runner._launch(["--resume", sid, TASK_TEXT["B"]], None)
            runner._expect(second, 0, "the second task")
            return [e for e in runner.events() if e["ev"] == "hit"]
        finally:
            store.close()
            zygote.close()


def table(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    """Kill points by category and how they ended."""
    killed = [o for o in outcomes if o.killed]
    by_category: dict[str, dict[str, int]] = {}
    for outcome in outcomes:
        row = by_category.setdefault(outcome.category or "not killed", {"cases": 0, "ok": 0, "failed": 0})
        row["cases"] += 1
        row["ok" if outcome.ok else "failed"] += 1
    return {
        "cases": len(outcomes),
        "kill_points": len(killed),
        "ok": sum(o.ok for o in outcomes),
        "failed": sum(bool(o.failures) for o in outcomes),
        "not_killed": len(outcomes) - len(killed),
        "by_category": by_category,
        "distinct_moments": len({o.where for o in killed}),
        "distinct_store_states": len({(o.phase, o.committed, o.lost_calls, len(o.interrupted)) for o in killed}),
        "interrupted_tool_calls": sum(len(o.interrupted) for o in killed),
        "lost_calls": sum(o.lost_calls for o in killed),
        "resumed_with_compactions": sum(o.compactions > 0 for o in killed),
    }


def format_table(outcomes: Sequence[Outcome]) -> Iterator[str]:
    for o in outcomes:
        status = "ok" if o.ok else ("FAILED" if o.failures else "not killed")
        yield (
            f"{status:10} {o.category:13} {o.name:34} {o.where[:70]:70} entries={o.committed:3} "
            f"not-run={len(o.interrupted)} lost-calls={o.lost_calls} {o.seconds:5.1f}s"
        )
        for failure in o.failures:
            yield f"           - {failure[:300]}"
