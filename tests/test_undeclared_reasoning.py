"""Issue 27: a model no profile declares as thinking (a newer Kimi, a Qwen behind vLLM) that returns
``reasoning_content`` anyway gets it back on every later request as it came, so a thinking server
that refuses a tool-loop turn without it (the DeepSeek rule, in the billing fake) answers every call."""

from __future__ import annotations

from pathlib import Path

import pytest

from tiny_agent.agent.loop import Agent, AgentConfig
from tiny_agent.providers.registry import resolve_provider
from tiny_agent.testing import BillingFake, Task
from tiny_agent.testing.thinking_server import ThinkingRules
from tiny_agent.tools.toolbox import Toolbox
from tiny_agent.tools.workspace import Workspace
from tiny_agent.types import ReasoningBlock

ENV = {"MOONSHOT_API_KEY": "sk-m", "OPENAI_API_KEY": "sk-o"}


@pytest.mark.parametrize(("provider", "model"), [("moonshot", "kimi-k2.5"), ("openai", "qwen3-32b")])
def test_reasoning_an_undeclared_model_returns_goes_back_as_it_came(tmp_path: Path, provider: str, model: str) -> None:
    for i in range(3):
        (tmp_path / f"p{i}.txt").write_text(f"words of file {i} " * 30)
    task = Task("read", [[("read_file", {"path": f"p{i}.txt"})] for i in range(3)], "Done.")
    rules = ThinkingRules()
    with BillingFake([task], thinking=rules) as fake:
        url = fake.url("r", "openai", provider=provider)
        adapter = resolve_provider(provider, model=model, base_url=url, env=ENV, max_retries=0)
        assert not adapter.profile.thinks, "the profile declares no thinking for this model"
        agent = Agent(adapter, Toolbox(Workspace(tmp_path).tools()), config=AgentConfig(max_steps=10))
        result = agent.run("Please read the files")
        bodies = [b.body for b in fake.bills("r")]
    assert result.stop == "done", result.error
    assert rules.rejected == []
    kept = [b.text for m in agent.context.messages for b in m.content if isinstance(b, ReasoningBlock)]
    sent = [m["reasoning_content"] for m in bodies[-1]["messages"] if m.get("role") == "assistant"]
    assert len(kept) == len(sent) + 1, "the last request holds every turn but the final answer"
    assert sent == kept[:-1] and all(sent), "each assistant turn's reasoning, as received"
