"""What each Claude generation takes of thinking, as Anthropic's model pages say: Claude 4.7 and later
refuse a budget, the Claude 5 models think unasked, Fable 5, Mythos 5 and the 5.5 models cannot be
turned off. Each is declared (never probed), refused in one line before any call, and a tool loop
with the model's own default keeps its thinking blocks (the server refuses one that drops them)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tiny_agent.agent.loop import Agent, AgentConfig
from tiny_agent.agent.run import Run
from tiny_agent.agent.settings import RunSettings
from tiny_agent.errors import ConfigError
from tiny_agent.providers.anthropic.thinking import opens_cold, rendered_thinking, thinking_problems
from tiny_agent.providers.registry import resolve_provider
from tiny_agent.providers.thinking import parse_thinking
from tiny_agent.providers.thinking_caps import thinking_caps
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.testing import BillingFake, Task
from tiny_agent.testing.claude_models import thinking_type
from tiny_agent.testing.thinking_server import ThinkingRules
from tiny_agent.tools.toolbox import Toolbox
from tiny_agent.tools.workspace import Workspace

ENV = {"ANTHROPIC_API_KEY": "sk-test-1"}


@pytest.mark.parametrize(
    ("model", "budget", "adaptive", "unasked", "off"),
    [
        ("claude-sonnet-4-5-20250929", True, False, False, True),
        ("claude-opus-4-5", True, False, False, True),
        ("claude-sonnet-4-6", True, True, False, True),
        ("claude-opus-4-6", True, True, False, True),
        ("claude-opus-4-7", False, True, False, True),
        ("claude-opus-4-8", False, True, False, True),
        ("claude-sonnet-5", False, True, True, True),
        ("claude-opus-5", False, True, True, True),
        ("claude-fable-5", False, True, True, False),
        ("claude-fable-5-1", False, True, True, False),
        ("claude-mythos-5", False, True, True, False),
        ("claude-opus-5-5", False, True, True, False),
        ("claude-sonnet-5-5", False, True, True, False),
        ("claude-haiku-5-5", False, True, True, True),
    ],
)
def test_each_claude_model_declares_what_its_page_says(
    model: str, budget: bool, adaptive: bool, unasked: bool, off: bool
) -> None:
    caps = thinking_caps("anthropic", model, "anthropic")
    assert (caps.manual, caps.adaptive, caps.default_on, caps.can_disable) == (budget, adaptive, unasked, off)
    if not budget:
        assert "xhigh" in caps.efforts


@pytest.mark.parametrize(
    ("model", "flags", "line"),
    [
        (
            "claude-sonnet-5",
            {"thinking": "2048"},
            "claude-sonnet-5 does not take a thinking budget (use --thinking adaptive;",
        ),
        (
            "claude-opus-4-7",
            {"thinking": "4096"},
            "claude-opus-4-7 does not take a thinking budget (use --thinking adaptive;",
        ),
        ("claude-opus-5-5", {"thinking": "off"}, "claude-opus-5-5 always thinks (its API refuses thinking off)"),
        ("claude-fable-5-1", {"thinking": "off"}, "--effort low thinks least"),
    ],
)
def test_a_setting_the_model_refuses_is_one_line_before_any_call(model: str, flags: dict[str, str], line: str) -> None:
    with pytest.raises(ConfigError) as caught:
        resolve_provider("anthropic", model=model, env=ENV, thinking=parse_thinking(flags["thinking"]))
    assert line in str(caught.value) and "\n" not in str(caught.value)


def test_opus_5_turns_thinking_off_only_at_high_effort_or_below() -> None:
    with pytest.raises(
        ConfigError,
        match=r"claude-opus-5 takes --thinking off only at --effort low, medium or high: leave out --effort max",
    ):
        resolve_provider("anthropic", model="claude-opus-5", env=ENV, thinking=parse_thinking("off", effort="max"))
    for model, effort in (("claude-opus-5", "high"), ("claude-sonnet-5", "max")):
        resolve_provider("anthropic", model=model, env=ENV, thinking=parse_thinking("off", effort=effort))


def test_the_fake_answers_a_refused_setting_with_the_apis_text() -> None:
    _, error = thinking_type({"model": "claude-sonnet-5", "thinking": {"type": "enabled", "budget_tokens": 2048}})
    assert error is not None and error.startswith('"thinking.type.enabled" is not supported for this model.')
    _, error = thinking_type({"model": "claude-opus-5-5", "thinking": {"type": "disabled"}})
    assert error is not None and error.startswith('"thinking.type.disabled" is not supported')
    assert thinking_type({"model": "claude-sonnet-5"}) == ("adaptive", None)
    assert thinking_type({"model": "claude-sonnet-4-6"}) == ("disabled", None)


def _loop(root: Path, model: str, thinking: str | None, display: str | None = None):  # type: ignore[no-untyped-def]
    for i in range(4):
        (root / f"f{i}.txt").write_text(f"file {i}\n")
    steps = [[("read_file", {"path": f"f{i}.txt"})] for i in range(4)]
    rules = ThinkingRules()
    with BillingFake([Task("read the four files", steps, "Read all four.")], thinking=rules) as fake:
        provider = resolve_provider(
            "anthropic",
            model=model,
            base_url=fake.url("run", "anthropic"),
            env=ENV,
            thinking=parse_thinking(thinking, display),
            max_retries=0,
        )
        agent = Agent(provider, Toolbox(Workspace(root).tools()), config=AgentConfig(max_steps=20))
        result = agent.run("Please read the four files")
        return result, fake.bills("run"), rules


def test_a_tool_loop_on_a_model_that_thinks_unasked_sends_its_blocks_back(tmp_path: Path) -> None:
    result, bills, rules = _loop(tmp_path, "claude-sonnet-5", None)
    assert rules.rejected == [] and result.stop == "done" and result.answer == "Read all four."
    assert len(bills) == 5
    for bill in bills:
        assert "thinking" not in bill.body, "the model's own default is sent as no setting at all"
    last = bills[-1].body["messages"]
    replies = [m for m in last if m["role"] == "assistant"]
    assert len(replies) == 4 and all(m["content"][0]["type"] in ("thinking", "redacted_thinking") for m in replies)
    assert all(bill.reply["usage"]["output_tokens_details"]["thinking_tokens"] > 0 for bill in bills)


def test_a_display_without_thinking_shapes_the_models_own_thinking(tmp_path: Path) -> None:
    result, bills, rules = _loop(tmp_path, "claude-sonnet-5", None, display="omitted")
    assert rules.rejected == [] and result.stop == "done"
    assert all(bill.body["thinking"] == {"type": "adaptive", "display": "omitted"} for bill in bills)


def test_thinking_off_on_a_model_that_thinks_unasked_is_sent_as_disabled(tmp_path: Path) -> None:
    result, bills, rules = _loop(tmp_path, "claude-sonnet-5", "off")
    assert rules.rejected == [] and result.stop == "done"
    assert all(bill.body["thinking"] == {"type": "disabled"} for bill in bills)
    assert not any(b["type"] == "thinking" for bill in bills for m in bill.body["messages"] for b in m["content"])


def _body(thinking: dict[str, str], *assistants: list[dict[str, str]]) -> dict[str, object]:
    messages: list[dict[str, object]] = [{"role": "user", "content": "go"}]
    for n, content in enumerate(assistants):
        messages.append({"role": "assistant", "content": content})
        messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{n}", "content": "x"}]})
    return {"model": "claude-opus-5-5", "thinking": thinking, "messages": messages}


THOUGHT = {"type": "thinking", "thinking": "hm", "signature": "sg"}
TOOL = {"type": "tool_use", "id": "t", "name": "read_file", "input": {}}


def test_a_step_adaptive_thinking_left_unthought_is_legal_and_holds_thinking_back_where_off_can_be_sent() -> None:
    skipped = _body({"type": "adaptive"}, [THOUGHT, TOOL], [TOOL])
    assert thinking_problems(skipped) == []
    assert opens_cold(skipped["messages"])  # type: ignore[arg-type]
    begun_off = _body({"type": "adaptive"}, [TOOL], [TOOL])
    found = [p.split(":")[0] for p in thinking_problems(begun_off)]
    assert found == ["thinking-final-assistant"], "a loop that never thought was begun without thinking"
    reordered = _body({"type": "adaptive"}, [THOUGHT, TOOL], [TOOL, THOUGHT])
    assert [p.split(":")[0] for p in thinking_problems(reordered)] == ["thinking-final-assistant"]
    budget = _body({"type": "enabled", "budget_tokens": "2048"}, [THOUGHT, TOOL], [TOOL])
    assert [p.split(":")[0] for p in thinking_problems(budget)] == ["thinking-final-assistant"]
    unasked = {k: v for k, v in _body({}, [THOUGHT, TOOL], [TOOL, THOUGHT]).items() if k != "thinking"}
    assert thinking_problems(unasked) == [], "without the model: a body with no thinking field does not think"
    found = [p.split(":")[0] for p in thinking_problems(unasked, unasked=True)]
    assert found == ["thinking-final-assistant"], "a Claude 5 model thinks without the field"


@pytest.mark.parametrize(
    ("model", "effort", "outcome"),
    [
        ("claude-sonnet-5", None, "off"),
        ("claude-opus-5", "high", "off"),
        ("claude-opus-5", "max", "this model turns it off only at --effort low, medium, high: give one until then"),
        ("claude-opus-5-5", None, "this model always thinks: end that loop on a model that can turn it off"),
        ("claude-fable-5-1", "low", "this model always thinks"),
    ],
)
def test_a_loop_begun_without_thinking_goes_on_off_or_is_refused_where_off_cannot_be_sent(
    model: str, effort: str | None, outcome: str
) -> None:
    caps = thinking_caps("anthropic", model, "anthropic")
    adaptive = parse_thinking("adaptive", effort=effort)
    begun_off = _body({"type": "adaptive"}, [TOOL])["messages"]
    skipped = _body({"type": "adaptive"}, [THOUGHT, TOOL], [TOOL])["messages"]
    assert opens_cold(begun_off) and opens_cold(skipped)  # type: ignore[arg-type]
    if outcome == "off":
        assert rendered_thinking(adaptive, caps, begun_off).mode == "off"  # type: ignore[arg-type]
        assert rendered_thinking(adaptive, caps, skipped).mode == "off"  # type: ignore[arg-type]
        return
    with pytest.raises(ConfigError, match=r"^the session stopped inside a tool loop begun without thinking") as caught:
        rendered_thinking(adaptive, caps, begun_off)  # type: ignore[arg-type]
    assert outcome in str(caught.value)
    assert rendered_thinking(adaptive, caps, skipped) == adaptive, "a step left unthought goes out thinking"  # type: ignore[arg-type]


@contextlib.contextmanager
def _stopped_in_a_loop(root: Path, model: str, thinking: str) -> Iterator[tuple[Any, ...]]:
    """A session on the thinking fake whose first run, with ``thinking``, stopped after one step,
    inside its tool loop: (store, the fake, its rules, the settings' base, the session id, its head)."""
    for i in range(3):
        (root / f"f{i}.txt").write_text(f"file {i}\n")
    steps = [[("read_file", {"path": f"f{i}.txt"})] for i in range(3)]
    rules = ThinkingRules()
    with BillingFake([Task("read the three files", steps, "Read all three.")], thinking=rules) as fake:
        store = SQLiteStore(root / "s.db")
        base = {"provider": "anthropic", "base_url": fake.url("r", "anthropic"), "workspace": str(root)}
        first = RunSettings.of({**base, "model": model, "thinking": thinking})
        with Run.open(store, settings=first, env=ENV, agent=AgentConfig(max_steps=1)) as run:
            run.agent.run("Please read the three files")
            assert run.session is not None
            sid, head = run.session.id, run.session.info.head
        yield store, fake, rules, base, sid, head


def _resumed_loop(root: Path, model: str, first: str, then: str):  # type: ignore[no-untyped-def]
    """A loop begun with ``first`` and cut after its first tool result, resumed with ``then``."""
    with _stopped_in_a_loop(root, model, first) as (store, fake, rules, base, sid, _):
        with Run.open(store, settings=RunSettings.of({**base, "thinking": then}), env=ENV, resume=sid) as run:
            result = run.agent.run("Please read the three files")
            notes = list(run.notes)
        return result, fake.bills("r"), rules, notes


def test_a_loop_begun_with_thinking_off_goes_on_without_it_until_its_end(tmp_path: Path) -> None:
    result, bills, rules, notes = _resumed_loop(tmp_path, "claude-sonnet-5", "off", "adaptive")
    assert rules.rejected == [] and result.stop == "done" and result.answer == "Read all three."
    sent = [b.body.get("thinking", {}).get("type") for b in bills]
    # The first run's one call, then the loop's three after the resume: thinking held back to its end.
    assert sent == ["disabled"] * 4, sent
    assert any("(off -> adaptive) from the end of the tool loop it stopped in" in n for n in notes), notes


def test_a_session_recorded_with_a_budget_before_it_was_refused_replays_as_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Logs from before Claude 5 was declared budget-less hold calls sent with a budget: a replay on
    their own model renders each as it was sent, so it gives back the recorded bill."""
    import dataclasses
    import re

    from tiny_agent.context.engine import ContextConfig
    from tiny_agent.providers import registry
    from tiny_agent.providers import thinking_caps as caps_module
    from tiny_agent.testing import claude_models
    from tiny_agent.whatif.replay import replay

    declared = caps_module.thinking_caps

    def as_before(name: str, model: str, wire: str = "") -> object:
        return dataclasses.replace(declared(name, model, wire), manual=True)

    for i in range(12):
        (tmp_path / f"part{i:02d}.txt").write_text(f"line {i} of a long file with words " * 60)
    steps = [[("read_file", {"path": f"part{i:02d}.txt"})] for i in range(12)]
    with monkeypatch.context() as before:
        for module in ("tiny_agent.providers.profile", "tiny_agent.providers.settings_check"):
            before.setattr(f"{module}.thinking_caps", as_before)
        before.setattr(claude_models, "_NO_BUDGET", re.compile("$^"))
        rules = ThinkingRules(redact_every=4)
        with BillingFake([Task("read the files", steps, "All read.")], thinking=rules) as fake:
            provider = registry.resolve_provider(
                "anthropic",
                model="claude-sonnet-5",
                base_url=fake.url("r", "anthropic"),
                env=ENV,
                thinking=parse_thinking("2048"),
                max_retries=0,
            )
            agent = Agent(
                provider,
                Toolbox(Workspace(tmp_path).tools()),
                config=AgentConfig(max_steps=40),
                context_config=ContextConfig(compact_at=5000, keep_turns=2),
            )
            assert agent.run("Please read the files").stop == "done" and rules.rejected == []
            assert all(b.body["thinking"]["type"] == "enabled" for b in fake.bills("r"))
    with pytest.raises(ConfigError, match="does not take a thinking budget"):
        resolve_provider("anthropic", model="claude-sonnet-5", env=ENV, thinking=parse_thinking("2048"))
    result = replay(list(agent.context.entries))
    assert result.recorded.compactions >= 1
    assert not result.replayed.estimated
    assert result.replayed.cost_usd == pytest.approx(result.recorded.cost_usd)


@pytest.mark.parametrize(
    ("model", "limit"),
    [
        ("claude-opus-4-1-20250805", 32_000),
        ("claude-opus-4-20250514", 32_000),
        ("claude-3-7-sonnet-20250219", 64_000),
        ("claude-sonnet-4-5-20250929", 64_000),
        ("claude-sonnet-4-20250514", 64_000),
        ("claude-haiku-4-5", 64_000),
        ("claude-opus-4-5", 64_000),
        ("claude-sonnet-4-6", 128_000),
        ("claude-opus-4-6", 128_000),
        ("claude-sonnet-5", 128_000),
    ],
)
def test_a_budget_the_models_output_limit_cannot_hold_is_one_line_before_any_call(model: str, limit: int) -> None:
    assert thinking_caps("anthropic", model, "anthropic").max_output == limit
    with pytest.raises(ConfigError) as caught:
        resolve_provider("anthropic", model=model, env=ENV, max_tokens=limit + 1)
    assert str(caught.value) == f"--max-tokens {limit + 1:,}: {model} writes at most {limit:,} tokens a reply"
    if thinking_caps("anthropic", model, "anthropic").manual:
        with pytest.raises(ConfigError, match=f"writes at most {limit:,} output tokens a reply, its thinking included"):
            resolve_provider("anthropic", model=model, env=ENV, thinking=parse_thinking(str(limit)))


def test_a_budget_with_the_answers_room_beside_it_is_sent_within_the_limit(tmp_path: Path) -> None:
    """62,000 of thinking and the answer's 4,096 would ask 66,096 of a 64,000 limit: the server
    refuses that with its own text, so the request asks the limit."""
    _, error = thinking_type({"model": "claude-sonnet-4-5", "max_tokens": 66_096})
    assert error == (
        "max_tokens: 66096 > 64000, which is the maximum allowed number of output tokens for claude-sonnet-4-5"
    )
    result, bills, rules = _loop(tmp_path, "claude-sonnet-4-5", "62000")
    assert rules.rejected == [] and result.stop == "done"
    assert {b.body["max_tokens"] for b in bills} == {64_000}
    assert {b.body["thinking"]["budget_tokens"] for b in bills} == {62_000}


def test_a_resume_a_tool_loop_cannot_go_on_is_refused_and_records_nothing(tmp_path: Path) -> None:
    """A loop begun with thinking off goes on without it; a model that always thinks, or Opus 5 at an
    effort off is refused at, cannot: one line before any call, and the session is as it was."""
    with _stopped_in_a_loop(tmp_path, "claude-opus-5", "off") as (store, fake, rules, base, sid, entries):
        refused = [
            (
                {"model": "claude-opus-5-5"},
                "and this model always thinks: end that loop on a model that can turn it off",
            ),
            ({"thinking": "adaptive", "effort": "max"}, "turns it off only at --effort low, medium, high: give one"),
        ]
        for given, line in refused:
            with pytest.raises(
                ConfigError, match=r"^the session stopped inside a tool loop begun without thinking"
            ) as e:
                Run.open(store, settings=RunSettings.of({**base, **given}), env=ENV, resume=sid)
            assert line in str(e.value)
        calls = len(fake.bills("r"))
        with Run.open(store, settings=RunSettings.of({**base, "thinking": "adaptive"}), env=ENV, resume=sid) as run:
            assert run.session is not None and run.session.info.head > entries
            assert run.session.context.run_settings["model"] == "claude-opus-5", "the refused runs recorded nothing"
            assert run.agent.run("Please read the three files").stop == "done"
        assert calls == 1 and rules.rejected == []
