"""A resume with ``--thinking off`` over a session's effort says it leaves the effort out, and offers
to give it again only where the model takes an effort with thinking off (Claude's shapes the answer;
DeepSeek's and Kimi's are the thinking's own, and refused beside ``off``)."""

from __future__ import annotations

import pytest

from tiny_agent.agent.resume import effort_left_out
from tiny_agent.agent.settings import RunSettings


@pytest.mark.parametrize(
    ("provider", "model", "effort", "again"),
    [
        ("anthropic", "claude-sonnet-4-6", "max", True),
        ("anthropic", "claude-opus-5", "high", True),
        ("anthropic", "claude-opus-5", "max", False),
        ("deepseek", None, "max", False),
        ("moonshot", "kimi-k2.6", "high", False),
    ],
)
def test_the_line_offers_the_effort_again_only_where_it_is_taken(
    provider: str, model: str | None, effort: str, again: bool
) -> None:
    line = effort_left_out(RunSettings(provider=provider, model=model), effort)
    assert line.startswith(f"--thinking off leaves out the session's --effort {effort}")
    assert ("give it again to keep it" in line) is again
