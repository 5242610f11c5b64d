"""The window estimate counts earlier turns' thinking as the provider does: kept on a model with
preserved thinking, left out on an older one (Anthropic's context window drops previous turns'
thinking), while the current tool loop's thinking counts on both."""

from __future__ import annotations

from tiny_agent.context.engine import Context
from tiny_agent.context.tokens import canonical
from tiny_agent.testing import ScriptedProvider
from tiny_agent.types import (
    Message,
    ModelResponse,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolSpec,
    Usage,
)
from tiny_agent.types import ToolUseBlock as Use

READ = ToolSpec("read_file", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}})
OLD = ThinkingBlock("I should read a.txt first. " * 200, "sig-old")
REDACTED = RedactedThinkingBlock("opaque" * 300)
NOW = ThinkingBlock("Now b.txt, for the second task. " * 150, "sig-now")


OLDER, PRESERVED = "claude-sonnet-4-5", "claude-sonnet-5"


def provider(preserved: bool) -> ScriptedProvider:
    """The model's declared caps: Sonnet 4.5 strips earlier turns' thinking, Sonnet 5 keeps it."""
    return ScriptedProvider([], model=PRESERVED if preserved else OLDER)


def session(*, earlier: bool = True) -> Context:
    """Two turns: the first one's thinking (``earlier``) is from an earlier turn, the second is the
    current tool loop, with its own thinking."""
    ctx = Context("system", (READ,))
    ctx.add_user("read a.txt")
    ctx.add_assistant(Message("assistant", ((OLD,) if earlier else ()) + (Use("c1", "read_file", {"path": "a"}),)))
    ctx.add_tool_results([ToolResultBlock("c1", "alpha " * 50)])
    ctx.add_assistant(Message("assistant", ((REDACTED,) if earlier else ()) + (TextBlock("a.txt says alpha"),)))
    ctx.add_user("now read b.txt")
    ctx.add_assistant(Message("assistant", (NOW, Use("c2", "read_file", {"path": "b"}))))
    ctx.add_tool_results([ToolResultBlock("c2", "beta " * 50)])
    return ctx


def test_an_older_model_leaves_earlier_turns_thinking_out_of_the_estimate() -> None:
    kept = session().context_tokens(provider(preserved=True))
    stripped = session().context_tokens(provider(preserved=False))
    without = session(earlier=False).context_tokens(provider(preserved=True))
    assert stripped == without, "exactly the earlier turns' thinking is left out"
    assert kept - stripped > 1000, "a preserved-thinking model keeps it (and is billed for it)"


def test_the_current_tool_loops_thinking_counts_on_both() -> None:
    ctx = Context("system", (READ,))
    ctx.add_user("read a.txt")
    ctx.add_assistant(Message("assistant", (NOW, Use("c1", "read_file", {"path": "a"}))))
    ctx.add_tool_results([ToolResultBlock("c1", "alpha")])
    assert ctx.context_tokens(provider(preserved=False)) == ctx.context_tokens(provider(preserved=True))
    assert ctx.context_tokens(provider(preserved=False)) > len(NOW.thinking) // 4


def test_after_a_measured_call_a_new_turn_drops_the_last_loops_thinking_on_an_older_model() -> None:
    reply = Message("assistant", (NOW, TextBlock("b.txt says beta")))
    sizes = {}
    for preserved in (True, False):
        model = PRESERVED if preserved else OLDER
        answer = ModelResponse(reply, Usage(5000, 900, 0, 0, reasoning_tokens=800), "end_turn", model)
        p = ScriptedProvider([answer], model=model)
        ctx = Context("system", (READ,))
        ctx.add_user("read b.txt")
        ctx.complete(p)
        measured = ctx.context_tokens(p)
        assert measured == 5900, "the measured request and its reply, thinking included"
        ctx.add_user("thanks; now c.txt")
        sizes[preserved] = ctx.context_tokens(p)
        ratio = ctx.ledger.chars_per_token
    block = len(canonical(NOW.to_dict())) + 1  # and its comma
    assert sizes[True] - sizes[False] == int(block / ratio), "the reply's thinking, at the calibrated ratio"
