"""How fast ``tiny-agent view`` loads a 2,000-call session.

The session is made by the engine itself: 2,000 turns through ``Context.complete`` against the
scripted provider on the Anthropic wire (a system prompt, three tools, a user line and a reply a
turn, compaction at 6,000 tokens, each summary a call of its own), stored in SQLite. Then, timed:

- ``serve``: the store read once (every entry) and indexed, the server started;
- ``session_json``: ``GET /api/session/ID``, the timeline's data built and sent (median of 5);
- ``call_json``: ``GET /api/session/ID/call/N`` for the last turn, its request and the previous
  turn's re-rendered from the log and compared (median of 5);
- ``chromium_page``: headless Chromium run on the page until its script has drawn the timeline and
  the selected call (``--dump-dom`` with virtual time), minus the same Chromium run on an empty page
  (its own start-up, which no user of an open browser waits for); median of 3.

The what-if table is not part of the load: on a session this long the page asks for the replays
only when the user does (they take seconds), see docs/view.md.

    PYTHONPATH=src .venv/bin/python benchmarks/view_load.py      # writes benchmarks/results/view_load.json
"""

from __future__ import annotations

import json
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from tiny_agent.context.engine import Context, ContextConfig
from tiny_agent.observe.view import serve
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.testing import ScriptedProvider
from tiny_agent.types import Message, ToolSpec

CALLS = 2000
RESULTS = Path(__file__).parent / "results" / "view_load.json"
TOOLS = [
    ToolSpec(name, f"{name} a file in the workspace", {"type": "object", "properties": {"path": {"type": "string"}}})
    for name in ("read_file", "write_file", "list_dir")
]


def build(path: Path) -> str:
    """A stored session of ``CALLS`` model calls, turns and summaries, made by the engine."""
    ctx = Context("You are a careful assistant. " * 40, TOOLS, config=ContextConfig(compact_at=6000, keep_turns=2))
    replies: list[Any] = [lambda body: Message.assistant("Noted; the next step follows. " * 8)] * (3 * CALLS)
    provider = ScriptedProvider(replies, name="anthropic", model="claude-sonnet-4-6", pricing_id="anthropic")
    turn = 0
    while len(ctx.state.ledger.calls) < CALLS:
        turn += 1
        ctx.maybe_compact(provider)
        if len(ctx.state.ledger.calls) >= CALLS:
            break
        ctx.add_user(f"step {turn}: look at part {turn % 17} of the report and say what changed " * 3)
        ctx.complete(provider)
    with SQLiteStore(path) as store:
        info = store.create(workspace=str(path.parent))
        store.append(info.id, [(e.kind, e.body) for e in ctx.entries], expected_head=-1)
    return info.id


SPANS: list[tuple[str, float, float]] = []
"""(path, start, end) of every GET the view's server answered, in perf_counter seconds."""


def timed_gets() -> None:
    """Record each GET's start and end at the view's server (the page's real-time loading, which
    Chromium's virtual time does not show)."""
    from tiny_agent.observe.view import server as view_server

    answer = view_server._Handler.do_GET

    def do_get(self: Any) -> None:
        start = time.perf_counter()
        try:
            answer(self)
        finally:
            SPANS.append((self.path.split("?")[0], start, time.perf_counter()))

    view_server._Handler.do_GET = do_get  # type: ignore[method-assign]


def page_spans() -> list[float]:
    """Per page load, in real time: seconds from the page's own GET to the page saying it has drawn
    the timeline and the selected call (its GET of ``/drawn``)."""
    out, start = [], None
    for path, begun, _ in SPANS:
        if path == "/":
            start = begun
        elif path.endswith("/drawn") and start is not None:
            out.append(begun - start)
            start = None
    return out


def chromium_seconds(browser: str, url: str, bars: int = 0) -> float:
    """Seconds Chromium took; with ``bars``, the dumped page must show that many and be drawn."""
    start = time.perf_counter()
    done = subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--virtual-time-budget=20000",
            "--dump-dom",
            url,
        ],
        capture_output=True,
        check=True,
        timeout=300,
        text=True,
    )
    seconds = time.perf_counter() - start
    if bars:
        assert 'data-ready="1"' in done.stdout and done.stdout.count('class="bar') == bars, "the page was not drawn"
    return seconds


def get(url: str) -> tuple[float, bytes]:
    start = time.perf_counter()
    with urllib.request.urlopen(url, timeout=60) as answer:
        body = answer.read()
    return time.perf_counter() - start, body


def main() -> int:
    timed_gets()
    browser = shutil.which("chromium")
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "view.db"
        started = time.perf_counter()
        sid = build(db)
        built = time.perf_counter() - started
        with SQLiteStore(db) as store:
            started = time.perf_counter()
            server = serve(store, sid, open_browser=False)
            served = time.perf_counter() - started
        with server:
            base = f"http://127.0.0.1:{server.port}"
            query = f"?token={server.token}"
            session_runs = [get(f"{base}/api/session/{sid}{query}") for _ in range(5)]
            calls = json.loads(session_runs[0][1])["calls"]
            last = max(c["index"] for c in calls if c["purpose"] == "turn")
            call_runs = [get(f"{base}/api/session/{sid}/call/{last}{query}") for _ in range(5)]
            page = blank = None
            if browser:
                page_runs = [chromium_seconds(browser, f"{server.url}#call={last}", len(calls)) for _ in range(3)]
                blank_runs = [chromium_seconds(browser, "about:blank") for _ in range(3)]
                page, blank = statistics.median(page_runs), statistics.median(blank_runs)
    result = {
        "command": "PYTHONPATH=src .venv/bin/python benchmarks/view_load.py",
        "date": time.strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()} · {platform.python_version()} · 2 shared cores",
        "calls": len(calls),
        "turns": sum(c["purpose"] == "turn" for c in calls),
        "build_seconds": round(built, 2),
        "serve_seconds": round(served, 3),
        "session_json_seconds": round(statistics.median(t for t, _ in session_runs), 3),
        "session_json_bytes": len(session_runs[0][1]),
        "call_json_seconds": round(statistics.median(t for t, _ in call_runs), 3),
        "chromium_page_seconds": None if page is None else round(page, 3),
        "chromium_blank_seconds": None if blank is None else round(blank, 3),
        "page_load_seconds": None if page is None or blank is None else round(page - blank, 3),
        "page_drawn_seconds": round(statistics.median(page_spans()), 3) if page_spans() else None,
        "note": "page_load_seconds = chromium on the page (timeline + selected call drawn) minus chromium on "
        "about:blank (Chromium's own start-up for a page differs from an empty one's); page_drawn_seconds = in real "
        "time at the server, from the page's GET to the page reporting the timeline and the selected call "
        "drawn (medians of 3)",
    }
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    if page is None:
        print("chromium is missing: the browser's part was not timed", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
