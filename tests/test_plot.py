"""``stats --plot``: the data behind each figure agrees with the call records, the file is a PNG of
the stated size, and matplotlib is imported only when a plot is asked for."""

from __future__ import annotations

import struct
import subprocess
import sys
from pathlib import Path

import pytest

from tiny_agent.cli.app import main
from tiny_agent.observe import stats
from tiny_agent.observe.plot import plot_days, plot_session
from tiny_agent.store.base import CallQuery
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.testing import BillingFake

from .recorded import record, tour


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR", "a PNG file"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


@pytest.fixture(scope="module")
def store_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("plot")
    tasks = [tour(root, "alpha", 6), tour(root, "beta", 3)]
    with SQLiteStore(root / "s.db") as store, BillingFake(tasks) as fake:
        record(store, fake, root, "anthropic", "a", ["tour the alpha files", "now tour the beta files"])
        record(store, fake, root, "anthropic", "b", ["tour the beta files"], stamped=True)
    return root / "s.db"


def test_the_session_figure_draws_every_call(store_path: Path, tmp_path: Path) -> None:
    with SQLiteStore(store_path) as store:
        sid = max(store.sessions(), key=lambda s: s.calls).id
        rows = store.calls(CallQuery(sessions=(sid,)))
        figures = stats(store, [sid]).total
        series = plot_session(store, sid, tmp_path / "one.png", size=(1600, 900))
    assert png_size(tmp_path / "one.png") == (1600, 900)
    n = len(rows)
    assert n == figures.calls > 10
    for name in ("cache_read", "cache_write", "uncached", "output", "cumulative_usd", "window", "threshold"):
        assert len(getattr(series, name)) == n, name
    assert sum(series.cache_read) == figures.cache_read_tokens
    assert sum(series.cache_write) == figures.cache_write_tokens
    assert sum(series.cache_read) + sum(series.cache_write) + sum(series.uncached) == figures.input_tokens
    assert sum(series.output) == figures.output_tokens
    assert series.cumulative_usd[-1] == pytest.approx(figures.cost_usd)
    assert list(series.window) == [r.input_tokens for r in rows]
    assert max(series.threshold) <= 6000, "compact_at=6000 tokens is the cost policy's ceiling"
    assert len(series.compactions) == figures.compactions >= 2
    assert len(series.summaries) == figures.summaries
    assert len(series.misses) == figures.misses
    # Each compaction line sits just before the first call its new window was sent in.
    firsts = [i + 1 for i, r in enumerate(rows) if r.changes and "compaction" in r.changes]
    assert [round(c + 0.5) for c in series.compactions] == firsts


def test_the_daily_figure_sums_to_the_totals(store_path: Path, tmp_path: Path) -> None:
    with SQLiteStore(store_path) as store:
        result = stats(store)
        series = plot_days(store, result, tmp_path / "days.png", size=(1200, 700))
    assert png_size(tmp_path / "days.png") == (1200, 700)
    assert len(series.days) == len(series.cost_usd) == len(series.hit_rate) >= 1
    assert sum(series.cost_usd) == pytest.approx(result.total.cost_usd)
    assert sum(series.calls) == result.total.calls


def test_the_command_writes_the_plot(store_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with SQLiteStore(store_path) as store:
        sid = store.sessions()[0].id
    out = tmp_path / "s.png"
    assert main(["stats", sid[:10], "--store", str(store_path), "--plot", str(out)]) == 0
    assert png_size(out) == (1600, 900) and f"wrote {out}" in capsys.readouterr().err
    assert main(["stats", "--store", str(store_path), "--plot", str(tmp_path / "d.png"), "--json"]) == 0
    assert png_size(tmp_path / "d.png") == (1600, 900)


def test_without_matplotlib_the_plot_is_one_line(
    store_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "matplotlib" else real(name, *a))
    assert main(["stats", "--store", str(store_path), "--plot", str(tmp_path / "x.png")]) == 2
    err = capsys.readouterr().err
    assert "pip install 'tiny-agent[plot]'" in err and len(err.strip().splitlines()) == 1


def test_matplotlib_stays_off_the_start_up_path(store_path: Path) -> None:
    code = (
        "import sys\nfrom tiny_agent.cli.app import main\n"
        f"code = main(['stats', '--store', {str(store_path)!r}])\n"
        "assert code == 0, code\nprint('matplotlib' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip().splitlines()[-1] == "False"


def test_the_plot_draws_where_the_cost_policy_compacts(tmp_path: Path) -> None:
    """Issue 30, finding 5: under the cost policy the plot drew the ceiling (80% of a 1M window) while
    the session compacted at a few thousand tokens; it draws the threshold each call was sent under."""
    from tiny_agent.context.config import ContextConfig

    with SQLiteStore(tmp_path / "s.db") as store, BillingFake([tour(tmp_path, "gamma", 8)]) as fake:
        sid = record(
            store, fake, tmp_path, "anthropic", "c", ["tour the gamma files"], config=ContextConfig(keep_turns=2)
        )
        series = plot_session(store, sid, tmp_path / "c.png", size=(800, 600))
    assert len(series.compactions) >= 1
    assert series.threshold[0] == 800_000, "before any turn the growth is unknown: the ceiling"
    assert max(series.threshold[1:]) < 100_000, series.threshold
    # Each compaction comes once the window has reached (about) the threshold drawn before it.
    for line in series.compactions:
        before = int(line - 0.5) - 1
        assert series.window[before] >= 0.5 * series.threshold[before], (series.window, series.threshold)
