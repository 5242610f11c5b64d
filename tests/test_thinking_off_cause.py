"""A DeepSeek session with an effort, resumed with --thinking off: the request drops the effort
because the thinking is off, so the thinking switch is the cause the miss line and lint name (the
effort listed after it, as changed with it), at the cost of the effort it dropped (keyed with the
tools: the whole prefix), in words that fit a cache without breakpoints."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tiny_agent.context.byte_cause import Side, cause_words, leading_break, position
from tiny_agent.observe.lint import lint_bodies
from tiny_agent.providers.cache_breaks import prefix_breaks

CASE = Path(__file__).parent / "data" / "lint_cases" / "thinking-off-drops-the-effort-deepseek.json"


def bodies() -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = json.loads(CASE.read_text())["bodies"]
    return found


def test_the_miss_line_names_the_thinking_switch_not_the_effort_it_dropped() -> None:
    before, after = bodies()
    lead = leading_break(prefix_breaks(before, after, "openai"), "openai")
    assert lead is not None and (lead.rule, lead.path) == ("thinking-changed", "thinking")
    sides = [Side(b, None, {"thinking": key}) for b, key in ((before, "default//low"), (after, "off"))]
    line = cause_words(lead, sides[0], sides[1], "openai") + position(lead)
    assert line == (
        "thinking settings changed: default//low -> off (the whole prefix is written again) "
        "[thinking-changed at thinking]"
    )


def test_lint_names_the_switch_first_and_the_effort_as_changed_with_it() -> None:
    findings = [f for f in lint_bodies(bodies(), "openai") if f.severity != "info"]
    assert [f.rule for f in findings][:2] == ["thinking-changed", "effort-changed"]
    assert "the reasoning effort changed with the thinking settings" in findings[1].message


def test_an_effort_changed_alone_is_still_the_effort() -> None:
    before, _ = bodies()
    after = {**before, "reasoning_effort": "high"}
    lead = leading_break(prefix_breaks(before, after, "openai"), "openai")
    assert lead is not None and lead.rule == "effort-changed" and not lead.follows
