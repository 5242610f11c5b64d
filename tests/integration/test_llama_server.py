"""The engine and both adapters against a real llama.cpp server running the real SmolLM2-135M model.

The model is tiny and not smart, so nothing here asserts on what it says. What is asserted is the
protocol and the accounting: requests that carry tool_use / tool_result pairs in each wire format are
accepted, turn 2 reads turn 1's prefix from the KV cache, the adapters' token counts agree with the
server's, a compaction in the middle of a run shrinks the context and the run goes on, and the
context window is the server's.

One conversation per wire format is played once (a module-scoped fixture) and the tests read it.
The model's turns are real; tool calls are scripted where needed, so every real request carries
tool results whatever the model chose to say.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tiny_agent.agent.loop import DEFAULT_SYSTEM
from tiny_agent.context.engine import Context, ContextConfig
from tiny_agent.context.shrink.compaction import SUMMARY_HEADER, Compaction
from tiny_agent.errors import CompactionError
from tiny_agent.providers.base import Wire
from tiny_agent.providers.local.llama_server import LlamaServer, auth_headers
from tiny_agent.providers.local.provider import LocalProvider
from tiny_agent.tools.toolbox import Toolbox
from tiny_agent.tools.workspace import Workspace
from tiny_agent.types import Message, ModelResponse, TextBlock, ToolUseBlock

from .conftest import CTX_SIZE

pytestmark = pytest.mark.integration

MAX_TOKENS = 32
"""Output cap of a turn: enough to see a reply, small enough to keep the file fast on 2 cores."""
SUMMARY_MAX_TOKENS = 64
"""Output cap of the summary call. The engine's default (1,024) lets this model ramble until the
summary is bigger than what it replaces, which would make "compaction shrinks the context" untrue."""
JSON_RESULT = re.compile(r"^\[\S+ (?:result|error)\]$", re.MULTILINE)
"""How json_tools renders a tool result in a user turn."""
CACHE_SHARE = 0.8
"""Turn 2 must read at least this share of turn 1's prompt from the KV cache."""

REQUEST = "List the files in the workspace, then read notes.txt and tell me its first line."
NOTES = "".join(f"line {i:02d}: the build step {i} writes out/{i}.o and logs to build-{i}.log\n" for i in range(1, 17))
"""About 450 tokens of tool result: the bulk that the compaction replaces by a summary."""


@dataclass(frozen=True)
class Case:
    wire: Wire
    tool_mode: str = "json_schema"


CASES = [
    pytest.param(Case("openai"), id="openai"),  # LocalProvider's default: tools as grammar-constrained JSON
    pytest.param(Case("openai", "native"), id="openai-native"),  # tool_calls + role "tool" messages
    pytest.param(Case("anthropic"), id="anthropic"),  # tool_use / tool_result blocks on /v1/messages
]


@dataclass
class Turn:
    """One real model call of the scripted run."""

    counted: int | None
    """``provider.count_tokens(ctx.prompt())`` just before the call."""
    legal: bool
    """The rendered prompt needed no repair, so the count and the request are the same body."""
    response: ModelResponse
    body: dict[str, Any]


@dataclass
class Run:
    case: Case
    provider: LocalProvider
    ctx: Context
    turns: list[Turn] = field(default_factory=list)
    """Real turns before the compaction."""
    tokens_before: int = 0
    """Exact size of the context just before the compaction."""
    compaction: Compaction | None = None
    compaction_attempts: int = 0
    tokens_after: int = 0
    """Exact size of the context just after the compaction."""
    after: Turn | None = None
    """The real turn after the compaction."""


def _scripted_calls(ctx: Context, toolbox: Toolbox, *calls: ToolUseBlock) -> None:
    """An assistant turn we write ourselves, answered by the real tools."""
    ctx.add_assistant(Message("assistant", calls))
    ctx.add_tool_results([toolbox.run(call) for call in calls])


def _real_turn(ctx: Context, provider: LocalProvider) -> Turn:
    prompt = ctx.prompt()
    body = provider.render(prompt)
    legal = ctx.render(provider, prompt) == body
    counted = provider.count_tokens(prompt)
    response = ctx.complete(provider)  # raises if the server refuses the request
    return Turn(counted, legal, response, body)


def _compact(ctx: Context, provider: LocalProvider) -> tuple[Compaction, int]:
    """Compact keeping one turn; one retry if the model's summary came back empty."""
    for attempt in (1, 2):
        try:
            compaction = ctx.compact(ctx.summarizer(provider), keep_turns=1, provider=provider)
        except CompactionError:
            if attempt == 2:
                raise
            continue
        assert compaction is not None, "there were turns to compact, yet compact() found nothing to do"
        return compaction, attempt
    raise AssertionError("unreachable")


def play(server: LlamaServer, case: Case, root: Path) -> Run:
    """User request, scripted tool calls, two real turns, a real compaction, one more real turn."""
    (root / "notes.txt").write_text(NOTES)
    (root / "todo.txt").write_text("- check the build logs\n")
    toolbox = Toolbox(Workspace(root).tools())
    provider = LocalProvider(
        base_url=server.base_url,
        api_key=server.api_key,
        wire=case.wire,
        tool_mode=case.tool_mode,
        max_tokens=MAX_TOKENS,
    )
    config = ContextConfig(keep_turns=1, summary_max_tokens=SUMMARY_MAX_TOKENS)
    ctx = Context(DEFAULT_SYSTEM, toolbox.specs, config=config)
    run = Run(case, provider, ctx)

    ctx.add_user(REQUEST)
    # Two parallel calls, so the first real request already carries tool_use / tool_result pairs.
    _scripted_calls(
        ctx,
        toolbox,
        ToolUseBlock("call_list_1", "list_dir", {}),
        ToolUseBlock("call_read_1", "read_file", {"path": "notes.txt"}),
    )
    for step in (2, 3):
        turn = _real_turn(ctx, provider)
        run.turns.append(turn)
        calls = turn.response.message.tool_uses
        if calls:  # the model called tools itself: answer them with the real tools
            ctx.add_tool_results([toolbox.run(call) for call in calls])
        else:  # it answered in prose: ask again and make the call for it
            ctx.add_user("Now read todo.txt too.")
            _scripted_calls(ctx, toolbox, ToolUseBlock(f"call_read_{step}", "read_file", {"path": "todo.txt"}))

    run.tokens_before = _exact(ctx.context_tokens(provider))
    run.compaction, run.compaction_attempts = _compact(ctx, provider)
    run.tokens_after = _exact(ctx.context_tokens(provider))
    run.after = _real_turn(ctx, provider)
    return run


def _exact(count: int | None) -> int:
    assert count is not None, "LocalProvider.count_tokens returned None: the server did not count"
    return count


@pytest.fixture(scope="module", params=CASES)
def run(request: pytest.FixtureRequest, llama_server: LlamaServer, tmp_path_factory: pytest.TempPathFactory) -> Run:
    case: Case = request.param
    return play(llama_server, case, tmp_path_factory.mktemp(f"ws-{case.wire}-{case.tool_mode}"))


@pytest.fixture
def report(run: Run) -> Iterator[None]:
    """Print the measured figures (shown with ``pytest -s`` or on failure)."""
    yield
    calls = [
        (c.purpose, c.usage.input_tokens, c.usage.cache_read_tokens, c.usage.output_tokens, round(c.seconds, 2))
        for c in run.ctx.ledger.calls
    ]
    print(f"\n{run.case}: calls (purpose, input, cache_read, output, s) = {calls}")
    print(f"counted = {[t.counted for t in run.turns]} + {run.after and run.after.counted}")
    print(f"context tokens before/after compaction = {run.tokens_before}/{run.tokens_after}")


# -- (a) multi-turn with tool results -----------------------------------------------------------


@pytest.mark.usefixtures("report")
def test_requests_with_tool_results_are_accepted(run: Run) -> None:
    # Every real call went through (play() would have raised otherwise) and was recorded.
    purposes = [c.purpose for c in run.ctx.ledger.calls]
    assert purposes.count("turn") == 3
    assert purposes.count("compaction") == run.compaction_attempts
    assert purposes[-1] == "turn"

    for turn in [*run.turns, run.after]:
        assert turn is not None
        assert turn.response.usage.input_tokens, "the server reported no prompt size"
        assert turn.response.usage.output_tokens is not None
        assert turn.response.stop_reason in ("end_turn", "max_tokens", "tool_use")
        assert _tool_pairs(run.case, turn.body) >= 1, "the request carried no tool call with its result"

    first = run.turns[0].body
    assert _tool_pairs(run.case, first) == 2  # the two parallel scripted calls, each with its result


def _tool_pairs(case: Case, body: dict[str, Any]) -> int:
    """Tool calls in the body that have their result in the same body, in that wire's own shape."""
    messages = body["messages"]
    if case.wire == "anthropic":
        uses = {b["id"] for m in messages for b in m["content"] if b["type"] == "tool_use"}
        results = {b["tool_use_id"] for m in messages for b in m["content"] if b["type"] == "tool_result"}
        return len(uses & results)
    if case.tool_mode == "native":
        calls = {c["id"] for m in messages for c in m.get("tool_calls") or ()}
        results = {m["tool_call_id"] for m in messages if m["role"] == "tool"}
        return len(calls & results)
    # json_schema: calls are the JSON the model writes, results are user turns "[name result]" / "[name error]".
    calls_seen = sum(m["content"].count('{"tool": ') for m in messages if m["role"] == "assistant")
    results_seen = sum(len(JSON_RESULT.findall(m["content"])) for m in messages if m["role"] == "user")
    return int(min(calls_seen, results_seen))


# -- (b) turn 2 reads turn 1's prefix from the KV cache ------------------------------------------


@pytest.mark.usefixtures("report")
def test_turn_two_reads_previous_prefix_from_cache(run: Run) -> None:
    turns = [c for c in run.ctx.ledger.calls if c.purpose == "turn"]
    first, second = turns[0].usage, turns[1].usage
    assert first.input_tokens and second.input_tokens
    assert second.cache_read_tokens is not None, "the adapter lost the server's cached-token count"
    assert second.cache_read_tokens > 0
    assert second.cache_read_tokens >= CACHE_SHARE * first.input_tokens, (
        f"turn 2 read {second.cache_read_tokens} tokens from cache, turn 1's prompt was {first.input_tokens}"
    )
    assert second.cache_read_tokens <= second.input_tokens
    assert second.input_tokens > first.input_tokens  # the history grew


@pytest.mark.usefixtures("report")
def test_usage_is_normalised_to_the_whole_prompt(run: Run) -> None:
    for call in run.ctx.ledger.calls:
        usage, raw = call.usage, call.usage.details
        assert usage.input_tokens is not None
        if run.case.wire == "anthropic":
            # llama.cpp's /v1/messages: input_tokens is the uncached part; the adapter adds the reads back.
            assert usage.cache_read_tokens == raw["cache_read_input_tokens"]
            assert usage.input_tokens == raw["input_tokens"] + raw["cache_read_input_tokens"]
        else:
            assert usage.input_tokens == raw["prompt_tokens"]
            assert usage.cache_read_tokens == raw["prompt_tokens_details"]["cached_tokens"]
        assert usage.cache_write_tokens is None  # llama.cpp does not report cache writes
        assert usage.uncached_input_tokens is not None and usage.uncached_input_tokens >= 0
    assert run.provider.profile.price(run.ctx.ledger.total) == 0.0
    ratio = run.ctx.ledger.cache_hit_ratio
    assert ratio is not None and 0 < ratio < 1


# -- (c) a compaction in the middle of the run ----------------------------------------------------


@pytest.mark.usefixtures("report")
def test_compaction_mid_run_shrinks_context_and_run_continues(run: Run) -> None:
    compaction, ctx = run.compaction, run.ctx
    assert compaction is not None
    assert compaction.summary.strip(), "the real model's summary is empty"
    assert compaction.tokens_before == run.tokens_before  # counted exactly, as the provider can
    assert run.tokens_after < run.tokens_before, (run.tokens_before, run.tokens_after)
    assert run.tokens_after < compaction.tokens_before, (compaction.tokens_before, run.tokens_after)

    window = ctx.window()
    opening = window[0].content[0]
    assert window[0].role == "user"
    assert isinstance(opening, TextBlock) and opening.text.startswith(SUMMARY_HEADER)
    assert opening.text == compaction.text()
    assert ctx.messages[: compaction.cut] and len(ctx.messages) > len(window)  # the log keeps everything

    summary_call = next(c for c in ctx.ledger.calls if c.purpose == "compaction")
    assert summary_call.usage.output_tokens is not None
    assert summary_call.usage.output_tokens <= SUMMARY_MAX_TOKENS
    # The summary call opens with the run's own system and tools, so it reads that prefix from cache.
    assert summary_call.usage.cache_read_tokens and summary_call.usage.cache_read_tokens > 0

    after = run.after
    assert after is not None  # the run went on: a real request after the compaction was accepted
    assert after.response.usage.input_tokens is not None
    assert after.response.usage.input_tokens < run.tokens_before
    assert after.response.usage.cache_read_tokens and after.response.usage.cache_read_tokens > 0


# -- (d) exact token counting ---------------------------------------------------------------------


@pytest.mark.usefixtures("report")
def test_count_tokens_equals_server_prompt_tokens(run: Run) -> None:
    turns = [t for t in [*run.turns, run.after] if t is not None]
    legal = [t for t in turns if t.legal]
    assert legal, "every prompt needed a repair, so no count can be compared"
    for turn in legal:
        assert turn.counted == turn.response.usage.input_tokens, (
            f"count_tokens said {turn.counted}, the server read {turn.response.usage.input_tokens}"
        )
    # context_tokens(provider) is the same exact count: after the compaction it predicted the next request.
    assert run.after is not None and run.after.legal
    assert run.tokens_after == run.after.response.usage.input_tokens


# -- (e) the context window -----------------------------------------------------------------------


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_context_window_is_server_n_ctx(llama_server: LlamaServer, wire: Wire) -> None:
    props = httpx2.get(f"{llama_server.base_url}/props", headers=auth_headers(llama_server.api_key), timeout=5.0).json()
    n_ctx = props["default_generation_settings"]["n_ctx"]
    provider = LocalProvider(base_url=llama_server.base_url, api_key=llama_server.api_key, wire=wire)
    assert provider.profile.context_window == n_ctx == CTX_SIZE
    assert Context().context_window(provider) == CTX_SIZE


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_exact_count_of_a_prompt_that_needs_repair(llama_server: LlamaServer, wire: Wire) -> None:
    provider = LocalProvider(base_url=llama_server.base_url, api_key=llama_server.api_key, wire=wire, max_tokens=4)
    ctx = Context("Be brief.")
    ctx.add_user("Say one word.")
    ctx.add_assistant(Message.assistant("One."))
    ctx.add_assistant(Message.assistant("Two."))  # two assistant turns in a row: repair merges them
    ctx.add_user("Another word.")
    counted = ctx.context_tokens(provider)
    response = ctx.complete(provider)
    assert counted == response.usage.input_tokens


def test_the_embedded_model_is_named_the_same_before_and_after_its_server_starts() -> None:
    from tiny_agent.providers.local.llama_server import EMBEDDED_MODEL_NAME, find_default_model

    model = find_default_model()
    with LocalProvider() as started:
        assert started.model == EMBEDDED_MODEL_NAME == LocalProvider().model == LocalProvider(model_path=model).model
    assert LocalProvider(model_path=model).profile.model == EMBEDDED_MODEL_NAME
