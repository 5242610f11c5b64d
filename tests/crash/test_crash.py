"""Issue 7's crash test: a real ``tiny-agent`` run SIGKILLed at 50+ moments, each resumed and checked.

All cases run once, a few at a time, in a module fixture (see ``harness.run_cases``); each case is
then one test here, failing with the list of what went wrong after its kill. The sabotage cases run
the same story against an engine broken on purpose, and must fail: they show each kind of check
can fail. ``benchmarks/crash_test.py`` runs the same cases and writes the outcome table.

Every other one of the same kill points runs again with the session in a PostgreSQL database (each
case a database of its own on the test server); ``benchmarks/crash_test.py --postgres`` runs all.
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import PgServer
from tests.crash.harness import (
    SABOTAGE_CASES,
    Case,
    Outcome,
    deterministic_cases,
    postgres_cases,
    real_cli_cases,
    resume_cases,
    run_cases,
    sabotage_cases,
    timed_cases,
)
from tests.crash.server import ScriptedAnthropicServer
from tiny_agent.agent.loop import DEFAULT_SYSTEM
from tiny_agent.cli import main
from tiny_agent.store.sqlite import SQLiteStore

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the harness forks runs and kills them by pidfd")

KILLS = [*deterministic_cases(), *resume_cases(), *timed_cases(), *real_cli_cases()[:1]]
SABOTAGED = sabotage_cases()
PG_KILLS = [*KILLS[::2], *postgres_cases()]


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Outcome]:
    folder: Path = tmp_path_factory.mktemp("crash")
    done = run_cases([*KILLS, *SABOTAGED], folder, workers=max(2, os.cpu_count() or 2))
    return {o.name: o for o in done}


@pytest.mark.parametrize("case", KILLS, ids=lambda c: c.name)
def test_a_killed_run_resumes_legal_and_loses_nothing_committed(outcomes: dict[str, Outcome], case: Case) -> None:
    resumed_legal(outcomes[case.name], case)


def resumed_legal(outcome: Outcome, case: Case) -> None:
    assert not outcome.failures, f"{outcome.where}:\n" + "\n".join(outcome.failures)
    if case.kill.after is None:
        assert outcome.killed, "the kill point was never reached"


def test_the_kills_are_many_and_spread(outcomes: dict[str, Outcome]) -> None:
    killed = [outcomes[c.name] for c in KILLS if outcomes[c.name].killed]
    assert len(killed) >= 50
    forked = [o.where for o in killed if not o.real_cli]  # a real-process case repeats a moment on purpose
    assert len(set(forked)) == len(forked), "two cases killed at the same moment"
    categories = Counter(o.category for o in killed)
    for category in ("store write", "tool run", "provider call", "compaction", "resume"):
        assert categories[category] >= 5, categories
    assert sum(len(o.interrupted) for o in killed) >= 10, "few kills left tool calls without results"
    assert sum(o.lost_calls for o in killed) >= 10, "few kills landed with a call in flight"


@pytest.fixture(scope="module")
def pg_outcomes(tmp_path_factory: pytest.TempPathFactory, pg_server: PgServer) -> dict[str, Outcome]:
    folder: Path = tmp_path_factory.mktemp("crash-pg")
    done = run_cases(PG_KILLS, folder, workers=max(2, os.cpu_count() or 2), postgres=pg_server.url)
    return {o.name: o for o in done}


@pytest.mark.parametrize("case", PG_KILLS, ids=lambda c: c.name)
def test_a_killed_run_on_postgres_resumes_legal_and_loses_nothing_committed(
    pg_outcomes: dict[str, Outcome], case: Case
) -> None:
    resumed_legal(pg_outcomes[case.name], case)


def test_the_kills_on_postgres_are_spread(pg_outcomes: dict[str, Outcome]) -> None:
    killed = [pg_outcomes[c.name] for c in PG_KILLS if pg_outcomes[c.name].killed]
    assert len(killed) >= 40
    categories = Counter(o.category for o in killed)
    for category in ("store write", "tool run", "provider call", "compaction", "resume"):
        assert categories[category] >= 3, categories
    assert sum(len(o.interrupted) for o in killed) >= 5 and sum(o.lost_calls for o in killed) >= 5


@pytest.mark.parametrize("case", SABOTAGED, ids=lambda c: c.name)
def test_the_crash_test_catches_a_broken_engine(outcomes: dict[str, Outcome], case: Case) -> None:
    outcome = outcomes[case.name]
    expected = SABOTAGE_CASES[case.sabotage][1]
    assert outcome.killed
    assert any(expected in failure for failure in outcome.failures), outcome.failures


def test_a_session_killed_before_its_first_entry_resumes_with_the_default_system_prompt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The session row exists (``store.create`` committed) but the kill came before the entry that
    records its settings: resuming it must not run without the system prompt."""
    with SQLiteStore(tmp_path / "s.db") as store:
        session = store.create(workspace=str(tmp_path))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    with ScriptedAnthropicServer() as server:
        url = server.base_url("cut-short", "r1")
        args = ["--store", str(tmp_path / "s.db"), "--workspace", str(tmp_path), "--base-url", url, "-q"]
        assert main([*args, "--resume", session.id, "hello"]) == 0
        (request,) = (e.body for e in server.exchanges)
    assert [block["text"] for block in request["system"]] == [DEFAULT_SYSTEM]
