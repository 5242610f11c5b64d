"""The guided grammar on the real server: llama.cpp decodes exactly what the guide allows.

What the model chooses among the allowed replies is measured by benchmarks/tool_choice.py, not
asserted here; what is asserted holds whatever it chooses: the only call on offer is made, the
answer is one of the quotes, and the prompt's cached prefix is the same with and without the guide.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tiny_agent.agent.loop import DEFAULT_SYSTEM, Agent, AgentConfig, ToolEvent
from tiny_agent.context.engine import Context
from tiny_agent.providers.local.llama_server import LlamaServer
from tiny_agent.providers.local.provider import LocalProvider
from tiny_agent.tools.toolbox import Toolbox
from tiny_agent.tools.workspace import Workspace

pytestmark = pytest.mark.integration

BAKERY = Path(__file__).resolve().parents[2] / "examples" / "bakery"


@pytest.fixture
def bakery(tmp_path: Path) -> Path:
    return Path(shutil.copytree(BAKERY, tmp_path / "bakery"))


def test_a_guided_run_reads_the_named_file_and_quotes_it(llama_server: LlamaServer, bakery: Path) -> None:
    provider = LocalProvider(base_url=llama_server.base_url, api_key=llama_server.api_key, max_tokens=128)
    agent = Agent(provider, Toolbox(Workspace(bakery).tools()), config=AgentConfig(max_steps=4))
    result = agent.run("How much is a croissant? Prices are in menu.txt.")
    calls = [e for e in result.events if isinstance(e, ToolEvent)]
    # The request names one existing file and the model must look first: one call is possible.
    assert [(c.call.name, dict(c.call.input)) for c in calls[:1]] == [("read_file", {"path": "menu.txt"})]
    assert not calls[0].result.is_error
    # After that read nothing is left to call: the next reply is an answer, a quote of the menu.
    assert result.stop == "done" and result.steps == 2, result.message
    menu = (bakery / "menu.txt").read_text()
    assert result.answer.strip() in {menu.strip(), *(line.strip() for line in menu.splitlines())}


def test_the_guide_leaves_the_cached_prefix_alone(llama_server: LlamaServer, bakery: Path) -> None:
    """Same conversation, with and without the guide: the server reads the same prompt tokens."""
    usages = []
    for guided in (True, False):
        provider = LocalProvider(
            base_url=llama_server.base_url, api_key=llama_server.api_key, max_tokens=8, guided=guided
        )
        toolbox = Toolbox(Workspace(bakery).tools())
        ctx = Context(DEFAULT_SYSTEM, toolbox.specs)
        ctx.add_user("Read hours.md")
        usages.append(ctx.complete(provider, tool_grammar=toolbox.grammar()).usage)
    guided_usage, plain_usage = usages
    assert guided_usage.input_tokens == plain_usage.input_tokens
    # The second request is the first one's prompt again: all of it but the last token comes from cache.
    assert plain_usage.cache_read_tokens is not None and plain_usage.input_tokens is not None
    assert plain_usage.cache_read_tokens >= plain_usage.input_tokens - 1
