"""How often does the embedded model pick the right tool and path on the sample workspace?

Runs one model turn per sample task on the local provider (real llama.cpp server, real model) and
checks the first reply: the expected tool with the expected path. Writes
benchmarks/results/tool_choice.json.

    .venv/bin/python benchmarks/tool_choice.py [--repeats 3] [--model PATH.gguf]
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

from tiny_agent.agent.loop import DEFAULT_SYSTEM
from tiny_agent.agent.tools import Toolbox
from tiny_agent.agent.workspace import Workspace
from tiny_agent.context.engine import Context
from tiny_agent.providers.local import LocalProvider

ROOT = Path(__file__).resolve().parents[1]
WORKSPACE = ROOT / "examples" / "workspace"
RESULTS = ROOT / "benchmarks" / "results" / "tool_choice.json"

TASKS = [
    ("Read notes.txt and tell me what it says.", "read_file", "notes.txt"),
    ("What is in config.json?", "read_file", "config.json"),
    ("Show me the file README.md.", "read_file", "README.md"),
    ("List the files in the docs folder.", "list_dir", "docs"),
    ("Which files are in this workspace?", "list_dir", "."),
    ("Open docs/architecture.md and summarise it.", "read_file", "docs/architecture.md"),
]


def same_path(got: object, want: str) -> bool:
    if not isinstance(got, str):
        return False
    norm = got.strip().removeprefix("./").rstrip("/") or "."
    return norm == want


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--model", default=None)
    args = parser.parse_args()
    toolbox = Toolbox(Workspace(WORKSPACE).tools())
    rows = []
    started = time.monotonic()
    with LocalProvider(model_path=args.model, max_tokens=64, use_warm=False) as provider:
        for task, tool, path in TASKS:
            for attempt in range(args.repeats):
                ctx = Context(DEFAULT_SYSTEM, toolbox.specs)
                ctx.add_user(task)
                # A different seed per attempt: the same prompt would otherwise give the same reply.
                body = provider.render(ctx.prompt())
                body["seed"] = attempt
                reply = provider.send(body).message
                calls = reply.tool_uses
                call = calls[0] if calls else None
                rows.append(
                    {
                        "task": task,
                        "attempt": attempt,
                        "expected": {"tool": tool, "path": path},
                        "got": {"tool": call.name, "input": dict(call.input)} if call else {"text": reply.text[:200]},
                        "right_tool": bool(call and call.name == tool),
                        "right_tool_and_path": bool(
                            call and call.name == tool and same_path(call.input.get("path"), path)
                        ),
                    }
                )
        model = provider.model
    n = len(rows)
    summary = {
        "model": model,
        "tasks": len(TASKS),
        "repeats": args.repeats,
        "calls": n,
        "right_tool": sum(r["right_tool"] for r in rows),
        "right_tool_and_path": sum(r["right_tool_and_path"] for r in rows),
        "seconds": round(time.monotonic() - started, 1),
        "machine": f"{platform.machine()}, {platform.system()}, python {platform.python_version()}",
        "date": time.strftime("%Y-%m-%d"),
        "command": f"python benchmarks/tool_choice.py --repeats {args.repeats}",
    }
    RESULTS.write_text(json.dumps({"summary": summary, "rows": rows}, indent=2) + "\n")
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
