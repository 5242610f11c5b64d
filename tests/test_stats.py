"""``stats``: the figures agree with what the billing fake billed; a timestamped system prompt shows as
the system layer changing on every call; bad input is one line with the right exit code."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tiny_agent.agent.loop import DEFAULT_SYSTEM
from tiny_agent.cli.app import main
from tiny_agent.context.engine import ContextConfig
from tiny_agent.errors import ConfigError, SessionNotFound
from tiny_agent.observe import stats
from tiny_agent.observe.stats import parse_when
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.testing import BillingFake

from .recorded import billed, record, tour

FIXTURE_V1 = Path(__file__).parent / "data" / "store_v1.db"
PRICES = {"anthropic": (3e-6, 15e-6), "openai": (0.15e-6, 0.6e-6)}
"""Per-token input and output list prices of claude-sonnet-4-6 and gpt-4o-mini (genai-prices)."""
WHOLE = ContextConfig(policy="fraction")
"""No compaction in a short session: every call is a turn."""


def close(a: float, b: float) -> bool:
    return abs(a - b) <= 0.005 * max(abs(b), 1e-12)


@pytest.mark.parametrize("wire", ["anthropic", "openai"])
def test_the_figures_agree_with_what_the_fake_billed(tmp_path: Path, wire: str) -> None:
    tasks = [tour(tmp_path, "alpha", 6), tour(tmp_path, "beta", 4)]
    with SQLiteStore(tmp_path / "s.db") as store, BillingFake(tasks) as fake:
        first = record(store, fake, tmp_path, wire, "one", ["Please tour the alpha files", "now tour the beta files"])
        second = record(store, fake, tmp_path, wire, "two", ["tour the beta files, please"])
        result = stats(store)
        bills = billed(fake, ["one", "two"])
    total = result.total
    assert total.calls == len(bills) and total.failed == total.unanswered == 0
    assert total.compactions >= 2 and total.summaries == total.compactions, "the tour compacts"
    assert total.cache_read_tokens is not None
    for figure, bill_total in [
        (total.input_tokens, sum(b.call.input_tokens for b in bills)),
        (total.cache_read_tokens, sum(b.call.cache_read for b in bills)),
        (total.output_tokens, sum(b.call.output_tokens for b in bills)),
        (total.cost_usd or 0.0, sum(b.call.usd for b in bills)),
    ]:
        assert close(figure, bill_total)
    if wire == "anthropic":
        assert close(total.cache_write_tokens or 0, sum(b.call.cache_write for b in bills))
    else:  # OpenAI bills no writes, and its usage does not report them: unknown, not 0
        assert total.cache_write_tokens is None and sum(b.call.cache_write for b in bills) == 0
    inp, out = PRICES[wire]
    uncached = sum(b.call.input_tokens * inp + b.call.output_tokens * out for b in bills)
    assert total.saved_usd is not None and close(total.saved_usd, uncached - sum(b.call.usd for b in bills))
    assert total.hit_rate == pytest.approx(total.cache_read_tokens / total.input_tokens)
    assert total.runs == 3 and total.stops == {"done": 3} and total.budget_stops == 0
    as_json = result.to_dict()  # made straight from the sums, before any session's figures are read
    for session_id, route in ((first, "one"), (second, "two")):
        assert as_json["sessions"][session_id] == {"workspace": str(tmp_path), **result.sessions[session_id].to_dict()}
        figures = result.sessions[session_id]
        assert figures.calls == len(fake.bills(route))
        assert close(figures.cost_usd or 0.0, sum(b.call.usd for b in fake.bills(route)))
    steady = total.layers
    assert [steady[k].changed for k in ("tools", "system", "pins")] == [0, 0, 0], "a steady session"
    assert steady["messages"].changed == steady["messages"].expected > 0, "only compactions change the messages"


def test_a_timestamped_system_prompt_changes_the_system_layer_on_every_call(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "s.db") as store, BillingFake([tour(tmp_path, "gamma", 3)]) as fake:
        sid = record(store, fake, tmp_path, "anthropic", "r", ["tour the gamma files"], stamped=True, config=WHOLE)
        result = stats(store, [sid[:8]])
    figures = result.total
    assert figures.calls == 4
    assert figures.layers["system"].changed == figures.calls - 1
    assert [figures.layers[k].changed for k in ("tools", "pins")] == [0, 0]
    cause = figures.miss_causes["system prompt changed"]
    assert cause.count == figures.calls - 1
    # Where it changes: the seconds digit of the timestamp, as the per-turn miss line says it.
    at = len(f"{DEFAULT_SYSTEM}\nCurrent time: 2026-12-01T10:00:0")
    assert cause.example.startswith(f"system prompt changed at character {at}: now ")
    (where,) = figures.layers["system"].where
    assert where.at == at and where.calls == figures.layers["system"].examined == figures.calls - 1
    assert "2026-12-01T10:00:0" in where.now and "2026-12-01T10:00:0" in where.was and where.now != where.was


def test_a_pin_added_midway_changes_the_pins_layer_once(tmp_path: Path) -> None:
    tasks = [tour(tmp_path, "delta", 2), tour(tmp_path, "eps", 2)]
    with SQLiteStore(tmp_path / "s.db") as store, BillingFake(tasks) as fake:
        record(store, fake, tmp_path, "anthropic", "r", ["tour the delta files", "tour the eps files"], pin_before=1)
        result = stats(store)
    assert result.total.layers["pins"].changed == 1
    assert result.total.layers["system"].changed == 0
    assert "pinned constraints changed" in result.total.miss_causes


def test_a_budget_stop_is_counted(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "s.db") as store, BillingFake([tour(tmp_path, "zeta", 8)]) as fake:
        record(store, fake, tmp_path, "anthropic", "r", ["tour the zeta files"], budget_usd=0.02)
        result = stats(store, by="day")
    assert result.total.budget_stops == 1 and result.total.stops == {"budget": 1}
    days = result.groups.values()  # one, unless the run went past midnight
    assert sum(d.budget_stops for d in days) == 1 and sum(d.calls for d in days) == result.total.calls


def test_filters_and_groups(tmp_path: Path) -> None:
    tasks = [tour(tmp_path, "eta", 2)]
    with SQLiteStore(tmp_path / "s.db") as store, BillingFake(tasks) as fake:
        a = record(store, fake, tmp_path, "anthropic", "a", ["tour the eta files"])
        b = record(store, fake, tmp_path, "openai", "b", ["tour the eta files"])
        by_model = stats(store, by="model").groups
        assert set(by_model) == {"claude-sonnet-4-6", "gpt-4o-mini"}
        assert stats(store, model="gpt-4o-mini").total.calls == len(fake.bills("b"))
        assert set(stats(store, [b]).sessions) == {b}
        assert stats(store, since="2999-01-01").total.calls == 0
        assert stats(store, until="yesterday").total.calls == 0
        assert stats(store, since="1d").total.calls == len(fake.bills("a")) + len(fake.bills("b"))
        assert stats(store, workspace=tmp_path).total.calls == stats(store).total.calls
        assert set(stats(store, by="session").groups) == {a, b}
        with pytest.raises(SessionNotFound):
            stats(store, ["ffffffffffff"])
        with pytest.raises(ConfigError, match="--since 'soon' is not a date"):
            stats(store, since="soon")
        with pytest.raises(ConfigError, match="--until must come after --since"):
            stats(store, since="2026-12-02", until="2026-12-01T10:00")


def test_dates() -> None:
    assert parse_when("2026-12-01", end=True) - parse_when("2026-12-01") == 86400  # type: ignore[operator]
    assert parse_when("2026-12-01T10:00:00+00:00") == 1796119200.0


def test_an_old_store_has_stats_but_no_run_records(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    shutil.copy(FIXTURE_V1, path)
    with SQLiteStore(path) as store:
        result = stats(store)
    assert result.total.calls == 1 and result.total.cost_usd == pytest.approx(0.00066)
    assert result.sessions_without_runs == 1 and result.total.runs == 0
    assert result.total.layers["system"].compared == 0


# -- the command --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("stats")
    with SQLiteStore(root / "s.db") as store, BillingFake([tour(root, "theta", 3)]) as fake:
        record(store, fake, root, "anthropic", "r", ["tour the theta files"], stamped=True, config=WHOLE)
    return root / "s.db"


def test_json_has_the_figures_and_every_session(recorded: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["stats", "--store", str(recorded), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    for key in ("calls", "input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens", "cost_usd"):
        assert isinstance(out[key], int | float), key
    # The seed's crash: a timestamp in the system prompt, and the cache reads nothing; the writes cost extra.
    assert out["hit_rate"] == 0 and out["saved_usd"] < 0
    assert out["miss_causes"] == {"system prompt changed": out["calls"] - 1}
    assert out["layers"]["system"]["changed"] == out["calls"] - 1 and out["layers"]["tools"]["changed"] == 0
    ((_, session),) = out["sessions"].items()
    assert session["calls"] == out["calls"] and session["layers"]["system"]["changed"] == out["calls"] - 1


def test_text_names_the_layer_that_keeps_changing(recorded: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["stats", "--store", str(recorded), "--by", "day"]) == 0
    out = capsys.readouterr().out
    assert "system prompt changed" in out and "caching saved $" in out
    system_line = next(line for line in out.splitlines() if line.strip().startswith("system"))
    assert system_line.split()[1] == "3" and "at character" in system_line
    assert "by day" in out


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--since", "soon"], 2, "--since 'soon' is not a date"),
        (["nosuchid"], 2, "no session 'nosuchid'"),
        (["--by", "hour"], 2, "'hour' is not one of"),
        (["--plot", "out.jpg"], 2, "give a file name ending in .png"),
        (["--model", "gpt-nothing"], 1, "no model calls in"),
    ],
)
def test_bad_input_is_one_line(
    recorded: Path, capsys: pytest.CaptureFixture[str], args: list[str], code: int, message: str
) -> None:
    assert main(["stats", "--store", str(recorded), *args]) == code
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_an_empty_or_missing_store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    SQLiteStore(tmp_path / "empty.db").close()
    assert main(["stats", "--store", str(tmp_path / "empty.db")]) == 1
    assert "no model calls in" in capsys.readouterr().err
    assert main(["stats", "--store", str(tmp_path / "typo.db")]) == 2
    assert "no session store at" in capsys.readouterr().err
    assert not (tmp_path / "typo.db").exists(), "stats never creates a store"


# -- ccusage's tables ---------------------------------------------------------------------------

T0 = 1_796_119_200.0  # 2026-12-01T10:00:00Z
CALLS = [  # (hours after T0, provider, model, input with the cache's, output, cache read, cache write, usd)
    (0.3, "anthropic", "claude-sonnet-4-6", 1000, 50, 600, 300, 0.0100),
    (4.8, "anthropic", "claude-sonnet-4-6", 2000, 70, 1500, 400, 0.0200),
    (5.2, "openai", "gpt-4o-mini", 800, 30, 500, 0, 0.0010),  # a new 5-hour block: 15:00
    (15.5, "openai", "gpt-4o-mini", 900, 40, 0, 0, 0.0020),  # 2026-12-02 01:30 UTC
    (24 * 31, "anthropic", "claude-sonnet-4-6", 3000, 90, 2000, 500, 0.0300),  # 2027-01-01 10:00
]


@pytest.fixture
def usage_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    from tiny_agent.context.entries import CallDone, CallOpened
    from tiny_agent.context.entry_codec import encode
    from tiny_agent.context.tokens import CallRecord
    from tiny_agent.store import sqlite as sqlite_store
    from tiny_agent.types import Usage

    clock = [T0]
    monkeypatch.setattr(sqlite_store.time, "time", lambda: clock[0])
    with SQLiteStore(tmp_path / "u.db") as store:
        sid = store.create(workspace=str(tmp_path)).id
        head = -1
        for hours, provider, model, given, out, read, write, usd in CALLS:
            clock[0] = T0 + hours * 3600
            opened = CallOpened("turn", model, given * 4, {"messages": 1}, "", provider)
            record = CallRecord(Usage(given, out, read, write), usd, 1.0, model, None, "turn", stop_reason="end_turn")
            done = store.append(sid, [encode(opened)], expected_head=head)
            store.append(sid, [encode(CallDone(done[0].seq, record))], expected_head=done[0].seq)
            head = done[0].seq + 1
    return tmp_path / "u.db"


def test_the_daily_and_monthly_tables_are_ccusages(usage_store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tiny_agent.observe.usage import usage_table

    with SQLiteStore(usage_store) as store:
        daily = usage_table(store, "day", timezone="UTC")
        monthly = usage_table(store, "month", timezone="UTC", breakdown=True, order="desc")
        blocks = usage_table(store, "block", timezone="UTC")
        weeks = usage_table(store, "week", timezone="UTC")
        berlin = usage_table(store, "day", timezone="Europe/Berlin")
    assert [r.key for r in daily.rows] == ["2026-12-01", "2026-12-02", "2027-01-01"]
    first = daily.rows[0]
    # ccusage's Input is what was billed uncached: 1000-600-300 + 2000-1500-400 + 800-500-0.
    assert (first.input_tokens, first.output_tokens) == (100 + 100 + 300, 150)
    assert (first.cache_create_tokens, first.cache_read_tokens) == (700, 2600)
    assert first.total_tokens == 500 + 150 + 700 + 2600 and first.cost_usd == pytest.approx(0.031)
    assert first.models == {"claude-sonnet-4-6", "gpt-4o-mini"}
    assert daily.total.total_tokens == sum(r.total_tokens for r in daily.rows)
    assert daily.total.cost_usd == pytest.approx(0.063)
    assert [r.key for r in monthly.rows] == ["2027-01", "2026-12"], "newest first"
    december = monthly.rows[1]
    assert december.input_tokens == 500 + 900 and december.cost_usd == pytest.approx(0.033)
    sonnet = december.breakdown["claude-sonnet-4-6"]
    assert (sonnet.input_tokens, sonnet.cache_read_tokens, sonnet.calls) == (200, 2100, 2)
    assert [(r.key, r.calls) for r in blocks.rows] == [
        ("2026-12-01 10:00", 2), ("2026-12-01 15:00", 1), ("2026-12-02 01:00", 1), ("2027-01-01 10:00", 1)
    ]  # fmt: skip
    assert [r.key for r in weeks.rows] == ["2026-11-30", "2026-12-28"], "weeks start on Monday"
    assert [r.key for r in berlin.rows] == ["2026-12-01", "2026-12-02", "2027-01-01"]
    assert [r.calls for r in berlin.rows] == [3, 1, 1]
    # The command: the same figures as text, CSV and JSON.
    assert main(["stats", "--store", str(usage_store), "--by", "day", "--timezone", "UTC", "--format", "csv"]) == 0
    rows = capsys.readouterr().out.splitlines()
    assert rows[0] == "Date,Models,Input,Output,Thinking,Cache Create,Cache Read,Total Tokens,Cost (USD)"
    assert rows[1] == "2026-12-01,claude-sonnet-4-6 gpt-4o-mini,500,150,0,700,2600,3950,0.0310"
    assert rows[-1].startswith("Total,") and rows[-1].endswith(",0.0630")
    assert main(["stats", "--store", str(usage_store), "--by", "month", "--timezone", "UTC", "--format", "json"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert [r["key"] for r in body["rows"]] == ["2026-12", "2027-01"]
    assert body["total"]["cache_creation_tokens"] == 700 + 500
    assert main(["stats", "--store", str(usage_store), "--by", "month", "--breakdown", "--timezone", "UTC"]) == 0
    text = capsys.readouterr().out
    assert "Cache Create" in text and "└ claude-sonnet-4-6" in text and "\x1b[" not in text, "plain when piped"
    # The clock is the fixture's (its last call, 2027-01-01 10:00): a week back holds only that call.
    assert main(["stats", "--store", str(usage_store), "--since", "1w", "--by", "week", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["total"]["calls"] == 1
    assert main(["stats", "--store", str(usage_store), "--by", "day", "--timezone", "Mars/Olympus"]) == 2
    assert "is not a time zone" in capsys.readouterr().err


def test_every_table_has_the_cache_columns(usage_store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for by in ("day", "week", "month", "model", "session", "block", "workspace"):
        assert main(["stats", "--store", str(usage_store), "--by", by]) == 0, by
        out = capsys.readouterr().out.lower()
        assert "cache write" in out or "cache create" in out, by
        assert "cache read" in out, by
