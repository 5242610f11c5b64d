"""The first request (usually the task) survives every compaction: each request rendered after one
holds it whole, or past several thousand characters its head and its tail; the record stays bounded."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tiny_agent.context.engine import Context, ContextConfig
from tiny_agent.context.shrink.compaction import FIRST_REQUEST_HEAD, FIRST_REQUEST_MAX, FIRST_REQUEST_TAIL
from tiny_agent.errors import CompactionError
from tiny_agent.testing import tool_call
from tiny_agent.types import Message, TextBlock, ToolResultBlock, ToolSpec

READ = ToolSpec("read_file", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}})
RECORD_MAX = 12_000
"""What a record may take whatever the history: the first request's bound, five newest requests,
thirty paths a list, ten errors, the tool counts."""


def first_request(prefix: str, length: int) -> str:
    """``length`` characters that never repeat (so a head or a tail is found only where it belongs)."""
    body = "".join(f"<{i}>" for i in range(length))
    return (prefix + " " + body)[:length] if length > len(prefix) else prefix[:length]


def rendered_text(ctx: Context) -> str:
    return "\n".join(b.text for m in ctx.prompt().messages for b in m.content if isinstance(b, TextBlock))


def holds(text: str, first: str) -> bool:
    if len(first) <= FIRST_REQUEST_MAX:
        return first in text
    return first[:FIRST_REQUEST_HEAD] in text and first[-FIRST_REQUEST_TAIL:] in text


turn = st.tuples(
    st.text(min_size=1, max_size=300).filter(str.strip),  # the request
    st.integers(min_value=0, max_value=6),  # which folder
    st.booleans(),  # whether the read failed
    st.integers(min_value=0, max_value=4),  # compact after this turn, keeping this many turns (0: no)
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(
    prefix=st.text(min_size=1, max_size=40).filter(str.strip),
    length=st.integers(min_value=1, max_value=20_000),
    turns=st.lists(turn, min_size=1, max_size=40),
)
def test_every_request_after_a_compaction_holds_the_first_request(
    prefix: str, length: int, turns: list[tuple[str, int, bool, int]]
) -> None:
    first = first_request(prefix.strip(), length)
    ctx = Context("s", (READ,), config=ContextConfig(clear_after=None))
    ctx.add_user(first)
    compacted = False
    for i, (request, folder, failed, keep) in enumerate(turns):
        if i:
            ctx.add_user(request)
        ctx.add_assistant(tool_call("read_file", f"c{i}", path=f"d{folder}/file{i}.txt"))
        ctx.add_tool_result(ToolResultBlock(f"c{i}", "no such file" if failed else "x" * 40, is_error=failed))
        ctx.add_assistant(Message.assistant(f"answer {i}"))
        if keep:
            try:
                done = ctx.compact(lambda transcript: "summary", keep_turns=keep)
            except CompactionError:  # the summary would not be smaller: nothing changed
                done = None
            if done is not None:
                compacted = True
                assert len(done.record) <= RECORD_MAX
        if compacted:
            assert holds(rendered_text(ctx), first), "the first request is in the request after a compaction"


def test_a_long_first_request_keeps_its_head_and_tail_and_says_what_it_left_out() -> None:
    first = first_request("Migrate the build to meson.", 30_000)
    ctx = Context("s", (READ,))
    ctx.add_user(first)
    for i in range(12):
        ctx.add_assistant(tool_call("read_file", f"c{i}", path=f"f{i}.txt"))
        ctx.add_tool_result(ToolResultBlock(f"c{i}", "y" * 4000))
        ctx.add_assistant(Message.assistant(f"answer {i}"))
        ctx.add_user(f"and then step {i}")
    done = ctx.compact(lambda transcript: "summary", keep_turns=2)
    assert done is not None
    assert first[:FIRST_REQUEST_HEAD] in done.record and first[-FIRST_REQUEST_TAIL:] in done.record
    left_out = len(first) - FIRST_REQUEST_HEAD - FIRST_REQUEST_TAIL
    assert f"[... {left_out:,} characters of the first request left out ...]" in done.record
    assert "Migrate the build to meson." in rendered_text(ctx)
