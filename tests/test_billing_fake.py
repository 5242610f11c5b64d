"""The billing fake: both wires, whole and streamed, through the real SDKs; what a session records
equals what the fake billed, call for call."""

from __future__ import annotations

from pathlib import Path

import pytest

from tiny_agent.agent.loop import Agent, AgentConfig
from tiny_agent.context.engine import ContextConfig
from tiny_agent.providers.registry import resolve_provider
from tiny_agent.testing import BillingFake, Task
from tiny_agent.tools.toolbox import Toolbox
from tiny_agent.tools.workspace import Workspace

from .recorded import ENV, MODELS


def tour(root: Path, files: int = 6) -> Task:
    for i in range(files):
        (root / f"f{i}.txt").write_text(f"line {i} of a long file with words " * 300)
    return Task("tour the files", [[("read_file", {"path": f"f{i}.txt"})] for i in range(files)], "All read.")


@pytest.mark.parametrize("stream", [False, True], ids=["send", "stream"])
@pytest.mark.parametrize("wire", ["anthropic", "openai"])
def test_what_a_session_records_is_what_the_fake_billed(tmp_path: Path, wire: str, stream: bool) -> None:
    task = tour(tmp_path)
    with BillingFake([task]) as fake:
        provider = resolve_provider(wire, model=MODELS[wire], base_url=fake.url("run", wire), env=ENV)  # type: ignore[arg-type]
        agent = Agent(
            provider,
            Toolbox(Workspace(tmp_path).tools()),
            config=AgentConfig(stream=stream),
            context_config=ContextConfig(compact_at=6000, keep_turns=2),
        )
        result = agent.run("Please tour the files now")
        bills = fake.bills("run")
    assert result.stop == "done" and result.answer == "All read."
    calls = agent.context.ledger.calls
    assert len(calls) == len(bills) and any(c.purpose == "compaction" for c in calls)
    for call, bill in zip(calls, bills, strict=True):
        assert call.usage.input_tokens == bill.call.input_tokens
        assert call.usage.cache_read_tokens == bill.call.cache_read
        assert call.usage.output_tokens == bill.call.output_tokens
        assert call.cost_usd == pytest.approx(bill.call.usd)
    assert sum(b.call.cache_read for b in bills) > 0, "the fake's cache is read"


def test_an_unknown_route_is_a_404(tmp_path: Path) -> None:
    with BillingFake([tour(tmp_path, 1)]) as fake:
        url = fake.url("known", "anthropic").replace("/known", "/unknown")
        provider = resolve_provider("anthropic", model=MODELS["anthropic"], base_url=url, env=ENV, max_retries=0)
        agent = Agent(provider, Toolbox(Workspace(tmp_path).tools()))
        result = agent.run("tour the files")
    assert result.stop == "provider_error" and "404" in str(result.error)
