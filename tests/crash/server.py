"""A scripted model on 127.0.0.1 speaking the Anthropic Messages wire (``POST .../v1/messages``).

It plays the model of a fixed multi-turn task: each task is a list of steps, each step one or more
tool calls (several in one reply = parallel calls), then a final answer "DONE <task>". What to do
next is read from the request like a model would: a step is done when every one of its calls has a
successful result; a call answered "not run" (a crash) or lost with its reply is asked for again,
under a new tool_use id. Results seen in an earlier request count too, since a compaction replaces
them by a summary. A summary request (the summary instructions at the end of the window, or ``tool_choice``
none with a ``<transcript>``) gets a short summary.

Every client has its own path prefix (``/<case>/<run>``, given as the base URL), so the server
knows which run sent what. Per run it can delay its replies, and SIGKILL the client at its N-th
request: after reading the request (a call in flight) or after sending half of the reply.
Every request is checked with the legality check of the real engine and kept, with the reply.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

from tiny_agent.context.legality import check_anthropic_body
from tiny_agent.context.shrink.compaction import SUMMARY_OPENING

MODEL = "claude-sonnet-4-6"

Call = tuple[str, dict[str, Any]]

TASKS: dict[str, tuple[tuple[Call, ...], ...]] = {
    "A": (
        (("list_dir", {"path": "."}),),
        (("read_file", {"path": "a.txt"}), ("read_file", {"path": "b.txt"})),
        (("write_file", {"path": "out/one.txt", "content": "one: notes on a.txt and b.txt\n"}),),
        (
            ("read_file", {"path": "out/one.txt"}),
            ("write_file", {"path": "out/two.txt", "content": "two: written beside one\n"}),
            ("list_dir", {"path": "out"}),
        ),
    ),
    "B": (
        (("read_file", {"path": "c.txt"}),),
        (
            ("write_file", {"path": "out/three.txt", "content": "three: from c.txt\n"}),
            ("read_file", {"path": "a.txt"}),
        ),
    ),
}
TASK_TEXT = {
    "A": "TASK A: look around the workspace, read a.txt and b.txt, and write notes to out/one.txt and out/two.txt",
    "B": "TASK B: read c.txt and write out/three.txt",
}
KEYS = {
    task: [f"{task}{s}_{k}" for s, step in enumerate(steps) for k in range(len(step))] for task, steps in TASKS.items()
}
"""Every scripted call by key: task, step, index in the step (``A1_0``)."""
WRITES = {
    args["path"]: args["content"]
    for steps in TASKS.values()
    for step in steps
    for name, args in step
    if name == "write_file"
}
SUMMARY_TEXT = "Summary: the user asked for notes on the workspace files; the steps so far went as planned."


def call_of(key: str) -> Call:
    task, rest = key[0], key[1:]
    step, index = (int(x) for x in rest.split("_"))
    return TASKS[task][step][index]


def key_of(tool_use_id: str) -> str | None:
    """``toolu_A1_0_7`` -> ``A1_0`` (the last part only keeps ids unique)."""
    parts = tool_use_id.split("_")
    return f"{parts[1]}_{parts[2]}" if len(parts) == 4 and parts[0] == "toolu" else None


@dataclass
class Exchange:
    """One request the server read, and what became of its reply."""

    run: str
    index: int
    """1-based, per run."""
    kind: Literal["turn", "summary"]
    body: dict[str, Any]
    problems: list[str]
    """What the legality check (and a duplicate-result check) found in the request."""
    reply: dict[str, Any] | None = None
    sent: Literal["no", "half", "all"] = "no"

    @property
    def tool_ids(self) -> list[str]:
        return [b["id"] for b in (self.reply or {}).get("content", []) if b["type"] == "tool_use"]


@dataclass
class RunPlan:
    """What the server does to one run's requests."""

    delay: float = 0.0
    kill_at: int | None = None
    """Kill the client at this (1-based) request of the run."""
    kill_mode: Literal["in_flight", "mid_reply"] = "in_flight"
    pid: int | None = None
    pid_known: threading.Event = field(default_factory=threading.Event)
    killed: bool = False


@dataclass
class CaseState:
    """What the "model" of one case has seen: the results it got, the tasks it was given."""

    done: set[str] = field(default_factory=set)
    tasks: list[str] = field(default_factory=list)
    counter: int = 0
    last_body: str = ""


class ScriptedAnthropicServer:
    """``with ScriptedAnthropicServer() as server: server.base_url("c01", "r1")``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.exchanges: list[Exchange] = []
        self._plans: dict[str, RunPlan] = {}
        self._cases: dict[str, CaseState] = {}
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                owner._handle(self)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="scripted-anthropic", daemon=True)

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    def base_url(self, case: str, run: str) -> str:
        return f"http://127.0.0.1:{self.port}/{case}/{run}"

    def plan(self, case: str, run: str, plan: RunPlan) -> RunPlan:
        with self._lock:
            self._plans[f"{case}/{run}"] = plan
        return plan

    def set_pid(self, case: str, run: str, pid: int) -> None:
        with self._lock:
            plan = self._plans.setdefault(f"{case}/{run}", RunPlan())
        plan.pid = pid
        plan.pid_known.set()

    def of_case(self, case: str) -> list[Exchange]:
        with self._lock:
            return [e for e in self.exchanges if e.run.split("/")[0] == case]

    def __enter__(self) -> ScriptedAnthropicServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    # -- one request --------------------------------------------------------------------------

    def _handle(self, http: BaseHTTPRequestHandler) -> None:
        parts = http.path.strip("/").split("/")
        if len(parts) != 4 or parts[2:] != ["v1", "messages"]:
            http.send_error(404)
            return
        case, run = parts[0], f"{parts[0]}/{parts[1]}"
        raw = http.rfile.read(int(http.headers.get("content-length", "0"))).decode()
        body = json.loads(raw)
        kind: Literal["turn", "summary"] = "summary" if _is_summary_request(body) else "turn"
        with self._lock:
            plan = self._plans.setdefault(run, RunPlan())
            state = self._cases.setdefault(case, CaseState())
            index = 1 + sum(1 for e in self.exchanges if e.run == run)
            exchange = Exchange(run, index, kind, body, _problems(body))
            self.exchanges.append(exchange)
            reply = self._reply(state, body, raw, kind)
            exchange.reply = reply
        if plan.delay:
            time.sleep(plan.delay)
        data = json.dumps(reply).encode()
        kill_now = plan.kill_at == index
        if kill_now and plan.kill_mode == "in_flight":
            self._kill(plan, http)
            return
        http.send_response(200)
        http.send_header("content-type", "application/json")
        http.send_header("content-length", str(len(data)))
        http.send_header("request-id", f"req_{case}_{index}")
        http.end_headers()
        try:
            if kill_now:
                http.wfile.write(data[: len(data) // 2])
                http.wfile.flush()
                exchange.sent = "half"
                self._kill(plan, http)
                return
            http.wfile.write(data)
            http.wfile.flush()
        except OSError:
            return
        exchange.sent = "all"

    @staticmethod
    def _kill(plan: RunPlan, http: BaseHTTPRequestHandler) -> None:
        http.close_connection = True
        if not plan.pid_known.wait(timeout=30) or plan.pid is None:
            return  # never told which process: the test sees the run finish and fails the case
        # Said before the signal: the harness reads it as soon as the child is gone, which can be
        # before this thread runs again (a kill that failed leaves no -SIGKILL exit, which it checks first).
        plan.killed = True
        os.kill(plan.pid, signal.SIGKILL)

    def _reply(self, state: CaseState, body: dict[str, Any], raw: str, kind: str) -> dict[str, Any]:
        state.counter += 1
        if kind == "summary":
            content: list[dict[str, Any]] = [{"type": "text", "text": SUMMARY_TEXT}]
            stop = "end_turn"
        else:
            content, stop = self._next_move(state, body)
        # Like a provider that caches automatically: the prefix shared with the case's previous request is read.
        shared = next((i for i, (a, b) in enumerate(zip(raw, state.last_body, strict=False)) if a != b), 0)
        state.last_body = raw
        read = shared // 4
        return {
            "id": f"msg_{state.counter:04d}",
            "type": "message",
            "role": "assistant",
            "model": MODEL,
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {
                "input_tokens": max(1, len(raw) // 4 - read),
                "output_tokens": 12 * len(content) + 8,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": read,
            },
        }

    def _next_move(self, state: CaseState, body: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
        for message in body["messages"]:
            for block in _blocks(message):
                if block["type"] == "tool_result" and not block.get("is_error"):
                    key = key_of(block["tool_use_id"])
                    if key is not None:
                        state.done.add(key)
                elif block["type"] == "text" and message["role"] == "user":
                    for task, text in TASK_TEXT.items():
                        if text in block["text"] and task not in state.tasks:
                            state.tasks.append(task)
        if not state.tasks:
            return [{"type": "text", "text": "There is no task to work on."}], "end_turn"
        task = state.tasks[-1]
        for number, step in enumerate(TASKS[task]):
            missing = [f"{task}{number}_{k}" for k in range(len(step)) if f"{task}{number}_{k}" not in state.done]
            if missing:
                calls = []
                for key in missing:
                    name, args = call_of(key)
                    state.counter += 1
                    calls.append(
                        {"type": "tool_use", "id": f"toolu_{key}_{state.counter}", "name": name, "input": args}
                    )
                return [{"type": "text", "text": f"Working on task {task}."}, *calls], "tool_use"
        return [{"type": "text", "text": f"DONE {task}: every step of task {task} is finished."}], "end_turn"


def _is_summary_request(body: dict[str, Any]) -> bool:
    """The engine asks for a summary at the end of the window (a cache read), or from a transcript."""
    last = list(_blocks(body["messages"][-1]))
    if last and last[-1].get("type") == "text" and last[-1].get("text", "").startswith(SUMMARY_OPENING):
        return True
    if (body.get("tool_choice") or {}).get("type") != "none":
        return False
    return any("<transcript>" in b.get("text", "") for m in body["messages"] for b in _blocks(m))


def _blocks(message: dict[str, Any]) -> Iterator[dict[str, Any]]:
    content = message["content"]
    if isinstance(content, str):
        yield {"type": "text", "text": content}
    else:
        yield from content


def _problems(body: dict[str, Any]) -> list[str]:
    problems = check_anthropic_body(body)
    for i, message in enumerate(body.get("messages", [])):
        ids = [b["tool_use_id"] for b in _blocks(message) if b["type"] == "tool_result"]
        if len(ids) != len(set(ids)):
            problems.append(f"messages[{i}] answers a tool_use id twice: {sorted(ids)}")
    return problems
