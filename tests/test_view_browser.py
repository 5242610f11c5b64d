"""The view in a real headless Chromium (Debian's ``chromium``, which scripts/setup installs): the
page loads, the timeline has one bar per call, a selected call shows both requests with the first
divergence where the diagnosis put it, and a screenshot is written. Without Chromium this FAILS,
never skips: CI must run it.

``python tests/test_view_browser.py docs/view.png`` redraws the screenshot of the docs."""

from __future__ import annotations

import html.parser
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tiny_agent.observe.view import serve
from tiny_agent.observe.view.data import diagnosed_character
from tiny_agent.store.sqlite import SQLiteStore

if __package__:
    from .test_view import recorded
else:  # run as a script: make the tests package importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.test_view import recorded


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.fail("Chromium is missing: install Debian's chromium (scripts/setup does; apt-get install chromium)")
    return found


def browse(url: str, *flags: str) -> str:
    """What headless Chromium makes of ``url`` once its scripts ran (virtual time: no waiting on the clock)."""
    done = subprocess.run(
        [
            chromium(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-extensions",
            "--virtual-time-budget=20000",
            "--window-size=1400,1100",
            *flags,
            url,
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


class Page(html.parser.HTMLParser):
    """The dumped DOM's elements, by their attributes."""

    def __init__(self, dom: str) -> None:
        super().__init__()
        self.elements: list[tuple[str, dict[str, str]]] = []
        self.feed(dom)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, {k: v or "" for k, v in attrs}))

    def having(self, cls: str) -> list[dict[str, str]]:
        return [a for _, a in self.elements if cls in a.get("class", "").split()]

    def by_id(self, id_: str) -> dict[str, str]:
        return next(a for _, a in self.elements if a.get("id") == id_)


def test_the_page_in_headless_chromium(tmp_path: Path) -> None:
    where, sid = recorded(tmp_path)
    with SQLiteStore(Path(where)) as store, serve(store, sid, open_browser=False) as server:
        view = server.view
        calls = view.session()["calls"]
        pick = next(c for c in calls if c["purpose"] == "turn" and diagnosed_character(c["miss"]) is not None)
        page = Page(browse(f"{server.url}#call={pick['index']}", "--dump-dom"))
        body = page.elements[[t for t, _ in page.elements].index("body")][1]
        assert body.get("data-ready") == "1", "the page's script ran to the end"
        assert len(page.having("bar")) == len(calls) == int(body["data-calls"])
        assert [int(b["data-call"]) for b in page.having("bar")] == [c["index"] for c in calls]
        assert len(page.having("compaction")) >= 2, "the legend's key and the mark on the timeline"
        assert body["data-selected"] == str(pick["index"]) and "selected" in page.by_id(f"bar-{pick['index']}")["class"]
        divergence = page.by_id("first-divergence")
        assert divergence["data-path"] == "system[0]"
        assert int(divergence["data-character"]) == diagnosed_character(pick["miss"])
        marked = page.having("divergence")
        assert [b["data-path"] for b in marked] == ["system[0]", "system[0]"], "marked in both requests"
        assert len(page.having("shared")) >= 2 * 3, "the shared tools shaded on both sides"
        other = "y" if server.token.startswith("x") else "x"  # a token that starts with x would stay right
        wrong = server.url.replace(server.token, other + server.token[1:])
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(wrong, timeout=30)
        assert refused.value.code == 403
        shot = tmp_path / "view.png"
        browse(f"{server.url}#call={pick['index']}", f"--screenshot={shot}")
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000


def draw(path: Path) -> None:
    """The docs' screenshot: a recorded session, a call whose system prompt changed selected."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        where, sid = recorded(Path(tmp))
        with SQLiteStore(Path(where)) as store, serve(store, sid, open_browser=False) as server:
            browse(f"{server.url}#call=2", f"--screenshot={path.resolve()}")


if __name__ == "__main__":
    draw(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/view.png"))
