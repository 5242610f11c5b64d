"""The scripted long task of the cache-economics benchmark: a workspace, 45 model turns, probes.

The same script runs under every policy, so the only thing that differs between policies is what
the context engine sends. Everything is deterministic (seeded text, fixed tool ids, a simulated clock).

The task: four requests from a user about a small web service. The model lists folders, reads files
of 1k to 8k tokens, writes notes and a config change, and meets three tool errors (a missing file
twice, a protected file once). Two constraints are pinned from the start; a third arrives later as
an ordinary user request.

Probes: at a given turn the task needs a fact first seen many turns earlier: a value inside a file,
an error message, a constraint from a user message. A probe is "present" when the fact is in the
request the model sees at that turn (a kept turn, the summary or record, a pin); "recovered" when it
is not, but the request names the file it is in (the record's files, a stub of cleared output) and
the model reads that file again first, as a capable model does and as stubs tell it to (the extra
turn is billed like any other); otherwise "lost". The scripted summarizer names the files read and
written but no file content, error or constraint: probes measure what the engine carries itself.

The model of time: a model turn takes 2 s plus 1 s per 50 output tokens; a tool call 0.1 to 0.4 s;
the user takes 45 s between requests, and once (after the second request) is away for 6 minutes,
so a 5-minute cache expires there and only there.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PINS = (
    "Never edit apps/service-a/scripts/dev.mjs; change config/dev.json instead.",
    "Do not add new dependencies.",
)

MODEL_SECONDS = 2.0
OUTPUT_TOKENS_PER_SECOND = 50.0
TOOL_SECONDS = {"read_file": 0.4, "list_dir": 0.1, "write_file": 0.2}
PROTECTED = "apps/service-a/scripts/dev.mjs"

FACT_LIMIT = "max_inflight_requests = 417"
FACT_POOL = "POOL_RECYCLE_SECONDS = 1873"
ERROR_MISSING = "no such file: docs/deploy.md"
ERROR_PROTECTED = f"refused: {PROTECTED} is protected"
CONSTRAINT_MS = "Report every duration in milliseconds, never seconds."

FILES = {
    # path: (approximate tokens, kind, planted fact)
    "README.md": (1200, "md", None),
    "docs/architecture.md": (3000, "md", None),
    "docs/runbook.md": (2500, "md", None),
    "docs/changelog.md": (1800, "md", None),
    "config/limits.toml": (1000, "toml", FACT_LIMIT + "  # per worker; above it the server answers 503"),
    "config/dev.json": (1000, "json", None),
    PROTECTED: (1500, "js", None),
    "src/service/server.py": (6000, "py", None),
    "src/service/routes.py": (8000, "py", None),
    "src/service/db.py": (4000, "py", FACT_POOL + "  # recycle pooled connections before the proxy drops them"),
    "src/service/auth.py": (5000, "py", None),
    "src/service/cache.py": (3000, "py", None),
    "src/service/metrics.py": (2000, "py", None),
    "tests/test_server.py": (3000, "py", None),
    "tests/test_db.py": (2500, "py", None),
    "data/sample.csv": (4000, "csv", None),
}

_VOCABULARY = (
    "request response socket worker pool connection retry timeout budget queue handler route token session "
    "cache entry header body limit window backoff shard replica primary lease lock cursor batch stream buffer "
    "parser schema record ledger invoice account tenant region zone probe health metric counter gauge span "
    "trace event signal deadline latency throughput payload frame channel client server proxy gateway upstream"
)
_WORDS = _VOCABULARY.split()


def _line(rng: random.Random, kind: str, n: int) -> str:
    w = [rng.choice(_WORDS) for _ in range(6)]
    if kind == "py":
        return (
            f"def {w[0]}_{w[1]}_{n}({w[2]}, timeout_ms={rng.randint(10, 900)}):\n"
            f'    """{w[3].capitalize()} the {w[4]} {w[5]} before the {w[1]} is released."""\n'
            f'    {w[2]}_{w[3]} = {w[2]}.get("{w[4]}", {rng.randint(1, 64)})\n'
            f"    return {w[5]}_{w[0]}({w[2]}_{w[3]}, limit={rng.randint(2, 512)})\n\n"
        )
    if kind == "md":
        head = f"## {w[0].capitalize()} {w[1]}\n\n" if n % 6 == 0 else ""
        return (
            f"{head}The {w[0]} {w[1]} keeps each {w[2]} within its {w[3]}; a {w[4]} {w[5]} resets it after {n} tries.\n"
        )
    if kind == "toml":
        return f"{w[0]}_{w[1]}_{n} = {rng.randint(1, 5000)}  # {w[2]} {w[3]} {w[4]}\n"
    if kind == "json":
        return f'  "{w[0]}_{w[1]}_{n}": {{"{w[2]}": {rng.randint(1, 999)}, "{w[3]}": "{w[4]}-{w[5]}"}},\n'
    if kind == "js":
        return f"export const {w[0]}{w[1].capitalize()}{n} = ({w[2]}) => {w[3]}({w[2]}, {rng.randint(1, 99)});\n"
    return f"{n},{w[0]},{w[1]},{rng.randint(100, 99999)},{w[2]}-{w[3]},{rng.random():.4f}\n"


def file_text(path: str, tokens: int, kind: str, fact: str | None) -> str:
    """Deterministic text of about ``tokens`` tokens (4 characters each), ``fact`` on a line in the middle."""
    rng = random.Random(path)
    lines: list[str] = []
    while sum(map(len, lines)) < tokens * 4:
        lines.append(_line(rng, kind, len(lines)))
    if fact:
        lines.insert(len(lines) // 2, fact + "\n")
    return "".join(lines)


def make_workspace(root: Path) -> None:
    for path, (tokens, kind, fact) in FILES.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(file_text(path, tokens, kind, fact), encoding="utf-8")


@dataclass(frozen=True)
class Step:
    """One model turn: tool calls (name, arguments), or a final answer when there are none."""

    calls: tuple[tuple[str, dict[str, Any]], ...] = ()
    text: str = ""


@dataclass(frozen=True)
class Phase:
    request: str
    pause_before: float
    steps: tuple[Step, ...]


@dataclass(frozen=True)
class Probe:
    name: str
    kind: str
    fact: str
    turn: int
    """The turn (1-based, counting model turns only) whose request must carry the fact."""
    source: str | None = None
    """The file the fact is in: a model that no longer sees the fact, but sees this path named (in a
    summary's record, or a stub of cleared output), reads it again before going on."""


def read(path: str, text: str = "", **extra: int) -> Step:
    return Step((("read_file", {"path": path, **extra}),), text)


def listing(path: str = ".") -> Step:
    return Step((("list_dir", {"path": path}),))


def write(path: str, tokens: int, text: str = "") -> Step:
    return Step((("write_file", {"path": path, "content": file_text(path, tokens, "md", None)}),), text)


def answer(tokens: int) -> Step:
    return Step(text=file_text(f"answer-{tokens}", tokens, "md", None).strip())


PHASES = (
    Phase(
        "Survey this service: how does a request travel from the socket to the database? "
        "Start with the layout and the docs.",
        0.0,
        (
            listing(),
            read("README.md", "I'll start with the README."),
            listing("docs"),
            read("docs/architecture.md"),
            read("docs/runbook.md"),
            listing("config"),
            read("config/limits.toml", "The limits decide when requests queue."),
            read("config/dev.json"),
            listing("src/service"),
            read("src/service/server.py"),
            read("src/service/routes.py"),
            answer(180),
        ),
    ),
    Phase(
        f"Now review the connection handling for bugs. {CONSTRAINT_MS}",
        45.0,
        (
            read("src/service/db.py", "Connection handling lives in db.py."),
            read("docs/deploy.md"),
            listing("docs"),
            read("docs/changelog.md"),
            read("src/service/cache.py"),
            Step((("write_file", {"path": PROTECTED, "content": "export const pool = 8;\n"}),)),
            read(PROTECTED, "That file is protected; I'll read it to find the setting it uses."),
            read("src/service/auth.py"),
            read("src/service/server.py", start_line=200, max_lines=80),
            write("notes/review.md", 400, "Writing the review notes."),
            answer(220),
        ),
    ),
    Phase(
        "Write a fix plan to notes/fix-plan.md and apply the pool settings change in config/dev.json.",
        360.0,
        (
            read("notes/review.md"),
            read("config/dev.json"),
            read("src/service/metrics.py"),
            listing("tests"),
            read("tests/test_db.py"),
            write("config/dev.json", 300),
            read("data/sample.csv", "Checking the sample traffic before planning."),
            write("notes/fix-plan.md", 600),
            listing("notes"),
            answer(160),
        ),
    ),
    Phase(
        "Check the tests against the plan and list the remaining risks in notes/risks.md.",
        45.0,
        (
            read("tests/test_server.py"),
            read("src/service/routes.py", start_line=1, max_lines=120),
            listing("src"),
            read("src/service/pool.py"),
            read("src/service/cache.py", start_line=50, max_lines=60),
            read("docs/runbook.md", start_line=1, max_lines=40),
            write("notes/risks.md", 500),
            read("tests/test_db.py", start_line=1, max_lines=50),
            write("notes/pool.md", 250),
            listing("notes"),
            read("notes/fix-plan.md"),
            answer(200),
        ),
    ),
)

TURNS = sum(len(p.steps) for p in PHASES)

PROBES = (
    Probe("limit value in config/limits.toml", "file content", FACT_LIMIT, 40, "config/limits.toml"),
    Probe("protected-file refusal", "error message", ERROR_PROTECTED, 40),
    Probe("pool recycle value in src/service/db.py", "file content", FACT_POOL, 42, "src/service/db.py"),
    Probe("missing docs/deploy.md", "error message", ERROR_MISSING, 42),
    Probe("durations in milliseconds", "constraint (user message)", CONSTRAINT_MS, TURNS),
)


@dataclass
class Clock:
    """Simulated seconds since the task started."""

    now: float = 0.0

    def advance(self, seconds: float) -> None:
        self.now += seconds


def files_seen(turn: int) -> tuple[list[str], list[str]]:
    """Files read and written by the script before ``turn`` (1-based)."""
    read_paths: list[str] = []
    written: list[str] = []
    steps = [s for p in PHASES for s in p.steps][: turn - 1]
    for step in steps:
        for name, args in step.calls:
            path = str(args["path"])
            if name == "read_file" and path not in read_paths and (path in FILES or path in written):
                read_paths.append(path)
            elif name == "write_file" and path != PROTECTED and path not in written:
                written.append(path)
    return read_paths, written


def summary_text(turn: int) -> str:
    """What the scripted model answers to a summary request made before ``turn``: about 300 tokens
    naming the user's goal and the files, without any file content, error text or constraint."""
    read_paths, written = files_seen(turn)
    return (
        "The user asked for a survey of a small web service, then a review of its connection handling, "
        "then a fix plan and a check of the tests. So far the agent listed the workspace and its folders "
        f"and read these files: {', '.join(read_paths) or 'none'}. It wrote: {', '.join(written) or 'nothing yet'}. "
        "The request path runs from the server module through the routes to the database module; the "
        "configuration files decide the limits and the pool settings; the docs describe deployment and "
        "operations. The review found issues in how pooled connections are kept and released, and in how "
        "retries and timeouts interact under load. Next: continue with the user's latest request, reading "
        "again any file whose details are needed, and report the result as a short list of files changed "
        "with one line each. Keep the notes folder up to date with the plan and the risks found."
    )
