"""Anthropic's server-side compaction (``compact_20260112``, issue 27): a long read task with thinking
on (preserved), through the official SDK against the billing fake that compacts as the docs say.
The run completes with no rejected request; the server compacts several times and the log names
each; every call costs what the fake billed (both passes); the block survives a resume byte for byte."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from tiny_agent.agent.loop import Agent, AgentConfig
from tiny_agent.agent.run import Run
from tiny_agent.agent.settings import RunSettings
from tiny_agent.cli.app import main
from tiny_agent.context.engine import ContextConfig
from tiny_agent.errors import ConfigError, ProviderError
from tiny_agent.observe.call_lines import format_event
from tiny_agent.observe.history import history_lines
from tiny_agent.observe.stats import stats
from tiny_agent.observe.view.data import SessionView
from tiny_agent.providers.anthropic.reply import Accumulator, process
from tiny_agent.providers.registry import resolve_provider
from tiny_agent.providers.thinking import parse_thinking
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.testing import BillingFake, Task
from tiny_agent.testing.anthropic_compaction import ServerCompaction, compaction_errors
from tiny_agent.testing.thinking_server import ThinkingRules
from tiny_agent.tools.toolbox import Toolbox
from tiny_agent.tools.workspace import Workspace
from tiny_agent.types import ReasoningBlock

ENV = {"ANTHROPIC_API_KEY": "sk-test-compaction"}
MODEL = "claude-sonnet-5"
OWN = {"policy": "fraction", "compact_at": 180_000}
"""tiny-agent's own compaction set above the server's trigger: the server compacts first."""
READS = "Please read the sixty files one by one"
AGAIN = "Now read the first file once more"


def files(root: Path, count: int = 60) -> list[Task]:
    for i in range(count):  # ~2,000 tokens each: 60 of them pass 50,000 tokens twice and more
        line = f"File {i}: the service reads setting {i} when it starts, and logs it at level {i % 7}. "
        (root / f"f{i:02d}.txt").write_text(line * 95)
    steps = [[("read_file", {"path": f"f{i:02d}.txt"})] for i in range(count)]
    return [
        Task("read the sixty files", steps, "All sixty files read."),
        Task("read the first file once more", [[("read_file", {"path": "f00.txt"})]], "Read it again."),
    ]


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Any]:
    ws = tmp_path / "ws"
    ws.mkdir()
    compaction, rules = ServerCompaction(), ThinkingRules(redact_every=5)
    with SQLiteStore(tmp_path / "s.db") as store, BillingFake(files(ws), thinking=rules, compaction=compaction) as fake:

        def record(route: str, ask: str = READS, *, stream: bool = False, resume: str | None = None) -> Any:
            settings = RunSettings(
                provider="anthropic", model=MODEL, base_url=fake.url(route, "anthropic"), workspace=str(ws),
                thinking="adaptive", server_compact_at=50_000,
            )  # fmt: skip
            said: list[str] = []
            with Run.open(
                store, settings=settings, config=OWN, env=ENV, agent=AgentConfig(max_steps=100, stream=stream),
                resume=resume, on_event=lambda event: said.append(format_event(event)),
            ) as run:  # fmt: skip
                result = run.agent.run(ask)
                assert run.session is not None
                return result, run.session.id, run.agent.context.ledger, said

        record.store, record.fake, record.compaction, record.rules = store, fake, compaction, rules  # type: ignore[attr-defined]
        yield record


def compacted_in(reply: Mapping[str, Any]) -> bool:
    return any(b.get("type") == "compaction" for b in reply["content"])


@pytest.mark.parametrize("stream", [False, True], ids=["send", "stream"])
def test_a_long_read_task_compacts_on_the_server_and_costs_what_the_server_billed(server: Any, stream: bool) -> None:
    result, sid, ledger, said = server("long", stream=stream)
    fake, compaction, rules = server.fake, server.compaction, server.rules
    assert result.stop == "done" and result.answer == "All sixty files read."
    assert compaction.rejected == [] and rules.rejected == []
    bills = fake.bills("long")
    compacting = [b for b in bills if compacted_in(b.reply)]
    assert len(compacting) == compaction.compactions >= 2
    assert len(ledger.calls) == len(bills)
    assert all(c.purpose == "turn" for c in ledger.calls), "tiny-agent's own compaction never ran"
    for call, bill in zip(ledger.calls, bills, strict=True):
        assert call.usage.input_tokens == bill.call.input_tokens, "both passes counted"
        assert call.usage.output_tokens == bill.call.output_tokens
        assert call.cost_usd == pytest.approx(bill.call.usd)
    first = bills.index(compacting[0])
    for bill in bills[first + 1 :]:  # every request starts at the newest compaction block
        assert bill.body["messages"][0]["role"] == "assistant"
        assert bill.body["messages"][0]["content"][0]["type"] == "compaction"
        assert bill.call.input_tokens < 60_000
    lines = [line for line in said if "server compaction: context" in line]
    assert len(lines) == len(compacting) and all(" -> " in line and "?" not in line for line in lines)
    shown = list(history_lines(server.store.entries(sid)))
    assert sum("server compaction" in line for line in shown) == len(compacting)
    assert stats(server.store, [sid]).total.server_compactions == len(compacting)
    view = SessionView.of(server.store.get(sid), server.store.entries(sid)).session()
    assert sum(m["text"].startswith("server compaction") for m in view["marks"]) == len(compacting)


def test_the_block_survives_a_resume_byte_for_byte_and_the_next_run_starts_from_it(server: Any) -> None:
    _, sid, _, _ = server("resume")
    newest = [b for b in server.fake.bills("resume") if compacted_in(b.reply)][-1].reply["content"][0]
    entries = [e for e in server.store.entries(sid) if e.kind == "response"]
    kept = [b for e in entries for b in e.body["content"] if b.get("type") == "reasoning" and "item" in b]
    assert json.dumps(kept[-1]["item"]) == json.dumps(newest)
    result, _, _, _ = server("resume", AGAIN, resume=sid)
    assert result.stop == "done" and server.compaction.rejected == [] and server.rules.rejected == []
    later = server.fake.bills("resume")[-1].body["messages"][0]["content"][0]
    assert json.dumps(later) == json.dumps(newest)


def test_a_failed_compaction_goes_back_as_received_and_drops_nothing(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    compaction = ServerCompaction(fail_every=1)
    with BillingFake(files(ws, 40), thinking=ThinkingRules(), compaction=compaction) as fake:
        provider = resolve_provider(
            "anthropic", model=MODEL, base_url=fake.url("f", "anthropic"), env=ENV, compact_threshold=50_000,
            thinking=parse_thinking("adaptive"),
        )  # fmt: skip
        config = ContextConfig(compact_at=180_000, policy="fraction")
        agent = Agent(
            provider, Toolbox(Workspace(ws).tools()), config=AgentConfig(max_steps=100), context_config=config
        )
        assert agent.run(READS).stop == "done"
        bills = fake.bills("f")
    assert compaction.failures >= 1 and compaction.rejected == []
    failed = next(b for b in bills if compacted_in(b.reply)).reply["content"][0]
    assert failed["content"] is None
    after = bills[-1].body["messages"]
    assert after[0]["role"] == "user", "a failed block stands for nothing: the history stays"
    assert failed in [b for m in after for b in m["content"] if isinstance(m["content"], list)]


def test_a_trigger_below_50000_is_one_line_before_any_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(ConfigError, match="50,000"):
        resolve_provider("anthropic", model=MODEL, env=ENV, compact_threshold=49_999)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    argv = ["--provider", "anthropic", "--server-compact-at", "20000", "--no-session", "--workspace", str(tmp_path)]
    assert main([*argv, "hi"]) == 2
    err = capsys.readouterr().err.strip()
    assert "50,000" in err and "\n" not in err


def test_the_cli_flag_asks_the_server_to_compact_with_the_beta_header(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    compaction = ServerCompaction()
    with BillingFake(files(tmp_path, 30), compaction=compaction) as fake:
        argv = ["--provider", "anthropic", "--model", MODEL, "--base-url", fake.url("cli", "anthropic")]
        argv += ["--server-compact-at", "50000", "--compact-at", "180000", "--policy", "fraction", "--max-steps", "40"]
        argv += ["--no-session", "--workspace", str(tmp_path), READS]
        assert main(argv) == 0
        bills = fake.bills("cli")
    edit = {"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": 50_000}}
    assert all(b.body["context_management"] == {"edits": [edit]} for b in bills)
    assert compaction.rejected == [] and compaction.compactions >= 1, "the fake refuses the field without the beta"
    assert "server compaction: context" in capsys.readouterr().err


def test_the_fake_refuses_a_low_trigger_and_a_modified_block_with_the_apis_texts(tmp_path: Path) -> None:
    compaction = ServerCompaction()
    with BillingFake(files(tmp_path, 1), compaction=compaction) as fake:
        provider = resolve_provider("anthropic", model=MODEL, base_url=fake.url("x", "anthropic"), env=ENV,
                                    max_retries=0)  # fmt: skip
        body = {"model": MODEL, "max_tokens": 100, "messages": [{"role": "user", "content": "read the sixty files"}]}
        low = {**body, "context_management": {"edits": [{"type": "compact_20260112", "trigger": {"value": 1000}}]}}
        with pytest.raises(ProviderError, match="greater than or equal to 50000"):
            provider.send(low)
        forged = {"type": "compaction", "content": "Summary: all files read.", "encrypted_content": "cmp.forged"}
        messages = [{"role": "assistant", "content": [forged, {"type": "text", "text": "ok"}]}, body["messages"][0]]
        with pytest.raises(ProviderError, match="Invalid `encrypted_content`"):
            provider.send({**body, "messages": messages})
    assert compaction.rejected == [
        compaction_errors["trigger"].format(k=0),
        compaction_errors["encrypted"].format(i=0, j=0),
    ]


def test_whole_and_streamed_replies_keep_the_same_block_and_bill_both_passes() -> None:
    block = {"type": "compaction", "content": "Summary: read.", "encrypted_content": "cmp.abc"}
    passes = [
        {"type": "compaction", "input_tokens": 10, "cache_read_input_tokens": 60_000, "cache_creation_input_tokens": 0,
         "output_tokens": 400},
        {"type": "message", "input_tokens": 500, "cache_read_input_tokens": 3_000, "cache_creation_input_tokens": 0,
         "output_tokens": 50},
    ]  # fmt: skip
    usage = {"input_tokens": 500, "cache_read_input_tokens": 3_000, "cache_creation_input_tokens": 0,
             "output_tokens": 50, "iterations": passes}  # fmt: skip
    whole = {"id": "msg_1", "model": MODEL, "stop_reason": "end_turn", "usage": usage,
             "content": [block, {"type": "text", "text": "Done."}]}  # fmt: skip
    accumulator = Accumulator()
    start = {**whole, "content": [], "stop_reason": None}
    events = [
        {"type": "message_start", "message": start},
        {"type": "content_block_start", "index": 0,
         "content_block": {"type": "compaction", "content": None, "encrypted_content": None}},
        {"type": "content_block_delta", "index": 0,
         "delta": {"type": "compaction_delta", "content": block["content"], "encrypted_content": "cmp.abc"}},
        {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": "Done."}},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 50}},
    ]  # fmt: skip
    for event in events:
        accumulator.feed(event)
    for response in (process(whole, MODEL), process(accumulator.result("anthropic"), MODEL)):
        first = response.message.content[0]
        assert isinstance(first, ReasoningBlock) and json.dumps(first.item) == json.dumps(block)
        assert response.usage.input_tokens == 10 + 60_000 + 500 + 3_000
        assert response.usage.cache_read_tokens == 63_000 and response.usage.output_tokens == 450
        compacted = response.usage.details["server_compaction"]
        assert compacted == {"tokens_before": 60_010, "tokens_after": 3_500}
