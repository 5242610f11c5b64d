"""Issue 27: a session with thinking, recorded for real through the official SDKs against the billing
fake's thinking rules, replays under its own policy exactly (the same requests, the same bill: calls,
compactions, sizes, reasoning tokens, the summary calls' included), and every what-if counts the
reasoning."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tiny_agent.agent.loop import Agent, AgentConfig
from tiny_agent.context.engine import ContextConfig
from tiny_agent.errors import ConfigError
from tiny_agent.observe.history import history_lines
from tiny_agent.observe.view.whatifs import what_if_rows
from tiny_agent.providers.registry import resolve_provider
from tiny_agent.providers.thinking import parse_thinking
from tiny_agent.testing import BillingFake, Task
from tiny_agent.testing.thinking_server import ThinkingRules
from tiny_agent.tools.toolbox import Toolbox
from tiny_agent.tools.workspace import Workspace
from tiny_agent.types import Entry
from tiny_agent.whatif.figures import CallFigures, Figures
from tiny_agent.whatif.replay import Policy, Recording, replay

ENV = {"ANTHROPIC_API_KEY": "sk-test-1", "DEEPSEEK_API_KEY": "sk-test-2"}
SESSIONS = {
    # (provider, model, --thinking, files, compact_at): a short one, and two that compact in the loop
    "short": ("anthropic", "claude-sonnet-4-6", "2048", 5, 60_000),
    "sonnet-5": ("anthropic", "claude-sonnet-5", "adaptive", 24, 6000),
    "deepseek": ("deepseek", "deepseek-v4-flash", None, 24, 6000),
}


def record(root: Path, provider_name: str, model: str, thinking: str | None, files: int, compact_at: int) -> Any:
    for i in range(files):
        (root / f"part{i:02d}.txt").write_text(f"line {i} of a long file with words " * 60)
    task = Task("read the files", [[("read_file", {"path": f"part{i:02d}.txt"})] for i in range(files)], "All read.")
    rules = ThinkingRules(redact_every=4)
    with BillingFake([task], thinking=rules) as fake:
        wire = "anthropic" if provider_name == "anthropic" else "openai"
        url = fake.url("r", wire, provider=provider_name)
        provider = resolve_provider(
            provider_name, model=model, base_url=url, env=ENV, thinking=parse_thinking(thinking), max_retries=0
        )
        agent = Agent(
            provider,
            Toolbox(Workspace(root).tools()),
            config=AgentConfig(max_steps=100),
            context_config=ContextConfig(compact_at=compact_at, keep_turns=2),
        )
        assert agent.run("Please read the files").stop == "done"
    assert rules.rejected == []
    return agent.context.entries


@pytest.fixture(scope="module", params=list(SESSIONS))
def session(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, list[Entry]]:
    root = tmp_path_factory.mktemp(request.param)
    return request.param, record(root, *SESSIONS[request.param])


def row(c: CallFigures) -> tuple[Any, ...]:
    return (c.purpose, c.input_tokens, c.cache_read_tokens, c.cache_write_tokens, c.output_tokens, c.reasoning_tokens)


def totals(f: Figures) -> dict[str, Any]:
    out = f.to_dict()
    return {k: out[k] for k in ("calls", "compactions", "input_tokens", "output_tokens", "reasoning_tokens")}


def test_replay_under_its_own_policy_is_the_recording(session: tuple[str, list[Entry]]) -> None:
    name, entries = session
    result = replay(entries)
    recorded, replayed = result.recorded, result.replayed
    assert recorded.total("reasoning_tokens") > 0
    if name != "short":
        assert recorded.compactions >= 2
        assert any(c.purpose == "compaction" and c.reasoning_tokens for c in recorded.per_call)
    assert [row(c) for c in replayed.per_call] == [row(c) for c in recorded.per_call]
    assert [c.cost_usd for c in replayed.per_call] == pytest.approx([c.cost_usd for c in recorded.per_call])
    assert replayed.compactions == recorded.compactions
    assert not replayed.estimated, "every request is the recorded one: nothing is estimated"
    assert [c.call for c in replayed.per_call] == [c.call for c in recorded.per_call]


def test_the_views_as_recorded_row_is_the_recording(session: tuple[str, list[Entry]]) -> None:
    _, entries = session
    recording = Recording.of(entries)
    (own,) = what_if_rows(recording, [Policy()])
    expected = totals(recording.figures)
    assert {k: own[k] for k in expected} == expected
    assert own["estimated"] is False


def test_a_what_if_counts_the_summary_calls_reasoning(session: tuple[str, list[Entry]]) -> None:
    name, entries = session
    earlier = Policy({"compact_at": 2500 if name == "short" else 4000})
    result = replay(entries, earlier)
    summaries = [c for c in result.replayed.per_call if c.purpose == "compaction"]
    assert len(summaries) > result.recorded.compactions, "more compactions than recorded: stand-ins too"
    assert all(c.reasoning_tokens > 0 for c in summaries), "a summary call thinks on this model as the turns did"
    assert all(c.output_tokens >= c.reasoning_tokens for c in summaries), "output carries the thinking"
    (found,) = what_if_rows(Recording.of(entries), [earlier])
    assert found["reasoning_tokens"] == result.replayed.total("reasoning_tokens")


def test_a_replay_on_a_model_that_cannot_think_is_refused(session: tuple[str, list[Entry]]) -> None:
    """It would price the recorded thinking on a model that cannot make it, where a live run refuses."""
    name, entries = session
    provider = SESSIONS[name][0]
    other = "claude-3-5-haiku" if provider == "anthropic" else "deepseek-chat"
    with pytest.raises(ConfigError, match=f"^{other} does not think, and the session's calls did"):
        replay(entries, Policy(model=other))


def test_sessions_show_names_how_a_compaction_kept_the_thinking_rules(tmp_path: Path) -> None:
    entries = record(tmp_path, *SESSIONS["sonnet-5"])
    compacted = [line for line in history_lines(entries) if "[compacted" in line]
    assert compacted and all("(thinking: kept turns folded in)" in line for line in compacted), compacted
