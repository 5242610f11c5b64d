"""Compaction comes before the context outgrows what the window leaves beside the reply: a thinking
budget of 12,000 in a 30,000-token window leaves 13,904 tokens for the request, so a policy that
waits for 80% of the window (24,000) would stop the run with a request it cannot send."""

from __future__ import annotations

from pathlib import Path

import pytest

from tiny_agent.agent.loop import Agent, AgentConfig
from tiny_agent.context.engine import Context, ContextConfig
from tiny_agent.providers.registry import resolve_provider
from tiny_agent.providers.thinking import parse_thinking
from tiny_agent.testing import BillingFake, Task
from tiny_agent.testing.thinking_server import ThinkingRules
from tiny_agent.tools.toolbox import Toolbox
from tiny_agent.tools.workspace import Workspace

ENV = {"ANTHROPIC_API_KEY": "k"}


def reads(root: Path, files: int) -> Task:
    for i in range(files):
        (root / f"part{i:02d}.txt").write_text(f"line {i} of a long file with words " * 120)
    return Task("read the files", [[("read_file", {"path": f"part{i:02d}.txt"})] for i in range(files)], "All read.")


@pytest.mark.parametrize("policy", ["fraction", "cost"])
def test_a_loop_under_a_large_budget_compacts_before_its_request_outgrows_the_room(tmp_path: Path, policy: str) -> None:
    rules = ThinkingRules(words=40, preserved=False)  # claude-sonnet-4-6: blocks not bound to their prefix
    with BillingFake([reads(tmp_path, 30)], thinking=rules) as fake:
        url = fake.url("r", "anthropic")
        provider = resolve_provider(
            "anthropic", model="claude-sonnet-4-6", base_url=url, env=ENV, thinking=parse_thinking("12000")
        )
        config = ContextConfig(context_window=30_000, compact_at=0.8, policy=policy)
        agent = Agent(
            provider, Toolbox(Workspace(tmp_path).tools()), config=AgentConfig(max_steps=100), context_config=config
        )
        assert agent.context.threshold(provider) == 30_000 - 16_096, "the room beside the reply, not 24,000"
        result = agent.run("Please read the files one by one")
        bills = fake.bills("r")
    assert result.stop == "done", result.message
    assert rules.rejected == []
    compactions = [c for c in agent.context.ledger.calls if c.purpose == "compaction"]
    assert len(compactions) >= 2
    assert max(b.call.input_tokens for b in bills) <= 30_000 - 16_096, "every request fitted beside its reply"


def test_the_threshold_is_the_configs_where_the_reply_leaves_room() -> None:
    provider = resolve_provider("anthropic", model="claude-sonnet-4-6", base_url="http://127.0.0.1:9", env=ENV)
    context = Context("s", config=ContextConfig(compact_at=0.8))
    assert context.threshold(provider) == int(0.8 * context.context_window(provider))


@pytest.mark.parametrize("max_tokens", [None, 1000])
def test_a_replay_compacts_where_the_run_did(tmp_path: Path, max_tokens: int | None) -> None:
    """The replay sends nothing, yet it keeps the room its requests' replies would take, the run's
    --max-tokens included, so the recorded policy replayed compacts as often as the run (before:
    once for the run's 3 times; with --max-tokens 1000, 3 times for the run's 2)."""
    from tiny_agent.agent.run import Run
    from tiny_agent.agent.settings import RunSettings
    from tiny_agent.store.sqlite import SQLiteStore
    from tiny_agent.whatif.replay import Policy, replay

    rules = ThinkingRules(words=40, preserved=False)
    with BillingFake([reads(tmp_path, 30)], thinking=rules) as fake, SQLiteStore(tmp_path / "s.db") as store:
        url = fake.url("r", "anthropic")
        settings = RunSettings(
            provider="anthropic",
            model="claude-sonnet-4-6",
            base_url=url,
            workspace=str(tmp_path),
            thinking="12000",
            max_tokens=max_tokens,
        )
        config = {"context_window": 30_000, "policy": "fraction"}
        with Run.open(store, settings=settings, env=ENV, config=config, agent=AgentConfig(max_steps=100)) as run:
            assert run.run("Please read the files one by one").stop == "done"
            assert run.session is not None
            sid = run.session.id
        replayed = replay(store.entries(sid), Policy())
    assert replayed.recorded.compactions >= 2
    assert replayed.replayed.compactions == replayed.recorded.compactions
