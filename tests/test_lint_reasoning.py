"""lint on DeepSeek's and Kimi's bodies (reasoning facts, section 6): whether the model thinks is read
from the body's own ``thinking`` switch, else from the model's declared default (DeepSeek V4 and Kimi
K2.6 think unless told not to), so the reasoning rules fire on an ordinary body, not only on one that
already carries reasoning_content; and lint knows these models' cache rules."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from tiny_agent.cli.app import main
from tiny_agent.observe.lint import lint_bodies, lint_body
from tiny_agent.providers.profile import profile_for
from tiny_agent.providers.wire import cache_rules

READ = {
    "type": "function",
    "function": {"name": "read_file", "description": "Read", "parameters": {"type": "object", "properties": {}}},
}
CALL = {"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": '{"path":"a.txt"}'}}


def loop(model: str, **fields: Any) -> dict[str, Any]:
    """A tool loop whose assistant turn came back without its reasoning_content."""
    messages = [
        {"role": "user", "content": "read a"},
        {"role": "assistant", "content": None, "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": "call_1", "content": "alpha"},
    ]
    return {"model": model, **fields, "tools": [READ], "messages": messages}


def ask(model: str, **fields: Any) -> dict[str, Any]:
    return {"model": model, **fields, "tools": [READ], "messages": [{"role": "user", "content": "read a"}]}


def rules(body: dict[str, Any]) -> list[str]:
    return [f.rule for f in lint_body(body)]


@pytest.mark.parametrize("model", ["deepseek-v4-flash", "deepseek-v4-pro", "kimi-k2.6"])
@pytest.mark.parametrize("switch", [{}, {"thinking": {"type": "enabled"}}], ids=["by-default", "explicit"])
def test_a_tool_turn_without_its_reasoning_is_found_where_the_model_thinks(model: str, switch: Any) -> None:
    assert rules(loop(model, **switch)) == ["reasoning-content-missing"]
    assert rules(loop(model, thinking={"type": "disabled"})) == []


def test_a_model_that_does_not_think_by_default_needs_its_switch_or_an_earlier_reasoning() -> None:
    assert rules(loop("qwen3-coder")) == []
    assert rules(loop("qwen3-coder", thinking={"type": "enabled"})) == ["reasoning-content-missing"]
    body = loop("qwen3-coder")
    body["messages"][1:1] = [
        {"role": "assistant", "content": None, "tool_calls": [{**CALL, "id": "call_0"}], "reasoning_content": "hm"},
        {"role": "tool", "tool_call_id": "call_0", "content": "zero"},
    ]
    assert rules(body) == ["reasoning-content-missing"]


@pytest.mark.parametrize(
    "choice", [{"type": "function", "function": {"name": "read_file"}}, "required"], ids=["named", "required"]
)
@pytest.mark.parametrize("switch", [{}, {"thinking": {"type": "enabled"}}], ids=["by-default", "explicit"])
def test_a_forced_tool_with_thinking_on_is_found(choice: Any, switch: Any) -> None:
    (finding,) = lint_body(ask("kimi-k2.6", tool_choice=choice, **switch))
    assert (finding.rule, finding.path) == ("reasoning-forced-tool-choice", "tool_choice")
    assert rules(ask("kimi-k2.6", tool_choice=choice, thinking={"type": "disabled"})) == []
    assert rules(ask("kimi-k2.6", tool_choice="auto", **switch)) == []


def test_kimi_refuses_both_switches_deepseek_takes_them() -> None:
    (finding,) = lint_body(ask("kimi-k2.6", thinking={"type": "enabled"}, reasoning_effort="high"))
    assert (finding.rule, finding.path) == ("reasoning-both-switches", "reasoning_effort")
    assert rules(ask("kimi-k2.6", reasoning_effort="high")) == []
    assert rules(ask("deepseek-v4-flash", thinking={"type": "enabled"}, reasoning_effort="high")) == []


def test_the_run_check_holds_kimi_to_one_switch_too() -> None:
    profile = profile_for("moonshot", "openai", "kimi-k2.6")
    assert any(
        p.startswith("reasoning-both-switches")
        for p in profile.check(ask("kimi-k2.6", thinking={"type": "enabled"}, reasoning_effort="low"))
    )


def test_lint_says_nothing_of_unknown_rules_for_the_providers_default_models(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "body.json"
    path.write_text('{"model": "m", "messages": [{"role": "user", "content": "hi"}]}')
    for model in ("deepseek-v4-flash", "kimi-k2.6"):
        assert main(["lint", "--model", model, str(path)]) == 0
        assert "no cache rules known" not in capsys.readouterr().err
    assert main(["lint", "--model", "no-such-model-7", str(path)]) == 0
    assert "no cache rules known for model 'no-such-model-7'" in capsys.readouterr().err


def test_lint_holds_deepseeks_bodies_to_deepseeks_cache() -> None:
    """DeepSeek keeps its disk cache for hours: twenty idle minutes expire OpenAI's cache, not DeepSeek's."""
    rules_of = cache_rules("deepseek-v4-flash", "openai")
    assert (rules_of.min_tokens, rules_of.increment, rules_of.ttl_seconds["5m"]) == (64, 64, 3600)
    assert cache_rules("kimi-k2.6", "openai").min_tokens == 1024
    first = loop("deepseek-v4-flash", thinking={"type": "disabled"})
    first["messages"][0]["content"] = "read a " * 400
    second = copy.deepcopy(first)
    second["messages"].append({"role": "user", "content": "and b"})
    assert [f.rule for f in lint_bodies([first, second], times=[0.0, 1200.0])] == []
    for body in (first, second):
        body["model"] = "gpt-4o"
        del body["thinking"]
    assert [f.rule for f in lint_bodies([first, second], times=[0.0, 1200.0])] == ["cache-expired"]
