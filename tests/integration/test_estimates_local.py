"""After a compaction on the real llama.cpp server, the engine's size of the window is the server's own.

The local provider counts every prompt with the server (``/apply-template`` + ``/tokenize``), so the
size a compaction records is a count, not an estimate: the next request's ``prompt_tokens`` must agree
within 2%, on tool output of JSON, code, prose and other scripts.
"""

from __future__ import annotations

import pytest

from tiny_agent.agent.loop import DEFAULT_SYSTEM
from tiny_agent.agent.tools import Toolbox
from tiny_agent.agent.workspace import Workspace
from tiny_agent.context.engine import Context, ContextConfig
from tiny_agent.providers.llama_server import LlamaServer
from tiny_agent.providers.local import LocalProvider
from tiny_agent.testing import tool_call
from tiny_agent.testing.contents import KINDS, content
from tiny_agent.types import Message, ToolResultBlock

pytestmark = pytest.mark.integration


def test_the_size_after_a_compaction_is_the_servers_count(llama_server: LlamaServer, tmp_path: object) -> None:
    toolbox = Toolbox(Workspace(str(tmp_path)).tools())
    config = ContextConfig(summary_max_tokens=48, policy="fraction", clear_after=None)
    ctx = Context(DEFAULT_SYSTEM, toolbox.specs, config=config)
    ctx.add_user("Read the four files and tell me what they hold.")
    for i, kind in enumerate(KINDS):
        ctx.add(tool_call("read_file", f"c{i}", path=f"{kind}.txt"))
        ctx.add_tool_result(ToolResultBlock(f"c{i}", content(kind, 700, seed=i)))
    ctx.add(Message.assistant("I have read them."))
    ctx.add_user("Now summarise what the JSON file holds.")
    with LocalProvider(base_url=llama_server.base_url, api_key=llama_server.api_key, max_tokens=16) as provider:
        done = ctx.compact(provider=provider, keep_turns=1)
        assert done is not None and done.tokens_after is not None
        ctx.complete(provider)
    served = ctx.ledger.calls[-1].usage.input_tokens
    assert served, "the server reported the prompt's size"
    assert abs(done.tokens_after - served) / served <= 0.02, (done.tokens_after, served)
