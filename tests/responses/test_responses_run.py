"""The Responses wire end to end: the real adapter (official ``openai`` SDK, ``responses.create``)
against the validating test server, through ``Run.open`` as the CLI drives it."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.test_replay import tour
from tiny_agent.agent.loop import AgentConfig
from tiny_agent.agent.run import Run
from tiny_agent.agent.settings import RunSettings
from tiny_agent.observe.call_lines import format_event
from tiny_agent.observe.export import export_lines, read_export
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.testing.responses_server import REASONING_TOKENS, ResponsesServer
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

        def record(
            config: Mapping[str, Any],
            route: str,
            model: str = "gpt-5.6",
            stream: bool = False,
            resume: str | None = None,
            said: list[str] | None = None,
            ask: str = "Please tour the files now",
            server_compact_at: int | None = None,
        ) -> Any:
            given = RunSettings(
                provider="openai",
                api="responses",
                model=model,
                base_url=server.url(route),
                workspace=str(ws),
                server_compact_at=server_compact_at,
            )
            agent = AgentConfig(max_steps=60, stream=stream)
            on_event = (lambda event: said.append(format_event(event))) if said is not None else None
            with Run.open(
                store, settings=given, config=config, env=ENV, agent=agent, resume=resume, on_event=on_event
            ) as run:
                assert run.agent.run(ask).stop == "done"
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
    assert "comparison_response_id" not in bills[0].body.get("prompt_cache_options", {})
    for before, bill in itertools.pairwise(bills):
        assert bill.body["prompt_cache_options"]["comparison_response_id"] == before.reply["id"]
    assert len({b.body["prompt_cache_key"] for b in bills}) == 1
    # reasoning items went back whole, to the model that wrote them
    assert any(x.get("type") == "reasoning" and x.get("encrypted_content") for x in bills[-1].body["input"])


def test_the_server_reason_is_recorded_beside_ours(recorder: Any) -> None:
    _, ledger = recorder(TIGHT, "diag")
    reasons = [c.provider_miss for c in ledger.calls if c.provider_miss]
    assert "input_changed" in reasons or "context_compacted" in reasons


def test_a_model_switch_on_resume_drops_what_the_new_model_cannot_read_and_says_so_once(recorder: Any) -> None:
    session, _ = recorder(TIGHT, "switch")
    said: list[str] = []
    recorder(TIGHT, "switch", model="gpt-5.5", resume=session, said=said, ask="Please tour the files now, again")
    server = recorder.server
    assert server.rejected == []
    notes = [line for line in said if "cannot read" in line]
    assert len(notes) == 1 and "gpt-5.5 cannot read" in notes[0] and "of gpt-5.6" in notes[0], said
    after = [b for b in server.bills("switch") if b.body["model"] == "gpt-5.5"]
    assert after
    for bill in after:
        sealed = [x for x in bill.body["input"] if x.get("encrypted_content")]
        assert all(x["id"] > "rs_" and x["encrypted_content"] for x in sealed)
        assert not any(x["id"] in _ids_of(server, "gpt-5.6", "switch") for x in sealed)


def _ids_of(server: ResponsesServer, model: str, route: str) -> set[str]:
    return {x["id"] for b in server.bills(route) if b.body["model"] == model for x in b.reply["output"]}


def test_a_stream_gives_what_a_whole_answer_gives(recorder: Any) -> None:
    said: list[str] = []
    _, streamed = recorder(TIGHT, "streamed", stream=True, said=said)
    _, whole = recorder(TIGHT, "whole")
    assert recorder.server.rejected == []
    assert [c.usage for c in streamed.calls] == [c.usage for c in whole.calls]
    streams = [b.body["stream"] for b in recorder.server.bills("streamed")]
    assert streams.count(True) >= 40, "every turn streams (summary calls need not)"
    assert "All read." in "".join(said)


def test_an_exported_session_imported_and_replayed_reprices_within_one_percent(recorder: Any, tmp_path: Path) -> None:
    session, ledger = recorder(TIGHT, "export")
    store = recorder.store
    lines = list(export_lines(store.get(session), store.entries(session)))
    info, entries = read_export(lines, "export.jsonl")
    with SQLiteStore(tmp_path / "other.db") as other:
        other.restore(info, entries)
        imported = other.entries(session)
    billed = sum(b.call.usd for b in recorder.server.bills("export"))
    assert ledger.total_cost_usd == pytest.approx(billed, rel=1e-9)
    own = replay(imported)
    assert own.replayed.cost_usd == pytest.approx(billed, rel=0.01)
    _, other_ledger = recorder(OTHER, "export-other")
    predicted = replay(imported, Policy(OTHER)).replayed.cost_usd
    other_billed = other_ledger.total_cost_usd
    assert predicted is not None and abs(predicted - other_billed) / other_billed < 0.05, (predicted, other_billed)


def test_server_compaction_is_kept_in_the_log_and_replayed_in_place_of_what_it_stands_for(recorder: Any) -> None:
    session, ledger = recorder({"policy": "fraction", "compact_at": 100000}, "server", server_compact_at=6000)
    server = recorder.server
    bills = server.bills("server")
    assert server.rejected == [] and server.compactions >= 3
    assert replay(recorder.store.entries(session)).recorded.compactions == 0, "ours never fired"
    assert max(b.call.input_tokens for b in bills) < 12000, "the input is cut at each compaction item"
    later = [b for b in bills if any(x.get("type") == "compaction" for x in b.body["input"])]
    assert len(later) >= len(bills) - 10
    for bill in later:
        kinds = [x.get("type") for x in bill.body["input"]]
        assert kinds.count("compaction") == 1 and kinds.index("compaction") == 1  # after the developer item
    own = replay(recorder.store.entries(session))
    assert own.replayed.cost_usd == pytest.approx(ledger.total_cost_usd, rel=0.01)


def test_python_tools_a_budget_a_fork_stats_lint_and_export_work_on_the_wire(recorder: Any, tmp_path: Path) -> None:
    from tiny_agent.context.session import Session
    from tiny_agent.observe.lint import detect_wire, lint_body
    from tiny_agent.observe.stats import stats
    from tiny_agent.tools.python_tools import tool

    @tool
    def shout(text: str) -> str:
        """Say it louder."""
        return text.upper()

    store, server = recorder.store, recorder.server
    given = RunSettings(provider="openai", api="responses", model="gpt-5.6", base_url=server.url("tools"),
                        workspace=str(recorder.ws))  # fmt: skip
    with Run.open(store, settings=given, config=TIGHT, env=ENV, tools=[shout],
                  agent=AgentConfig(max_steps=60, budget_usd=0.05)) as run:  # fmt: skip
        result = run.agent.run("Please tour the files now")
        assert run.session is not None
        session = run.session.id
    assert result.stop == "budget", result.stop
    bills = server.bills("tools")
    assert any(t["name"] == "shout" for t in bills[0].body["tools"])
    assert sum(b.call.usd for b in bills) <= 0.05
    fork = Session.fork(store, session)
    assert store.entries(fork.id)[-1].seq == store.entries(session)[-1].seq
    figures = stats(store, [session]).total.to_dict()
    assert figures["calls"] == len(bills) and figures["cost_usd"] == pytest.approx(sum(b.call.usd for b in bills))
    exported = json.loads("\n".join(export_lines(store.get(session), store.entries(session), "responses")))
    assert detect_wire(exported) == "responses" and exported["store"] is False
    assert [f for f in lint_body(bills[-1].body) if f.severity == "error"] == []
    assert server.rejected == []
