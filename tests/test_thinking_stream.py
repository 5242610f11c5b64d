"""Streamed reasoning reaches the listener as it arrives, before the answer it leads to: thinking
deltas (Anthropic, through the official wire), reasoning_content (DeepSeek) and reasoning summaries
(the Responses API), so chat can show the thinking above the answer instead of after it."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from tiny_agent.agent.loop import Agent, AgentConfig
from tiny_agent.providers.registry import resolve_provider
from tiny_agent.providers.responses.reply import Accumulator as ResponsesAccumulator
from tiny_agent.testing import BillingFake, Task
from tiny_agent.testing.thinking_server import ThinkingRules
from tiny_agent.tools.toolbox import Toolbox
from tiny_agent.tools.workspace import Workspace
from tiny_agent.types import ReasoningBlock, TextDelta, ThinkingBlock, ThinkingDelta

ENV = {"ANTHROPIC_API_KEY": "sk-a", "DEEPSEEK_API_KEY": "sk-d"}


@pytest.mark.parametrize(
    ("provider", "wire", "model", "thinking"),
    [
        ("anthropic", "anthropic", "claude-sonnet-4-6", "2048"),
        ("anthropic", "anthropic", "claude-sonnet-5", "adaptive"),
        ("anthropic", "anthropic", "claude-sonnet-5", None),  # Claude 5 thinks unasked
        ("deepseek", "openai", "deepseek-v4-pro", None),
    ],
)
def test_each_turns_thinking_streams_before_its_answer(
    tmp_path: Path, provider: str, wire: str, model: str, thinking: str | None
) -> None:
    (tmp_path / "a.txt").write_text("alpha " * 40)
    task = Task("read a", [[("read_file", {"path": "a.txt"})]], "Read it.")
    seen: list[object] = []
    with BillingFake([task], thinking=ThinkingRules(words=30)) as fake:
        kw = {"thinking": thinking} if thinking else {}
        adapter = resolve_provider(provider, model=model, base_url=fake.url("r", wire), env=ENV, max_retries=0, **kw)
        agent = Agent(
            adapter, Toolbox(Workspace(tmp_path).tools()), config=AgentConfig(stream=True), on_event=seen.append
        )
        result = agent.run("please read a")
    assert result.stop == "done", result.error
    kept = [
        b.thinking if isinstance(b, ThinkingBlock) else b.text
        for m in agent.context.messages
        for b in m.content
        if isinstance(b, ThinkingBlock | ReasoningBlock)
    ]
    streamed = [e for e in seen if isinstance(e, ThinkingDelta | TextDelta)]
    assert len(kept) == 2 and all(kept), "both replies thought"
    assert "".join(e.text for e in streamed if isinstance(e, ThinkingDelta)) == "".join(kept)
    runs = [kind for kind, _ in itertools.groupby(type(e) for e in streamed)]
    assert runs[0] is ThinkingDelta and runs[-2:] == [ThinkingDelta, TextDelta], "each reply: thinking, then text"
    assert "".join(e.text for e in streamed if isinstance(e, TextDelta)).endswith("Read it.")


def test_a_responses_stream_gives_its_reasoning_summary_as_thinking() -> None:
    acc = ResponsesAccumulator()
    summary = {"type": "response.reasoning_summary_text.delta", "item_id": "rs_1", "summary_index": 0}
    assert acc.feed({**summary, "delta": "Weighing it."}) == [ThinkingDelta("Weighing it.")]
    assert acc.feed({"type": "response.output_text.delta", "delta": "Done."}) == [TextDelta("Done.")]
    assert acc.feed({"type": "response.output_item.done", "item": {"type": "message"}}) == []
