"""Requests as people phrase them, alone and in a chat, on the embedded model. Real llama.cpp server.

The requests come from files written by someone who had not read the guide's code (the dev set is
``benchmarks/phrasings/dev``): ``tasks.json`` holds single requests, ``chats.json`` scenarios of
several requests in a row in one conversation. Each names a workspace: a folder under
``--workspace-root`` or under examples/. Every request runs through the real agent loop on a fresh
copy of its workspace (a chat keeps one copy and one conversation for all its requests) and is
scored on its own:

- right first call: the first tool call is ``first_call`` or one of ``alt_first_calls`` (``null``:
  an answer with no call);
- facts held: the answer (for a write, the written file) holds one form of every fact;
- nothing written unasked: with ``no_write`` the workspace is byte-identical afterwards; else only
  ``write_path`` changed;
- a chat request (kind "chat") gets a reply with no tool call that quotes no file;
- in a chat, a request that does not refer back is not answered with an earlier request's reply;
- done: all of the above, and the run ended with an answer.

Writes benchmarks/results/phrasings_<set>[_<label>].json (or ``--out``)::

    PYTHONPATH=src .venv/bin/python benchmarks/phrasings.py [--tasks FILE] [--chats FILE]
        [--workspace-root DIR] [--seeds 2] [--label after]
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import tiny_agent
from tiny_agent.agent.loop import Agent, AgentConfig, ToolEvent
from tiny_agent.providers.local.llama_server import LlamaServer, find_default_model
from tiny_agent.providers.local.provider import LocalProvider
from tiny_agent.tools.toolbox import Toolbox
from tiny_agent.tools.workspace import Workspace

ROOT = Path(__file__).resolve().parents[1]
DEV = ROOT / "benchmarks" / "phrasings" / "dev"
MAX_STEPS = 4
CHAT_REPLY_CHARS = 300
"""A reply to a greeting longer than this is not a short one."""
QUOTE_MIN = 8
"""A file line this long, found in a chat reply, makes the reply a quote."""


class QuietServer(LlamaServer):
    """The benchmark's server decodes on one thread: on a machine shared with other servers, two
    threads that meet at every layer waited for each other's turn on the CPU (a generated token
    took 3 to 7 s here, with a dozen busy threads on two cores). What is measured is choices and
    answers, not speed."""

    def command(self) -> list[str]:
        cmd = super().command()
        cmd[cmd.index("-t") + 1] = "1"
        return cmd


def workspace_dir(name: str, root: Path | None) -> Path:
    for base in (root, ROOT / "examples"):
        if base is not None and (base / name).is_dir():
            return base / name
    sys.exit(f"phrasings: workspace {name!r} is neither under --workspace-root nor under examples/")


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def same_call(got: dict[str, Any] | None, want: dict[str, Any] | None) -> bool:
    if got is None or want is None:
        return got is None and want is None
    path = str(got.get("path", ".")).strip().removeprefix("./").rstrip("/") or "."
    return bool(got["tool"] == want["tool"] and path == want.get("path", "."))


def holds(text: str, facts: list[list[str]]) -> bool:
    lower = text.lower()
    return all(any(form.lower() in lower for form in group) for group in facts)


def quotes_a_file(answer: str, files: dict[str, bytes]) -> bool:
    lines = {
        line.strip().lower()
        for data in files.values()
        for line in data.decode("utf-8", "replace").splitlines()
        if len(line.strip()) >= QUOTE_MIN
    }
    lower = answer.lower()
    return any(line in lower for line in lines)


def load(path: Path) -> list[dict[str, Any]]:
    """A JSON list of tasks or chats ("-": none); a file that is not one ends the run with one line."""
    if str(path) == "-":
        return []
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        sys.exit(f"phrasings: cannot read {path}: {exc}")
    if not isinstance(data, list) or not all(isinstance(item, dict) and "workspace" in item for item in data):
        sys.exit(f"phrasings: {path} is not a JSON list of tasks or chats, each naming its workspace")
    return data


def run_request(agent: Agent, work: Path, spec: dict[str, Any], earlier: list[str]) -> dict[str, Any]:
    """One request through the loop, scored."""
    before = snapshot(work)
    started = time.monotonic()
    result = agent.run(spec["request"])
    seconds = time.monotonic() - started
    after = snapshot(work)
    calls = [e for e in result.events if isinstance(e, ToolEvent)]
    first = {"tool": calls[0].call.name, **calls[0].call.input} if calls else None
    wanted = [spec.get("first_call"), *spec.get("alt_first_calls", [])]
    changed = sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))
    write_path = spec.get("write_path")
    unasked = changed if spec.get("no_write", True) else [p for p in changed if p != write_path]
    facts_in = after.get(write_path, b"").decode("utf-8", "replace") if write_path else result.answer
    row: dict[str, Any] = {
        "request": spec["request"],
        "kind": spec.get("kind"),
        "first_call": first,
        "calls": [_call(e) for e in calls],
        "answer": result.answer[:400],
        "stop": result.stop,
        "seconds": round(seconds, 1),
        "right_first_call": any(same_call(first, w) for w in wanted),
        "facts_held": holds(facts_in, spec.get("facts", [])),
        "nothing_written_unasked": not unasked,
        "written_unasked": unasked,
    }
    ok = row["right_first_call"] and row["facts_held"] and not unasked and result.stop == "done"
    if spec.get("kind") == "chat":
        row["chat_reply"] = (
            not calls
            and bool(result.answer.strip())
            and len(result.answer) <= CHAT_REPLY_CHARS
            and not quotes_a_file(result.answer, before)
        )
        ok = ok and row["chat_reply"]
    if "refers_back" in spec:
        row["refers_back"] = spec["refers_back"]
        row["repeats_an_earlier_reply"] = not spec["refers_back"] and result.answer.strip() in earlier
        ok = ok and not row["repeats_an_earlier_reply"]
    row["done"] = bool(ok)
    return row


def _call(event: ToolEvent) -> str:
    return f"{'x' if event.result.is_error else 'ok'} {event.call.name}({json.dumps(event.call.input)[:80]})"


def provider_for(server: LlamaServer, seed: int) -> LocalProvider:
    return LocalProvider(base_url=server.base_url, api_key=server.api_key, sampling={"seed": seed})


def run_set(
    tasks: list[dict[str, Any]],
    chats: list[dict[str, Any]],
    root: Path | None,
    server: LlamaServer,
    seeds: int,
    progress: Callable[[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]], None],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Every chat, then every task, once per seed; ``progress`` gets the rows so far after each request."""
    task_rows: list[dict[str, Any]] = []
    chat_rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(seeds):
            for index, chat in enumerate(chats):
                work = Path(shutil.copytree(workspace_dir(chat["workspace"], root), Path(tmp) / f"c{seed}-{index}"))
                agent = Agent(provider_for(server, seed), Toolbox(Workspace(work).tools()), config=_config())
                earlier: list[str] = []
                for turn, spec in enumerate(chat["requests"]):
                    row = {"id": chat.get("id"), "turn": turn + 1, "seed": seed}
                    row.update(run_request(agent, work, spec, earlier))
                    earlier.append(row["answer"].strip())
                    chat_rows.append(row)
                    progress(row, task_rows, chat_rows)
            for index, task in enumerate(tasks):
                work = Path(shutil.copytree(workspace_dir(task["workspace"], root), Path(tmp) / f"t{seed}-{index}"))
                agent = Agent(provider_for(server, seed), Toolbox(Workspace(work).tools()), config=_config())
                row = {"id": task.get("id"), "seed": seed, **run_request(agent, work, task, [])}
                task_rows.append(row)
                progress(row, task_rows, chat_rows)
    return task_rows, chat_rows


def _config() -> AgentConfig:
    return AgentConfig(max_steps=MAX_STEPS)


def _line(row: dict[str, Any]) -> str:
    mark = "done" if row["done"] else "call" if row["right_first_call"] else "-"
    where = f"{row['id']}#{row.get('turn', '')}"
    return f"{mark:4} {where:28} {row['request'][:40]:40} {row['calls']} -> {row['answer'][:60]!r}"


def tally(rows: list[dict[str, Any]]) -> dict[str, Any]:
    by_kind: dict[str, dict[str, int]] = {}
    for r in rows:
        kind = by_kind.setdefault(str(r["kind"]), {"right_first_call": 0, "facts_held": 0, "done": 0, "of": 0})
        kind["right_first_call"] += r["right_first_call"]
        kind["facts_held"] += r["facts_held"]
        kind["done"] += r["done"]
        kind["of"] += 1
    return {
        "requests": len(rows),
        "right_first_call": sum(r["right_first_call"] for r in rows),
        "facts_held": sum(r["facts_held"] for r in rows),
        "written_unasked": sum(not r["nothing_written_unasked"] for r in rows),
        "repeated_an_earlier_reply": sum(bool(r.get("repeats_an_earlier_reply")) for r in rows),
        "done": sum(r["done"] for r in rows),
        "by_kind": by_kind,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=Path, default=DEV / "tasks.json", help="single requests (JSON list)")
    parser.add_argument("--chats", type=Path, default=DEV / "chats.json", help="chat scenarios (JSON list)")
    parser.add_argument("--workspace-root", type=Path, default=None, help="where named workspaces are (then examples/)")
    parser.add_argument("--seeds", type=int, default=2, help="runs of everything, seeds 0..N-1")
    parser.add_argument("--model", default=None, help="a .gguf file (default: the embedded SmolLM2-135M)")
    parser.add_argument("--label", default="", help="added to the results file's name, e.g. before")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    tasks, chats = load(args.tasks), load(args.chats)
    for item in [*tasks, *chats]:  # a workspace that is not there ends the run before the server starts
        workspace_dir(item["workspace"], args.workspace_root)
    name = next((t.get("set") for t in [*tasks, *chats] if t.get("set")), args.tasks.parent.name)
    out = args.out or ROOT / "benchmarks" / "results" / f"phrasings_{name}{'_' + args.label if args.label else ''}.json"
    model = Path(args.model) if args.model else find_default_model()
    started = time.monotonic()
    command = "PYTHONPATH=src .venv/bin/python benchmarks/phrasings.py"
    for flag, path in (("--tasks", args.tasks), ("--chats", args.chats)):
        if path.resolve() != (DEV / path.name).resolve():
            command += f" {flag} {path}"
    command += f" --seeds {args.seeds}"
    if args.workspace_root:
        command += f" --workspace-root {args.workspace_root}"
    if args.label:
        command += f" --label {args.label}"
    planned = args.seeds * (len(tasks) + sum(len(c["requests"]) for c in chats))

    def write(
        row: dict[str, Any] | None, task_rows: list[dict[str, Any]], chat_rows: list[dict[str, Any]]
    ) -> dict[str, Any]:
        """The results so far, written after every request: a run cut short still says what it saw."""
        if row is not None:
            _print(_line(row))
        summary = {
            "set": name,
            "label": args.label,
            "model": model.stem,
            "seeds": args.seeds,
            "measured": len(task_rows) + len(chat_rows),
            "planned": planned,
            "tasks": tally(task_rows),
            "chats": tally(chat_rows),
            "all": tally(task_rows + chat_rows),
            "seconds": round(time.monotonic() - started, 1),
            "machine": f"{platform.machine()}, {platform.system()}, python {platform.python_version()}",
            "date": time.strftime("%Y-%m-%d"),
            "code": str(Path(tiny_agent.__file__).parent),  # main's src for a "before" run
            "command": command,
        }
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps({"summary": summary, "tasks": task_rows, "chats": chat_rows}, indent=2) + "\n")
        return summary

    with QuietServer(model) as server:
        task_rows, chat_rows = run_set(tasks, chats, args.workspace_root, server, args.seeds, write)
    print(json.dumps(write(None, task_rows, chat_rows), indent=2))


def _print(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
