"""The Responses wire end to end: the real adapter (official ``openai`` SDK, ``responses.create``)
against the validating test server, through ``Run.open`` as the CLI drives it."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.test_replay import tour
from tiny_agent.agent.loop import AgentConfig
from tiny_agent.agent.run import Run
from tiny_agent.agent.settings import RunSettings
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.testing.responses_server import REASONING_TOKENS, ResponsesServer
from tiny_agent.types import ReasoningBlock
from tiny_agent.whatif.replay import Policy, replay

ENV = {"OPENAI_API_KEY": "sk-test-responses"}
TIGHT = {"policy": "fraction", "compact_at": 9000, "keep_turns": 2}
OTHER = {"policy": "fraction", "compact_at": 14000, "keep_turns": 3}


@pytest.fixture
def recorder(tmp_path: Path) -> Iterator[Any]:
    ws = tmp_path / "ws"
    ws.mkdir()
    task = tour(ws, files=40)
    with SQLiteStore(tmp_path / "sessions.db") as store, ResponsesServer([task]) as server:

        def record(config: Mapping[str, Any], route: str, model: str = "gpt-5.6", stream: bool = False) -> Any:
            given = RunSettings(
                provider="openai", api="responses", model=model, base_url=server.url(route), workspace=str(ws)
            )
            agent = AgentConfig(max_steps=60, stream=stream)
            with Run.open(store, settings=given, config=config, env=ENV, agent=agent) as run:
                assert run.agent.run("Please tour the files now").stop == "done"
                assert run.session is not None
                return run.session.id, run.agent.context.ledger

        record.store = store  # type: ignore[attr-defined]
        record.server = server  # type: ignore[attr-defined]
        record.ws = ws  # type: ignore[attr-defined]
        yield record


def test_a_40_file_task_compacts_three_times_with_no_rejected_request(recorder: Any) -> None:
    session, ledger = recorder(TIGHT, "tight")
    server = recorder.server
    bills = server.bills("tight")
    assert server.rejected == []
    assert replay(recorder.store.entries(session)).recorded.compactions >= 3
    assert len(bills) == len(ledger.calls) >= 40
    for bill, call in zip(bills, ledger.calls, strict=True):
        usage = bill.reply["usage"]
        assert call.usage.input_tokens == usage["input_tokens"]
        assert call.usage.cache_read_tokens == usage["input_tokens_details"]["cached_tokens"]
        assert (call.usage.cache_write_tokens or 0) == usage["input_tokens_details"]["cache_write_tokens"]
        assert call.usage.reasoning_tokens == REASONING_TOKENS
        assert call.cost_usd == pytest.approx(bill.call.usd, rel=1e-9)
        assert bill.body["store"] is False and bill.body["include"] == ["reasoning.encrypted_content"]
    assert sum(b.call.cache_write for b in bills) > 0 and sum(b.call.cache_read for b in bills) > 0
    assert "prompt_cache_options" not in bills[0].body or "comparison_response_id" not in bills[0].body["prompt_cache_options"]
    for before, bill in zip(bills, bills[1:], strict=False):
        assert bill.body["prompt_cache_options"]["comparison_response_id"] == before.reply["id"]
    assert len({b.body["prompt_cache_key"] for b in bills}) == 1
    # reasoning items went back whole, to the model that wrote them
    assert any(x.get("type") == "reasoning" and x.get("encrypted_content") for x in bills[-1].body["input"])


def test_the_server_reason_is_recorded_beside_ours(recorder: Any) -> None:
    _, ledger = recorder(TIGHT, "diag")
    reasons = [c.provider_miss for c in ledger.calls if c.provider_miss]
    assert "input_changed" in reasons or "context_compacted" in reasons
