"""What the guide lets the embedded model do on each phrasing, without the model: seconds, not hours.

For every request of a phrasing set (``benchmarks/phrasings.py``'s files), the guide is asked what it
admits, as the agent loop would ask it; chats follow their expected path (the expected call is made
and its real result added; a request answered without a call gets the first answer on offer):

- first call: "forced" when the only reply admitted is an expected one, "possible" when an expected
  one is among several, "impossible" when none is admitted;
- answer, after the expected call: "forced" when every answer admitted holds the facts (a quote
  list), "possible" when some do or the answer is free text, "impossible" when none does or no
  answer is admitted yet; a chat request: "forced" when no tool is admitted and the reply is free;
- a write admitted to a request that asks for none.

It runs on any tiny-agent checkout whose guide takes a ``Prompt`` (``PYTHONPATH=<its src>``), so the
same command measures main before a change. The model's real choices are benchmarks/phrasings.py's.

    PYTHONPATH=src .venv/bin/python benchmarks/guide_offers.py [--tasks FILE] [--chats FILE]
        [--workspace-root DIR] [--label after]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from phrasings import DEV, ROOT, holds, load, same_call, workspace_dir

import tiny_agent
from tiny_agent.agent.loop import DEFAULT_SYSTEM
from tiny_agent.context.engine import Context
from tiny_agent.guide.json_guide import guide
from tiny_agent.tools.toolbox import Toolbox
from tiny_agent.tools.workspace import Workspace
from tiny_agent.types import Message, TextBlock, ToolUseBlock


def allowed(ctx: Context, toolbox: Toolbox) -> Any:
    prompt = ctx.prompt(tool_grammar=toolbox.grammar())
    if hasattr(prompt, "path_terms") and hasattr(toolbox, "path_terms"):  # not on main before issue 20
        prompt = dataclasses.replace(prompt, path_terms=toolbox.path_terms())
    return guide(prompt)


def first_calls(offer: Any) -> list[dict[str, Any] | None] | None:
    """Every first reply admitted (a call with its path, or None for an answer); None: too many to list."""
    replies: list[dict[str, Any] | None] = [None] if offer.answer is not None else []
    for name, schema in offer.grammar.items():
        enum = schema.get("properties", {}).get("path", {}).get("enum")
        if enum is None:
            return None
        replies.extend({"tool": name, "path": p} for p in enum)
    return replies


def judge_call(offer: Any, spec: dict[str, Any]) -> str:
    wanted = [spec.get("first_call"), *spec.get("alt_first_calls", [])]
    replies = first_calls(offer)
    if replies is None:
        return "possible" if any(w is not None and w["tool"] in offer.grammar for w in wanted) else "impossible"
    right = [r for r in replies if any(same_call(r, w) for w in wanted)]
    if not right:
        return "impossible"
    return "forced" if len(right) == len(replies) else "possible"


def judge_answer(offer: Any, spec: dict[str, Any]) -> tuple[str, str | None]:
    """(verdict, an answer to carry on with)."""
    if spec.get("kind") == "chat":
        free = offer.answer is not None and "enum" not in offer.answer and not offer.grammar
        return ("forced" if free else "impossible"), "Hello!"
    if offer.answer is None:
        return "impossible", None
    options = offer.answer.get("enum")
    if options is None:
        return "possible", None
    holding = [o for o in options if holds(o, spec.get("facts", []))]
    verdict = "forced" if holding and len(holding) == len(options) else "possible" if holding else "impossible"
    return verdict, options[0]


def judge(ctx: Context, toolbox: Toolbox, spec: dict[str, Any]) -> dict[str, Any]:
    """Ask the guide about one request; the context is left as if it went the expected way."""
    ctx.add_user(spec["request"])
    offer = allowed(ctx, toolbox)
    row: dict[str, Any] = {"request": spec["request"], "kind": spec.get("kind"), "first_call": judge_call(offer, spec)}
    row["write_offered_unasked"] = spec.get("no_write", True) and "write_file" in offer.grammar
    call = spec.get("first_call")
    if call is not None:
        use = ToolUseBlock(f"c{len(ctx.messages)}", call["tool"], {"path": call["path"]})
        ctx.add_assistant(Message("assistant", (use,)))
        ctx.add_tool_results([toolbox.run(use)])
        offer = allowed(ctx, toolbox)
        row["write_offered_unasked"] = row["write_offered_unasked"] or (
            spec.get("no_write", True) and "write_file" in offer.grammar
        )
    if spec.get("write_path"):
        row["answer"] = "not judged (a write)"
        ctx.add_assistant(Message("assistant", (TextBlock("written"),)))
        return row
    row["answer"], text = judge_answer(offer, spec)
    ctx.add_assistant(Message("assistant", (TextBlock(text or "ok"),)))
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=Path, default=DEV / "tasks.json")
    parser.add_argument("--chats", type=Path, default=DEV / "chats.json")
    parser.add_argument("--workspace-root", type=Path, default=None)
    parser.add_argument("--label", default="")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    tasks, chats = load(args.tasks), load(args.chats)
    name = next((t.get("set") for t in [*tasks, *chats] if t.get("set")), args.tasks.parent.name)
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        runs = [(t["workspace"], [t], t.get("id")) for t in tasks] + [
            (c["workspace"], c["requests"], c.get("id")) for c in chats
        ]
        for index, (workspace, specs, ident) in enumerate(runs):
            work = Path(shutil.copytree(workspace_dir(workspace, args.workspace_root), Path(tmp) / str(index)))
            toolbox = Toolbox(Workspace(work).tools())
            ctx = Context(DEFAULT_SYSTEM, toolbox.specs)
            for turn, spec in enumerate(specs):
                rows.append({"id": ident, "turn": turn + 1, **judge(ctx, toolbox, spec)})
    summary = {
        "set": name,
        "label": args.label,
        "requests": len(rows),
        "first_call": dict(Counter(r["first_call"] for r in rows)),
        "answer": dict(Counter(r["answer"] for r in rows)),
        "write_offered_unasked": sum(bool(r["write_offered_unasked"]) for r in rows),
        "date": time.strftime("%Y-%m-%d"),
        "code": str(Path(tiny_agent.__file__).parent),  # main's src for a "before" run
        "command": " ".join(["PYTHONPATH=src .venv/bin/python benchmarks/guide_offers.py", *sys.argv[1:]]),
    }
    out = (
        args.out
        or ROOT / "benchmarks" / "results" / f"guide_offers_{name}{'_' + args.label if args.label else ''}.json"
    )
    out.write_text(json.dumps({"summary": summary, "rows": rows}, indent=2) + "\n")
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
