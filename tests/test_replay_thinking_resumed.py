"""A session whose thinking settings changed between runs, to or from the model's default, replays
under its own policy as recorded: each call with the settings it was sent with, a call sent with
the default (whose fingerprint names no settings) with the default, not the newest run's. Before,
those calls were rendered with the newest settings: the recorded miss at the change disappeared
(-24.9% on a Claude session resumed with --thinking 2048) and on DeepSeek the compactions moved."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tiny_agent.agent.loop import Agent, AgentConfig
from tiny_agent.agent.run import Run
from tiny_agent.agent.settings import RunSettings
from tiny_agent.context.engine import ContextConfig
from tiny_agent.context.session import Session
from tiny_agent.providers.registry import resolve_provider
from tiny_agent.providers.thinking import parse_thinking
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.testing import BillingFake, Task
from tiny_agent.testing.thinking_server import ThinkingRules
from tiny_agent.tools.toolbox import Toolbox
from tiny_agent.tools.workspace import Workspace
from tiny_agent.types import Entry
from tiny_agent.whatif.figures import CallFigures
from tiny_agent.whatif.replay import replay

ENV = {"ANTHROPIC_API_KEY": "sk-test-1", "DEEPSEEK_API_KEY": "sk-test-2"}
FILES = 8
CLAUDE_4_6, CLAUDE_5 = ("anthropic", "claude-sonnet-4-6"), ("anthropic", "claude-sonnet-5")
"""Claude 4.6 does not think unasked and takes a budget; Claude 5 thinks unasked, adaptively."""
DEEPSEEK = ("deepseek", "deepseek-v4-flash")
CASES: dict[str, tuple[tuple[str, str], list[dict[str, str]]]] = {
    # each run's --thinking / --effort, in order ({}: the model's default, sent as no setting at all)
    "claude-sonnet-4-6 default -> 2048": (CLAUDE_4_6, [{}, {"thinking": "2048"}]),
    "claude-sonnet-4-6 2048 -> default": (CLAUDE_4_6, [{"thinking": "2048"}, {}]),
    "claude-sonnet-5 default -> off": (CLAUDE_5, [{}, {"thinking": "off"}]),
    "claude-sonnet-5 off -> default": (CLAUDE_5, [{"thinking": "off"}, {}]),
    "deepseek default -> off": (DEEPSEEK, [{}, {"thinking": "off"}]),
    "deepseek off -> default": (DEEPSEEK, [{"thinking": "off"}, {}]),
    "deepseek default -> adaptive -> high": (DEEPSEEK, [{}, {"thinking": "adaptive"}, {"effort": "high"}]),
}


def reads(ws: Path, first: int, trigger: str) -> Task:
    for i in range(first, first + FILES):
        (ws / f"part{i:02d}.txt").write_text(f"line {i} of a long file with words " * 60)
    return Task(trigger, [[("read_file", {"path": f"part{i:02d}.txt"})] for i in range(first, first + FILES)], "Read.")


def row(c: CallFigures) -> tuple[Any, ...]:
    return (c.purpose, c.input_tokens, c.cache_read_tokens, c.cache_write_tokens, c.output_tokens, c.reasoning_tokens)


def recorded_runs(root: Path, where: tuple[str, str], runs: list[dict[str, str]]) -> list[Entry]:
    """One session, one run after another over it, each with its own provider settings."""
    name, model = where
    tasks = [reads(root, FILES * i, f"batch {i}") for i in range(len(runs))]
    # Claude 4.6 has no preserved thinking: its blocks are not bound to their prefix, so a compaction
    # before them leaves them valid (the fake binds them by default, as Claude 5's are).
    rules = ThinkingRules(redact_every=4, preserved=where != CLAUDE_4_6)
    with BillingFake(tasks, thinking=rules) as fake, SQLiteStore(root / "s.db") as store:
        url = fake.url("r", "anthropic" if name == "anthropic" else "openai", provider=name)
        toolbox = Toolbox(Workspace(root).tools())
        session = Session.start(store, tools=toolbox.specs, config=ContextConfig(compact_at=4000, keep_turns=2))
        for i, run in enumerate(runs):
            thinking = parse_thinking(run.get("thinking"), effort=run.get("effort"))
            provider = resolve_provider(name, model=model, base_url=url, env=ENV, thinking=thinking, max_retries=0)
            agent = Agent(provider, toolbox, context=session.context, config=AgentConfig(max_steps=100))
            assert agent.run(f"Please read batch {i}").stop == "done"
        entries = store.entries(session.id)
        session.close()
    assert rules.rejected == []
    return entries


@pytest.mark.parametrize("case", list(CASES))
def test_a_session_whose_thinking_changed_to_or_from_the_default_replays_as_recorded(tmp_path: Path, case: str) -> None:
    where, runs = CASES[case]
    result = replay(recorded_runs(tmp_path, where, runs))
    recorded, replayed = result.recorded, result.replayed
    assert recorded.compactions >= 1, "the policy's summary calls are replayed at the settings of their turn too"
    assert [row(c) for c in replayed.per_call] == [row(c) for c in recorded.per_call]
    assert replayed.compactions == recorded.compactions
    assert replayed.cost_usd == pytest.approx(recorded.cost_usd)
    assert not replayed.estimated


def test_the_cli_resume_with_thinking_on_after_the_default_replays_as_recorded(tmp_path: Path) -> None:
    """The tester's: a Claude 4.6 session run with the default (no thinking), stopped in its tool loop,
    resumed with --thinking 2048. Its run settings name 2048 from the resume on, the earlier calls none."""
    ws = tmp_path / "ws"
    ws.mkdir()
    with (
        BillingFake([reads(ws, 0, "the files")], thinking=ThinkingRules()) as fake,
        SQLiteStore(tmp_path / "s.db") as store,
    ):
        base = {"provider": "anthropic", "model": "claude-sonnet-4-6", "base_url": fake.url("r", "anthropic")}
        first = RunSettings.of({**base, "workspace": str(ws), "code_tools": False})
        with Run.open(store, settings=first, env=ENV, agent=AgentConfig(max_steps=3)) as run:
            assert run.agent.run("Read the files").stop == "step_limit"
            assert run.session is not None
            sid = run.session.id
        again = RunSettings.of({**base, "thinking": "2048"})
        with Run.open(store, settings=again, resume=sid, env=ENV, agent=AgentConfig(max_steps=100)) as run:
            assert run.agent.run("go on").stop == "done"
        entries = store.entries(sid)
    result = replay(entries)
    recorded, replayed = result.recorded, result.replayed
    assert [row(c) for c in replayed.per_call] == [row(c) for c in recorded.per_call]
    assert replayed.cost_usd == pytest.approx(recorded.cost_usd)
    assert not replayed.estimated


def test_a_replay_renders_earlier_turns_anew_when_the_settings_change(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """DeepSeek off, then on: the live resume sent the off turns' tool calls with an empty
    reasoning_content (a thinking model refuses one without); the replay rendered them once, under
    off, and kept that, so it "repaired an illegal request" the run never sent."""
    entries = recorded_runs(tmp_path, DEEPSEEK, [{"thinking": "off"}, {}])
    with caplog.at_level("WARNING"):
        result = replay(entries)
    assert not [r.getMessage() for r in caplog.records if "illegal" in r.getMessage()]
    assert result.replayed.cost_usd == pytest.approx(result.recorded.cost_usd)
