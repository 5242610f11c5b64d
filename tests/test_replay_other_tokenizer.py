"""A replay on another provider or model sizes every request by the simulator calibrated on the
recording, never at a recorded size: those were counted by the recording's tokenizer. Before, a
request whose wire-independent fingerprint matched a recorded one (a thinking setting both models
take, such as adaptive) took the recorded size, so a Claude session with --thinking adaptive replayed
on DeepSeek at Claude's counts and one with --thinking 4096 estimated, and a session that changed from
one to the other mixed both."""

from __future__ import annotations

from pathlib import Path

import pytest

from tiny_agent.agent.loop import Agent, AgentConfig
from tiny_agent.context.engine import ContextConfig
from tiny_agent.context.entries import CallOpened
from tiny_agent.context.entry_codec import read
from tiny_agent.context.session import Session
from tiny_agent.providers.registry import resolve_provider
from tiny_agent.providers.thinking import parse_thinking
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.testing import BillingFake, Task
from tiny_agent.testing.thinking_server import ThinkingRules
from tiny_agent.tools.toolbox import Toolbox
from tiny_agent.tools.workspace import Workspace
from tiny_agent.types import Entry
from tiny_agent.whatif.replay import Policy, replay

ENV = {"ANTHROPIC_API_KEY": "sk-test-1"}
FILES = 6


def reads(ws: Path, first: int, trigger: str) -> Task:
    for i in range(first, first + FILES):
        (ws / f"part{i:02d}.txt").write_text(f"line {i} of a long file with words " * 60)
    return Task(trigger, [[("read_file", {"path": f"part{i:02d}.txt"})] for i in range(first, first + FILES)], "Read.")


def claude_session(root: Path, model: str, runs: list[str]) -> list[Entry]:
    """One Claude session on ``model``, a run per ``--thinking`` of ``runs``, one after another."""
    tasks = [reads(root, FILES * i, f"batch {i}") for i in range(len(runs))]
    with BillingFake(tasks, thinking=ThinkingRules()) as fake, SQLiteStore(root / "s.db") as store:
        url = fake.url("r", "anthropic")
        toolbox = Toolbox(Workspace(root).tools())
        session = Session.start(store, tools=toolbox.specs, config=ContextConfig(policy="fraction", compact_at=100_000))
        for i, thinking in enumerate(runs):
            provider = resolve_provider(
                "anthropic", model=model, base_url=url, env=ENV, thinking=parse_thinking(thinking)
            )
            agent = Agent(provider, toolbox, context=session.context, config=AgentConfig(max_steps=100))
            assert agent.run(f"Please read batch {i}").stop == "done"
        entries = store.entries(session.id)
        session.close()
    return entries


@pytest.mark.parametrize(
    ("model", "runs"),
    # Claude 4.7 and later take no budget: the change from one is made on a model that takes both.
    [("claude-sonnet-5", ["adaptive"]), ("claude-sonnet-4-6", ["4096", "adaptive"])],
    ids=["sonnet-5-adaptive", "sonnet-4-6-4096-then-adaptive"],
)
def test_a_replay_on_another_provider_takes_no_recorded_size(tmp_path: Path, model: str, runs: list[str]) -> None:
    entries = claude_session(tmp_path, model, runs)
    keys = {v.fingerprint.get("thinking") for e in entries for v in read(e) if isinstance(v, CallOpened)}
    assert "adaptive" in keys, "requests DeepSeek renders with the same fingerprint: the case at stake"
    own = replay(entries)
    assert [c.input_tokens for c in own.replayed.per_call] == [c.input_tokens for c in own.recorded.per_call]
    other = replay(entries, Policy(provider="deepseek", model="deepseek-v4-flash"))
    recorded = [c.input_tokens for c in other.recorded.per_call]
    replayed = [c.input_tokens for c in other.replayed.per_call]
    assert len(replayed) == len(recorded) and all(c.estimated for c in other.replayed.per_call)
    assert not [i for i, (r, s) in enumerate(zip(recorded, replayed, strict=True)) if r == s], (recorded, replayed)
    # A call sent with settings DeepSeek does not take (a budget) is rendered with its default, not
    # with the settings of the call before it.
    sent = [c.fingerprint.get("thinking") for c in other.replayed.per_call]
    assert sent == [None if run == "4096" else run for run in runs for _ in range(len(sent) // len(runs))], sent
