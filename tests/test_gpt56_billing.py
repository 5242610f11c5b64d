"""A GPT-5.6 run end to end: the real adapter (official SDK) against the billing fake, which bills by
the simulator's GPT-5.6 rules; what the engine records is what was billed, and ``replay`` prices it."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.providers.sdk_wire import marks, pairing_problems, sdk_validate
from tests.test_replay import tour
from tiny_agent.agent.run import Run
from tiny_agent.agent.settings import RunSettings
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.testing import BillingFake
from tiny_agent.whatif.replay import Policy, replay

ENV = {"OPENAI_API_KEY": "sk-test-billing-fake-2"}
OWN = {"policy": "fraction", "compact_at": 6000, "keep_turns": 2}
OTHER = {"policy": "fraction", "compact_at": 10000, "keep_turns": 3}


@pytest.fixture
def recorder(tmp_path: Path) -> Iterator[Any]:
    ws = tmp_path / "ws"
    ws.mkdir()
    task = tour(ws)
    with SQLiteStore(tmp_path / "sessions.db") as store, BillingFake([task]) as fake:

        def record(config: Mapping[str, Any], route: str) -> tuple[str, Any]:
            url = fake.url(route, "openai")
            # The policies' costs were measured with the three file tools; the prefix is part of the bill.
            given = RunSettings(provider="openai", model="gpt-5.6", base_url=url, workspace=str(ws), code_tools=False)
            with Run.open(store, settings=given, config=config, env=ENV) as run:
                assert run.agent.run("Please tour the files now").stop == "done"
                assert run.session is not None
                return run.session.id, run.agent.context.ledger

        record.store = store  # type: ignore[attr-defined]
        record.fake = fake  # type: ignore[attr-defined]
        yield record


def test_a_gpt_5_6_run_is_billed_for_writes_and_records_what_was_billed(recorder: Any) -> None:
    _, ledger = recorder(OWN, "own")
    bills = recorder.fake.bills("own")
    assert len(bills) == len(ledger.calls) >= 14
    for bill in bills:
        sdk_validate(bill.body)
        assert pairing_problems(bill.body) == []
        assert bill.body["prompt_cache_options"] == {"mode": "explicit", "ttl": "30m"} and marks(bill.body)
    assert len({bill.body["prompt_cache_key"] for bill in bills}) == 1
    written = sum(b.call.cache_write for b in bills)
    read = sum(b.call.cache_read for b in bills)
    assert written > 0 and read > 2 * written, "the cache is written and read back"
    for bill, call in zip(bills, ledger.calls, strict=True):
        # The adapter reads cache_write_tokens; the profile prices them at 1.25x, as the fake billed.
        assert call.usage.cache_write_tokens == (bill.call.cache_write or None)
        assert call.usage.cache_read_tokens == bill.call.cache_read
        assert call.cost_usd == pytest.approx(bill.call.usd, rel=1e-9)
    assert ledger.total_cost_usd == pytest.approx(sum(b.call.usd for b in bills))


def test_a_gpt_5_6_session_replays_its_own_bill_and_predicts_another_policys(recorder: Any) -> None:
    session, ledger = recorder(OWN, "own")
    _, other = recorder(OTHER, "other")
    billed, other_billed = ledger.total_cost_usd, other.total_cost_usd
    assert abs(billed - other_billed) / other_billed > 0.05, "the two policies cost differently"
    entries = recorder.store.entries(session)
    own = replay(entries)
    assert own.recorded.compactions >= 2
    assert [c.fingerprint for c in own.replayed.per_call] == [c.fingerprint for c in own.recorded.per_call]
    assert own.replayed.cost_usd == pytest.approx(billed, rel=0.01)
    predicted = replay(entries, Policy(OTHER)).replayed.cost_usd
    assert predicted is not None and abs(predicted - other_billed) / other_billed < 0.05, (predicted, other_billed)
