"""A session resumed with thinking settings written another way: the resume compares what the
requests send, not what was typed. ``--thinking adaptive`` over a default DeepSeek session (which
thinks) is no change and says nothing; ``--thinking off`` is one, and the warning says what it costs
on a cache without breakpoints."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from tiny_agent.agent.parts import thinking_change
from tiny_agent.agent.run import Run
from tiny_agent.agent.settings import RunSettings
from tiny_agent.providers.cache_breaks import prefix_breaks
from tiny_agent.providers.registry import offline_profile
from tiny_agent.providers.thinking import parse_thinking
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.testing import BillingFake, Task
from tiny_agent.testing.thinking_server import ThinkingRules

ENV = {"DEEPSEEK_API_KEY": "sk-test-2"}


def reads(ws: Path, first: int, count: int) -> Task:
    for i in range(first, first + count):
        (ws / f"p{i}.txt").write_text(f"words of file {i} " * 200)
    return Task("read", [[("read_file", {"path": f"p{i}.txt"})] for i in range(first, first + count)], "Done.")


@pytest.mark.parametrize(
    ("given", "note"),
    [
        ({"thinking": "adaptive"}, None),
        (
            {"thinking": "off"},
            "the thinking settings differ from the session's (default -> off): "
            "at the next request the cache misses from the first message on",
        ),
    ],
)
def test_a_resume_warns_only_when_the_requests_change(tmp_path: Path, given: dict[str, str], note: str | None) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    rules = ThinkingRules()
    with (
        BillingFake([reads(ws, 0, 2), reads(ws, 2, 2)], thinking=rules) as fake,
        SQLiteStore(tmp_path / "s.db") as store,
    ):
        base = {"provider": "deepseek", "base_url": fake.url("r", "openai", provider="deepseek")}
        with Run.open(
            store, settings=RunSettings.of({**base, "workspace": str(ws), "code_tools": False}), env=ENV
        ) as run:
            assert run.agent.run("Please read the first files").stop == "done"
            assert run.session is not None
            sid = run.session.id
        with Run.open(store, settings=RunSettings.of({**base, **given}), resume=sid, env=ENV) as run:
            said = [n for n in run.notes if "thinking settings" in n]
            assert said == ([note] if note else [])
            assert run.agent.run("Now read the next files").stop == "done"
    assert rules.rejected == []


def test_lint_agrees_deepseeks_switch_left_out_is_on() -> None:
    body = {"model": "deepseek-v4-flash", "messages": [{"role": "user", "content": "hello " * 400}]}
    on = {**body, "thinking": {"type": "enabled"}}
    assert prefix_breaks(body, on, "openai") == []
    off = {**body, "thinking": {"type": "disabled"}}
    assert [b.rule for b in prefix_breaks(body, off, "openai")] == ["thinking-changed"]


def test_claudes_off_is_a_switch_of_its_own_where_its_default_sends_none() -> None:
    profile = offline_profile("anthropic", "claude-sonnet-5")
    off = dataclasses.replace(profile, thinking=parse_thinking("off"))
    note = thinking_change(parse_thinking(None), off)
    assert note is not None and "(default -> off)" in note
    assert thinking_change(parse_thinking("off"), off) is None
