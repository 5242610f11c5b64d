"""Acceptance of issue 27: one 40-read task in one request, compaction forced to fire inside the tool
loop, on a server that enforces the thinking rules (Anthropic) and one that enforces reasoning_content
(DeepSeek, Kimi), through the official SDKs: the answer is complete, no request is rejected, the task
and the pin are in every request, and what a session records is what the server billed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tiny_agent.agent.loop import Agent, AgentConfig
from tiny_agent.context.engine import ContextConfig
from tiny_agent.context.shrink import thinking as shrink_thinking
from tiny_agent.observe.call_lines import format_usage
from tiny_agent.providers.registry import resolve_provider
from tiny_agent.providers.thinking import parse_thinking
from tiny_agent.testing import BillingFake, Task
from tiny_agent.testing.thinking_server import ThinkingRules
from tiny_agent.tools.toolbox import Toolbox
from tiny_agent.tools.workspace import Workspace

ENV = {"ANTHROPIC_API_KEY": "sk-test-1", "DEEPSEEK_API_KEY": "sk-test-2", "MOONSHOT_API_KEY": "sk-test-3"}
PIN = "never edit dev.mjs"
REQUEST = "Please read the forty files one by one and report"


def forty(root: Path, files: int = 40) -> Task:
    for i in range(files):
        (root / f"part{i:02d}.txt").write_text(f"line {i} of a long file with words " * 120)
    steps = [[("read_file", {"path": f"part{i:02d}.txt"})] for i in range(files)]
    return Task("read the forty files", steps, "All forty files read: the report is complete.")


def run(  # type: ignore[no-untyped-def]
    root: Path,
    provider_name: str,
    model: str,
    *,
    stream: bool = False,
    binding: str = "strict",
    config: ContextConfig | None = None,
    counted: list[int] | None = None,
    asked: str = "adaptive",
):
    """``counted``: filled with the fake's answers to count_tokens."""
    rules = ThinkingRules(redact_every=4)
    with BillingFake([forty(root)], thinking=rules) as fake:
        wire = "anthropic" if provider_name == "anthropic" else "openai"
        url = fake.url("run", wire, provider=provider_name)
        thinking = parse_thinking(asked, binding=binding) if wire == "anthropic" else parse_thinking(None)
        provider = resolve_provider(provider_name, model=model, base_url=url, env=ENV, thinking=thinking, max_retries=0)
        agent = Agent(
            provider,
            Toolbox(Workspace(root).tools()),
            config=AgentConfig(stream=stream, max_steps=200),
            context_config=config or ContextConfig(compact_at=9000, keep_turns=2),
            pins=[PIN],
        )
        result = agent.run(REQUEST)
        if counted is not None:
            counted.extend(fake.counts("run"))
        return result, agent, fake.bills("run"), rules


def check_run(result, agent, bills, rules) -> None:  # type: ignore[no-untyped-def]
    assert rules.rejected == [], rules.rejected[:1]
    assert result.stop == "done" and result.answer == "All forty files read: the report is complete."
    calls = agent.context.ledger.calls
    assert sum(1 for c in calls if c.purpose == "compaction") >= 3
    assert sum(1 for c in agent.context.state.compactions) >= 3
    assert len(calls) == len(bills)
    for call, bill in zip(calls, bills, strict=True):
        text = json.dumps(bill.body)
        assert "read the forty files" in text and PIN in text, "the task and the pin are in every request"
        assert call.usage.input_tokens == bill.call.input_tokens
        assert call.usage.cache_read_tokens == bill.call.cache_read
        assert call.usage.output_tokens == bill.call.output_tokens
        details = bill.reply["usage"].get("output_tokens_details") or bill.reply["usage"].get(
            "completion_tokens_details"
        )
        thinking = details[next(iter(details))] if details else None
        assert call.usage.reasoning_tokens == thinking and thinking
        assert f"(thinking {thinking:,})" in format_usage(call.usage)
        assert call.cost_usd == pytest.approx(bill.call.usd)


@pytest.mark.parametrize("stream", [False, True], ids=["send", "stream"])
def test_forty_reads_in_one_loop_on_the_anthropic_thinking_server(tmp_path: Path, stream: bool) -> None:
    result, agent, bills, rules = run(tmp_path, "anthropic", "claude-sonnet-5", stream=stream)
    check_run(result, agent, bills, rules)
    assert {c.strategy for c in agent.context.state.compactions} == {"fold"}
    sent = [b for bill in bills for m in bill.body["messages"] for b in m["content"] if isinstance(m["content"], list)]
    assert any(b["type"] == "redacted_thinking" for b in sent) and any(b["type"] == "thinking" for b in sent)


@pytest.mark.parametrize("stream", [False, True], ids=["send", "stream"])
def test_drop_block_keeps_the_turns_and_records_what_the_api_dropped(tmp_path: Path, stream: bool) -> None:
    counted: list[int] = []
    result, agent, bills, rules = run(
        tmp_path, "anthropic", "claude-sonnet-5", stream=stream, binding="drop_block", counted=counted
    )
    check_run(result, agent, bills, rules)
    compactions = agent.context.state.compactions
    assert {c.strategy for c in compactions} == {"drop_block"}
    dropped = [c.usage.details.get("input_transformations") for c in agent.context.ledger.calls]
    assert any(dropped), "the dropped blocks are on the call records"
    assert dropped == [b.reply.get("input_transformations") for b in bills], "every reply's, streamed or not"
    assert all(b.body["thinking"]["block_binding"] == {"prefix_mismatch_behavior": "drop_block"} for b in bills)
    assert len(counted) == len(compactions), "count_tokens sizes each compaction (with the binding's beta)"


@pytest.mark.parametrize("asked", ["adaptive", "4096"])
def test_the_default_model_folds_too_on_a_server_that_binds_every_block(tmp_path: Path, asked: str) -> None:
    """claude-sonnet-4-6 declares no preserved thinking (its API takes a kept block after a new prefix
    today); on a stricter server that binds every block to its prefix, as this fake does (a proxy, or
    the model if it starts to), every request is still taken."""
    result, agent, bills, rules = run(tmp_path, "anthropic", "claude-sonnet-4-6", asked=asked)
    check_run(result, agent, bills, rules)
    assert {c.strategy for c in agent.context.state.compactions} == {"fold"}


def test_without_the_fold_the_server_refuses_the_loop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shrink_thinking, "strategy", lambda profile: "")
    result, _, _, rules = run(tmp_path, "anthropic", "claude-sonnet-5")
    assert result.stop == "provider_error"
    assert "The block is bound to a different conversation" in rules.rejected[0]


@pytest.mark.parametrize("stream", [False, True], ids=["send", "stream"])
@pytest.mark.parametrize(("name", "model"), [("deepseek", "deepseek-v4-flash"), ("moonshot", "kimi-k2.6")])
def test_forty_reads_in_one_loop_on_a_reasoning_content_server(
    tmp_path: Path, name: str, model: str, stream: bool
) -> None:
    result, agent, bills, rules = run(tmp_path, name, model, stream=stream)
    check_run(result, agent, bills, rules)
    loops = [m for bill in bills[1:] for m in bill.body["messages"] if m.get("tool_calls")]
    assert loops and all("reasoning_content" in m for m in loops)


def test_a_tool_loop_turn_without_its_reasoning_content_is_caught_before_it_is_sent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tiny_agent.providers.openai import adapter

    monkeypatch.setattr(adapter, "with_reasoning", lambda rendered, message: rendered)
    result, _, bills, rules = run(tmp_path, "deepseek", "deepseek-v4-flash")
    assert result.stop == "illegal_request" and "reasoning-content-missing" in str(result.error)
    assert rules.rejected == [] and len(bills) == 1, "the check stops it before the server sees it"


def test_clearing_waits_while_thinking_is_bound_to_its_prefix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tiny_agent.context.shrink import clearing

    monkeypatch.setattr(clearing, "clearing_allowed", lambda profile: True)
    monkeypatch.setattr(clearing, "clearing_pays", lambda *args: True)
    config = ContextConfig(compact_at=60_000, keep_turns=2, clear_after=2, policy="fraction")
    result, agent, _, rules = run(tmp_path, "anthropic", "claude-sonnet-5", config=config)
    assert result.stop == "provider_error" and "bound to a different conversation" in rules.rejected[0]
    assert agent.context.state.stubs, "a clearing ran and broke the binding: the guard is what prevents it"
    monkeypatch.undo()
    (tmp_path / "guarded").mkdir()
    result, agent, _, rules = run(tmp_path / "guarded", "anthropic", "claude-sonnet-5", config=config)
    assert result.stop == "done" and rules.rejected == [] and not agent.context.state.stubs
