"""Replay: a stored session re-run by the engine under another policy, priced by the provider's rules.

Sessions are recorded for real through the adapters (the official SDKs) against the billing fake,
which bills every request by the cache simulator; a replay sends nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from tiny_agent.agent.run import Run
from tiny_agent.agent.settings import RunSettings
from tiny_agent.cli import main
from tiny_agent.providers.prefix import block_tokens
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.testing import BillingFake, Task
from tiny_agent.testing.tasks import summary_text
from tiny_agent.types import Entry, TextBlock
from tiny_agent.whatif.replay import Policy, replay, sweep

from .recorded import ENV, MODELS

A = {"compact_at": 6000, "keep_turns": 2, "policy": "fraction"}
B = {"compact_at": 10000, "keep_turns": 3, "policy": "fraction"}
C = {"compact_at": 0.9, "keep_turns": 4, "policy": "fraction", "clear_after": None}


def tour(root: Path, files: int = 12) -> Task:
    for i in range(files):
        line = f"Part {i}: the service reads setting {i} when it starts and keeps it until it stops. "
        (root / f"part{i}.txt").write_text(line * 60)
    return Task("tour the files", [[("read_file", {"path": f"part{i}.txt"})] for i in range(files)], "All read.")


@pytest.fixture
def recorder(tmp_path: Path) -> Iterator[Any]:
    ws = tmp_path / "ws"
    ws.mkdir()
    task = tour(ws)
    store = SQLiteStore(tmp_path / "sessions.db")
    with BillingFake([task]) as fake:

        def record(wire: str, config: Mapping[str, Any], route: str, **settings: Any) -> tuple[str, float]:
            url = fake.url(route, wire)  # type: ignore[arg-type]
            # The policies' costs were measured with the three file tools; the prefix is part of the bill.
            given = RunSettings(
                provider=wire, model=MODELS[wire], base_url=url, workspace=str(ws), code_tools=False, **settings
            )
            with Run.open(store, settings=given, config=config, env=ENV) as run:
                assert run.agent.run("Please tour the files now").stop == "done"
                assert run.session is not None
                session = run.session.id
            return session, sum(b.call.usd for b in fake.bills(route))

        record.store = store  # type: ignore[attr-defined]
        yield record
    store.close()


def entries(recorder: Any, session: str) -> list[Entry]:
    return recorder.store.entries(session)  # type: ignore[no-any-return]


@pytest.mark.parametrize("wire", ["anthropic", "openai"])
def test_replaying_under_the_recorded_policy_renders_the_same_bodies_and_bill(recorder: Any, wire: str) -> None:
    session, billed = recorder(wire, A, f"own-{wire}")
    result = replay(entries(recorder, session))
    recorded, replayed = result.recorded, result.replayed
    assert recorded.compactions >= 2, "the recorded task compacts"
    assert [c.fingerprint for c in replayed.per_call] == [c.fingerprint for c in recorded.per_call]
    assert [c.purpose for c in replayed.per_call] == [c.purpose for c in recorded.per_call]
    assert recorded.cost_usd == pytest.approx(billed)
    assert replayed.cost_usd == pytest.approx(billed, rel=0.01)
    assert not replayed.estimated and replayed.every_pin_in_every_request


def test_a_run_that_stopped_right_after_a_compaction_replays_to_the_same_bill(recorder: Any) -> None:
    """Killed (or cut off by a closed pipe) after a compaction and before its next call: the replay
    consults the policy there too, as the run did."""
    session, _ = recorder("anthropic", A, "cut")
    log = entries(recorder, session)
    first = next(i for i, e in enumerate(log) if e.kind == "compaction")
    cut = replay(log[: first + 1])
    assert cut.recorded.compactions == 1 and cut.replayed.compactions == 1
    assert cut.replayed.cost_usd == pytest.approx(cut.recorded.cost_usd, rel=0.01)


@pytest.mark.parametrize("wire", ["anthropic", "openai"])
@pytest.mark.parametrize(("source", "target"), [(A, B), (B, A), (A, C)], ids=["A-B", "B-A", "A-C"])
def test_a_replay_predicts_what_another_policy_was_billed(
    recorder: Any, wire: str, source: dict[str, Any], target: dict[str, Any]
) -> None:
    recorded, own_bill = recorder(wire, source, "source")
    _, billed = recorder(wire, target, "target")
    assert abs(own_bill - billed) / billed > 0.05, "the two policies cost differently: a replay must tell them apart"
    predicted = replay(entries(recorder, recorded), Policy(target)).replayed.cost_usd
    assert predicted is not None
    assert abs(predicted - billed) / billed < 0.05, (predicted, billed)


@pytest.mark.parametrize("wire", ["anthropic", "openai"])
def test_a_compaction_the_recording_did_not_have_is_priced_and_marked_estimated(recorder: Any, wire: str) -> None:
    session, _ = recorder(wire, C, "never-compacts")
    _, billed = recorder(wire, A, "compacts")
    result = replay(entries(recorder, session), Policy(A))
    assert result.recorded.compactions == 0 and result.replayed.compactions >= 1
    summaries = [c for c in result.replayed.per_call if c.purpose == "compaction"]
    assert summaries and all(c.estimated and c.output_tokens > 0 and c.cost_usd for c in summaries)
    assert result.replayed.estimated
    # The summary's length is the one thing the recording cannot tell: assumed, it moves the
    # prediction; told (the fake writes the same summary each time), the prediction holds.
    told = block_tokens(TextBlock(summary_text(60)).to_dict())
    predicted = replay(entries(recorder, session), Policy(A, summary_tokens=told)).replayed.cost_usd
    assert predicted is not None and abs(predicted - billed) / billed < 0.05, (predicted, billed)
    assumed = replay(entries(recorder, session), Policy(A)).replayed.cost_usd
    assert assumed is not None and abs(assumed - billed) / billed < 0.15, (assumed, billed)


def test_another_provider_is_priced_by_its_own_rules(recorder: Any) -> None:
    session, _ = recorder("anthropic", A, "to-deepseek")
    result = replay(entries(recorder, session), Policy(provider="deepseek", model="deepseek-chat"))
    replayed = result.replayed
    assert (replayed.provider, replayed.model) == ("deepseek", "deepseek-chat")
    assert replayed.total("cache_write_tokens") is None, "DeepSeek caches automatically and reports no writes"
    assert replayed.total("cache_read_tokens") > 0
    assert replayed.cost_usd is not None and replayed.cost_usd < 0.2 * (result.recorded.cost_usd or 0)


def test_a_one_hour_lifetime_pays_twice_for_its_writes(recorder: Any) -> None:
    session, _ = recorder("anthropic", A, "ttl")
    five = replay(entries(recorder, session)).replayed
    hour = replay(entries(recorder, session), Policy(cache_ttl="1h")).replayed
    assert hour.total("cache_write_tokens") == five.total("cache_write_tokens")
    assert hour.cost_usd is not None and five.cost_usd is not None and hour.cost_usd > five.cost_usd


def test_a_sweep_replays_every_combination(recorder: Any) -> None:
    session, _ = recorder("openai", A, "sweep")
    results = sweep(entries(recorder, session), {"compact_at": [6000, 10000], "keep_turns": [2, 3]})
    assert [r.policy.describe() for r in results] == [
        "compact-at=6000 keep-turns=2",
        "compact-at=6000 keep-turns=3",
        "compact-at=10000 keep-turns=2",
        "compact-at=10000 keep-turns=3",
    ]
    assert results[0].replayed.cost_usd == pytest.approx(results[0].recorded.cost_usd)


def test_the_command_needs_no_key_sends_nothing_and_prints_both_sides(
    recorder: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    session, _ = recorder("anthropic", A, "cli")
    for key in ENV:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("TINY_AGENT_STORE", str(tmp_path / "sessions.db"))
    monkeypatch.setattr("socket.socket.connect", lambda *a: pytest.fail("a replay connected somewhere"))
    assert main(["replay", session[:10], "--compact-at", "10000", "--keep-turns", "3"]) == 0
    out = capsys.readouterr().out
    assert "the responses are the recorded ones" in out
    assert main(["replay", session[:10], "--provider", "openai", "--model", "gpt-9"]) == 0
    assert "$? = no known price for openai · gpt-9" in capsys.readouterr().out, "why the cost is $?"
    assert "recorded: " in out and "replayed: " in out and "compact-at=10000 keep-turns=3" in out
    assert main(["replay", session[:10], "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    for side in ("recorded", "replayed"):
        assert {
            "cost_usd",
            "calls",
            "input_tokens",
            "cache_read_tokens",
            "cache_write_tokens",
            "output_tokens",
            "compactions",
            "per_call",
        } <= set(data[side])
        assert len(data[side]["per_call"]) == data[side]["calls"]
    assert main(["replay", session[:10], "--sweep", "compact-at=6000,10000", "keep-turns=2,3"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert sum(line.startswith("* compact-at=") for line in lines) >= 1, "the cheapest is marked"
    assert main(["replay", session[:10], "--sweep", "compact-at=6000,10000", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["sweep"]
    cheapest = min(r["replayed"]["cost_usd"] for r in rows)
    assert [r["cheapest"] for r in rows] == [r["replayed"]["cost_usd"] == cheapest for r in rows] and any(
        r["cheapest"] for r in rows
    ), "the JSON marks it too"


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--sweep"], "--sweep needs NAME=V1,V2"),
        (["--sweep", "speed=1,2"], "NAME one of compact-at"),
        (["keep-turns=2"], "values are for --sweep"),
        (["--sweep", "keep-turns=2,zero"], "expected a whole number"),
        (["--cache-ttl", "1h", "--provider", "openai"], "caches automatically"),
        (["--sweep", "compact-at=4000", "compact-at=8000"], "compact-at is swept twice"),
        (["--sweep", "compact-at=4000,8000", "--compact-at", "6000"], "both set compact-at"),
    ],
)
def test_a_bad_replay_request_is_one_line(
    recorder: Any,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
    fragment: str,
) -> None:
    session, _ = recorder("anthropic", A, "bad")
    monkeypatch.setenv("TINY_AGENT_STORE", str(tmp_path / "sessions.db"))
    assert main(["replay", session, *args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and fragment in err[0], err


def test_a_session_without_calls_has_nothing_to_replay(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with SQLiteStore(tmp_path / "s.db") as store:
        session = store.create().id
    assert main(["replay", session, "--store", str(tmp_path / "s.db")]) == 2
    assert "no model call to replay" in capsys.readouterr().err
