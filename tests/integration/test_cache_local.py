"""The prompt cache on the real llama.cpp server, whose ``cache_n`` (reported as cached tokens) is the
truth: a resumed session reads its prefix; a timestamp in the system prompt is a miss named as such."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from tiny_agent.agent.loop import DEFAULT_SYSTEM
from tiny_agent.context.engine import Context
from tiny_agent.context.session import Session
from tiny_agent.providers.local.llama_server import LlamaServer
from tiny_agent.providers.local.provider import LocalProvider
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.tools.toolbox import Toolbox
from tiny_agent.tools.workspace import Workspace

pytestmark = pytest.mark.integration


def local(server: LlamaServer) -> LocalProvider:
    return LocalProvider(base_url=server.base_url, api_key=server.api_key, max_tokens=24, use_warm=False)


def answer_calls(ctx: Context, toolbox: Toolbox) -> None:
    """Run whatever the model asked for, so the next request is legal."""
    for call in ctx.pending_calls:
        ctx.add_tool_result(toolbox.run(call))


@pytest.fixture
def toolbox(tmp_path: Path) -> Toolbox:
    (tmp_path / "notes.txt").write_text("The meeting is on Tuesday.\n")
    return Toolbox(Workspace(tmp_path).tools())


def test_a_resumed_session_reads_its_prefix_from_the_cache(
    llama_server: LlamaServer, toolbox: Toolbox, tmp_path: Path
) -> None:
    store_file = tmp_path / "sessions.db"
    with SQLiteStore(store_file) as store, local(llama_server) as provider:
        session = Session.start(store, tools=toolbox.specs, system=DEFAULT_SYSTEM)
        session.context.add_user("What is in notes.txt?")
        session.context.complete(provider)
        answer_calls(session.context, toolbox)
        sent = session.context.ledger.calls[-1].usage.input_tokens
        session.close()
    # A new store connection, a new provider, a new Context: only the server (and its cache) is the same.
    with SQLiteStore(store_file) as store, local(llama_server) as provider:
        resumed = Session.resume(store, session.id, tools=toolbox.specs)
        resumed.context.add_user("Thanks. Anything else?")
        resumed.context.complete(provider)
        call = resumed.context.ledger.calls[-1]
    assert sent is not None and call.usage.cache_read_tokens is not None
    assert call.usage.cache_read_tokens > sent // 2, "the first resumed request reads the stored prefix"
    assert call.miss is None


@pytest.mark.parametrize("timestamp", [True, False], ids=["timestamp-in-system", "steady-system"])
def test_a_timestamp_in_the_system_prompt_shows_as_the_miss(
    llama_server: LlamaServer, toolbox: Toolbox, timestamp: bool
) -> None:
    seconds = itertools.count(41)
    ctx = Context(DEFAULT_SYSTEM, toolbox.specs)
    ctx.add_user("What is in notes.txt?")
    with local(llama_server) as provider:
        for _ in range(3):
            if timestamp:  # the seed's crash: the system prompt is rebuilt with the time on every request
                ctx.system = f"Current time: 2026-11-30T10:00:{next(seconds)}Z. {DEFAULT_SYSTEM}"
            ctx.complete(provider)
            answer_calls(ctx, toolbox)
            if ctx.messages[-1].role == "assistant":
                ctx.add_user("Go on.")
    later = ctx.ledger.calls[1:]
    for call in later:
        usage = call.usage
        assert usage.input_tokens is not None and usage.cache_read_tokens is not None
        if timestamp:
            where = len("Current time: 2026-11-30T10:00:4")  # the seconds' last digit is the first change
            assert call.miss is not None and call.miss.startswith(f"system prompt changed at character {where}")
            assert usage.cache_read_tokens < usage.input_tokens // 4, "the server re-read almost everything"
        else:
            assert call.miss is None
            assert usage.cache_read_tokens > usage.input_tokens // 2, "the server read the previous prefix"
