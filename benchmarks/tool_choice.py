"""How well does the embedded model use the workspace tools? Real llama.cpp server, real model.

Two measures over the tasks below, on two sample workspaces (examples/workspace, examples/bakery),
each task with several seeds:

- single step: one model turn, exactly as the agent loop renders it (tool grammar included); is the
  first reply the expected tool, and the expected tool with the expected path? For a question about a
  file already read, the expected reply is an answer (no call) that contains the fact.
- end to end: the real agent loop (``Agent`` over ``Toolbox(Workspace(copy).tools())``) runs the
  task on a fresh copy of the workspace. Completed: the run ended with an answer (``done``) and the
  answer contains the fact asked for; for a write request, the written file contains it.

Writes benchmarks/results/tool_choice.json (or ``--out``). ``--levers`` runs the same tasks once
per rung of a ladder instead, from free strings to the full guide, one decoding lever added per
rung, and writes benchmarks/results/tool_choice_levers.json: what each lever bought.

    PYTHONPATH=src .venv/bin/python benchmarks/tool_choice.py [--seeds 3] [--model PATH.gguf] [--levers]
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from tiny_agent.agent.loop import DEFAULT_SYSTEM, Agent, AgentConfig, ToolEvent
from tiny_agent.context.engine import Context
from tiny_agent.errors import ProviderError
from tiny_agent.providers.local.llama_server import LlamaServer, find_default_model
from tiny_agent.providers.local.provider import LocalProvider
from tiny_agent.tools.toolbox import Toolbox
from tiny_agent.tools.workspace import Workspace
from tiny_agent.types import Message, ToolUseBlock

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "tool_choice.json"
LEVER_RESULTS = ROOT / "benchmarks" / "results" / "tool_choice_levers.json"
_NO_GUIDE = {"follow_request": False, "required_only": False, "look_first": False, "no_repeat": False}
_OLD = {"match_words": False, "own_request": False, "phrasing": False}
"""Issue 20's levers, off on the rungs measured before them."""
LADDER: list[tuple[str, dict[str, Any]]] = [
    ("free strings (no workspace grammar)", {"grammar": False, "guided": False}),
    ("workspace grammar (files, folders, path required)", {"guided": False}),
    (
        "+ paths the request names",
        {"guide": {**_NO_GUIDE, **_OLD, "follow_request": True, "quote": False, "max_calls": None}},
    ),
    (
        "+ required arguments only",
        {
            "guide": {
                **_NO_GUIDE,
                **_OLD,
                **{"follow_request": True, "required_only": True, "quote": False, "max_calls": None},
            }
        },
    ),
    ("+ look before answering", {"guide": {**_OLD, "no_repeat": False, "quote": False, "max_calls": None}}),
    ("+ no repeated read", {"guide": {**_OLD, "quote": False, "max_calls": None}}),
    ("+ at most two looks", {"guide": {**_OLD, "quote": False}}),
    ("+ answers quoted from tool results", {"guide": _OLD}),
    ("+ words that name a file or are in it", {"guide": {"own_request": False, "phrasing": False}}),
    ("+ each request answered from what it gathered", {"guide": {"phrasing": False}}),
    ("+ the request's phrasing: small talk, a whole file, a folder (the default)", {}),
]
"""Each rung: LocalProvider settings (``guided``, ``guide_options``) and whether the workspace grammar is sent."""
MAX_STEPS = 4
"""Steps an end-to-end run may take: every task here needs one call and one answer (two steps)."""


@dataclass(frozen=True)
class Task:
    workspace: str
    """Folder under examples/."""
    request: str
    tool: str
    """The expected first reply: a tool name, or "answer" for a reply without a call."""
    path: str | None
    fact: str
    """What the answer (or, for a write, the written file) must contain, case-insensitively."""
    kind: str
    read_first: str | None = None
    """A file read before the request (a scripted call and its real result): the question is about
    it. The question joins the user turn that carries the result, as the engine does with new input."""


TASKS = [
    Task("workspace", "Read notes.txt and tell me what it says.", "read_file", "notes.txt", "checklist", "read"),
    Task("workspace", "What port does config.json set?", "read_file", "config.json", "3000", "read"),
    Task("workspace", "Which files are in this workspace?", "list_dir", ".", "notes.txt", "list"),
    Task("workspace", "List the files in the docs folder.", "list_dir", "docs", "architecture.md", "list"),
    Task(
        "workspace",
        "Open docs/architecture.md: what is the log?",
        "read_file",
        "docs/architecture.md",
        "append-only",
        "nested",
    ),
    Task("workspace", "Write a file todo.txt that says: buy milk", "write_file", "todo.txt", "buy milk", "write"),
    Task(
        "workspace",
        "What is the first item on the checklist?",
        "answer",
        None,
        "fresh clone",
        "recall",
        read_first="notes.txt",
    ),
    Task("bakery", "What time does the bakery open? See hours.md.", "read_file", "hours.md", "7am", "read"),
    Task("bakery", "How much is a croissant? Prices are in menu.txt.", "read_file", "menu.txt", "2 euros", "read"),
    Task("bakery", "Who works on Wednesday? Check staff/rota.txt.", "read_file", "staff/rota.txt", "Tom", "nested"),
    Task("bakery", "What is in the recipes/bread folder?", "list_dir", "recipes/bread", "sourdough", "nested"),
    Task(
        "bakery",
        "How hot is the oven for recipes/bread/sourdough.md?",
        "read_file",
        "recipes/bread/sourdough.md",
        "240",
        "nested",
    ),
    Task("bakery", "Write a file ideas.txt that says: try rye bread", "write_file", "ideas.txt", "rye", "write"),
    Task("bakery", "How much is the sourdough loaf?", "answer", None, "6 euros", "recall", read_first="menu.txt"),
]


def same_path(got: object, want: str | None) -> bool:
    if not isinstance(got, str) or want is None:
        return False
    norm = got.strip().removeprefix("./").rstrip("/") or "."
    return norm == want


def prepare(task: Task, work: Path, *, grammar: bool = True) -> tuple[Workspace, Toolbox, Context]:
    """A fresh copy of the task's workspace, its tools, and a context holding what came before."""
    shutil.copytree(ROOT / "examples" / task.workspace, work, dirs_exist_ok=True)
    workspace = Workspace(work)
    toolbox = Toolbox(workspace.tools(grammar=grammar))  # without: no path grammar, no file words
    ctx = Context(DEFAULT_SYSTEM, toolbox.specs)
    if task.read_first:
        ctx.add_user(f"Read {task.read_first}.")
        call = ToolUseBlock("call_read_first", "read_file", {"path": task.read_first})
        ctx.add_assistant(Message("assistant", (call,)))
        ctx.add_tool_results([toolbox.run(call)])
    return workspace, toolbox, ctx


def single_step(provider: LocalProvider, task: Task, work: Path, *, grammar: bool = True) -> dict[str, Any]:
    """One turn, rendered as the agent loop renders it."""
    _, toolbox, ctx = prepare(task, work, grammar=grammar)
    ctx.add_user(task.request)
    try:
        # As the agent loop sends them (main's benchmark asked a ``wants_tool_grammar`` that was gone).
        response = ctx.complete(provider, tool_grammar=toolbox.grammar(), path_terms=toolbox.path_terms())
    except ProviderError as exc:  # a timeout, say: a wrong reply, not the end of the benchmark
        return {"got": {"error": str(exc)}, "right_tool": False, "right_tool_and_path": False}
    calls = response.message.tool_uses
    call = calls[0] if calls else None
    text = response.message.text
    if task.tool == "answer":
        right_tool = call is None
        right_path = right_tool and task.fact.lower() in text.lower()
    else:
        right_tool = call is not None and call.name == task.tool
        right_path = right_tool and call is not None and same_path(call.input.get("path"), task.path)
    got = {"tool": call.name, "input": dict(call.input)} if call else {"answer": text[:300]}
    return {"got": got, "right_tool": right_tool, "right_tool_and_path": right_path}


def end_to_end(provider: LocalProvider, task: Task, work: Path, *, grammar: bool = True) -> dict[str, Any]:
    workspace, toolbox, ctx = prepare(task, work, grammar=grammar)
    agent = Agent(provider, toolbox, config=AgentConfig(max_steps=MAX_STEPS), context=ctx)
    result = agent.run(task.request)
    calls = [_call(e) for e in result.events if isinstance(e, ToolEvent)]
    if task.tool == "write_file":
        target = workspace.root / (task.path or "")
        written = target.read_text(errors="replace") if target.is_file() else ""
        found = task.fact.lower() in written.lower()
    else:
        found = task.fact.lower() in result.answer.lower()
    return {
        "stop": result.stop,
        "steps": result.steps,
        "calls": calls,
        "answer": result.answer[:300],
        "fact_found": found,
        "completed": found and result.stop == "done",
        "tokens_in": agent.context.ledger.total.input_tokens,
    }


def _call(event: ToolEvent) -> str:
    args = ", ".join(f"{k}={json.dumps(v)[:60]}" for k, v in event.call.input.items())
    return f"{'x' if event.result.is_error else 'ok'} {event.call.name}({args})"


def run(args: argparse.Namespace, server: LlamaServer, rung: dict[str, Any] | None = None) -> dict[str, Any]:
    rung = rung or {}
    sampling: dict[str, Any] = json.loads(args.sampling) if args.sampling else {}
    rows: list[dict[str, Any]] = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        for index, task in enumerate(TASKS):
            for seed in range(args.seeds):
                provider = LocalProvider(
                    base_url=server.base_url,
                    api_key=server.api_key,
                    sampling={**sampling, "seed": seed},
                    guided=rung.get("guided", True),
                    guide_options=rung.get("guide"),
                    **({"max_tokens": args.max_tokens} if args.max_tokens else {}),
                )
                grammar = rung.get("grammar", True)
                row: dict[str, Any] = {"task": asdict(task), "seed": seed}
                row["single"] = single_step(provider, task, Path(tmp) / f"s{index}-{seed}", grammar=grammar)
                if not args.single_only:
                    work = Path(tmp) / f"e{index}-{seed}"
                    row["end_to_end"] = end_to_end(provider, task, work, grammar=grammar)
                rows.append(row)
                print(_progress(row), file=sys.stderr, flush=True)
    return {"summary": summarise(rows, args, server.model, time.monotonic() - started), "rows": rows}


def _progress(row: dict[str, Any]) -> str:
    single, e2e = row["single"], row.get("end_to_end")
    mark = "path" if single["right_tool_and_path"] else "tool" if single["right_tool"] else "-"
    done = "" if e2e is None else f" · e2e {'done' if e2e['completed'] else e2e['stop']}: {e2e['calls']}"
    return f"{row['task']['request'][:50]:50} seed {row['seed']} · {mark:4} {single['got']}{done}"


def summarise(rows: list[dict[str, Any]], args: argparse.Namespace, model: Path, seconds: float) -> dict[str, Any]:
    e2e = [r["end_to_end"] for r in rows if "end_to_end" in r]
    by_kind: dict[str, list[int]] = {}
    for r in rows:
        counts = by_kind.setdefault(r["task"]["kind"], [0, 0, 0])
        counts[0] += r["single"]["right_tool_and_path"]
        counts[1] += bool(r.get("end_to_end", {}).get("completed"))
        counts[2] += 1
    command = f"PYTHONPATH=src .venv/bin/python benchmarks/tool_choice.py --seeds {args.seeds}"
    if args.sampling:
        command += f" --sampling '{args.sampling}'"
    if args.max_tokens:
        command += f" --max-tokens {args.max_tokens}"
    if args.single_only:
        command += " --single-only"
    return {
        "model": model.stem,
        "tasks": len(TASKS),
        "seeds": args.seeds,
        "single_step_calls": len(rows),
        "right_tool": sum(r["single"]["right_tool"] for r in rows),
        "right_tool_and_path": sum(r["single"]["right_tool_and_path"] for r in rows),
        "end_to_end_runs": len(e2e),
        "end_to_end_completed": sum(r["completed"] for r in e2e),
        "by_kind": {k: {"right_tool_and_path": v[0], "completed": v[1], "of": v[2]} for k, v in by_kind.items()},
        "sampling": json.loads(args.sampling) if args.sampling else "server defaults, seed = 0..seeds-1",
        "seconds": round(seconds, 1),
        "machine": f"{platform.machine()}, {platform.system()}, python {platform.python_version()}",
        "date": time.strftime("%Y-%m-%d"),
        "command": command,
    }


_LEVER_FIELDS = (
    "single_step_calls",
    "right_tool",
    "right_tool_and_path",
    "end_to_end_runs",
    "end_to_end_completed",
    "by_kind",
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=3, help="runs per task, seeds 0..N-1")
    parser.add_argument("--model", default=None, help="a .gguf file (default: the embedded SmolLM2-135M)")
    parser.add_argument("--sampling", default=None, help="JSON merged into each request, e.g. '{\"temperature\": 0}'")
    parser.add_argument("--max-tokens", type=int, default=None, help="output cap per call (default: the provider's)")
    parser.add_argument("--single-only", action="store_true", help="skip the end-to-end runs")
    parser.add_argument("--levers", action="store_true", help="run the ladder of decoding levers")
    parser.add_argument("--rungs", default=None, help="with --levers: only these rungs, e.g. 1,4,6 (0 is the first)")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    model = Path(args.model) if args.model else find_default_model()
    if args.levers:
        out = args.out or LEVER_RESULTS
        ladder = []
        with LlamaServer(model) as server:
            chosen = [int(i) for i in args.rungs.split(",")] if args.rungs else range(len(LADDER))
            for name, rung in [LADDER[i] for i in chosen]:
                print(f"== {name}", file=sys.stderr, flush=True)
                summary = run(args, server, rung)["summary"]
                ladder.append({"rung": name, **{k: summary[k] for k in _LEVER_FIELDS}})
        command = summary["command"] + " --levers" + (f" --rungs {args.rungs}" if args.rungs else "")
        out.write_text(json.dumps({"ladder": ladder, "command": command, "date": summary["date"]}, indent=2) + "\n")
        print(json.dumps(ladder, indent=2))
        return
    args.out = args.out or RESULTS
    with LlamaServer(model) as server:
        results = run(args, server)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results["summary"], indent=2))


if __name__ == "__main__":
    main()
