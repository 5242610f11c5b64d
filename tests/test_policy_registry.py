"""The compaction policies are values with a name (``context.shrink.registry``): the config, the CLI
and replay look them up there, a policy of one's own works everywhere a name does, and an unknown
name is one line naming the known ones."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.expect import one_line
from tiny_agent.agent.parts import context_config
from tiny_agent.cli import main
from tiny_agent.context import shrink
from tiny_agent.context.config import ContextConfig
from tiny_agent.context.engine import Context
from tiny_agent.context.session import Session
from tiny_agent.context.shrink.decisions import decisions
from tiny_agent.context.shrink.registry import POLICIES, CompactionPolicy, policy_named, policy_names, register
from tiny_agent.errors import ConfigError
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.testing import ScriptedProvider, tool_call
from tiny_agent.types import Message, ToolResultBlock, ToolSpec
from tiny_agent.whatif.replay import replay

READ = ToolSpec("read_file", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}})
MODEL = "claude-sonnet-4-6"


def every_six_turns(ctx: Any, provider: Any, ceiling: int, tokens: int) -> int | None:
    """Compact once six turns have been kept, whatever the size: a policy of one's own."""
    turns = sum(1 for m in ctx.state.messages[ctx.state.base :] if m.role == "assistant")
    return ceiling if turns >= 6 else None


@pytest.fixture
def eager() -> Iterator[CompactionPolicy]:
    policy = register(CompactionPolicy("every-six", "after six kept turns", every_six_turns))
    yield policy
    del POLICIES["every-six"]


def test_todays_policies_are_in_the_registry_by_name() -> None:
    assert policy_names()[:2] == ("cost", "fraction")
    assert policy_named("cost").priced and not policy_named("fraction").priced
    assert shrink.policy_named is policy_named and shrink.POLICIES is POLICIES, "exported by context.shrink"
    assert ContextConfig(policy="fraction").policy == "fraction"


def test_an_unknown_name_is_one_line_listing_the_known_ones_with_a_guess() -> None:
    with pytest.raises(ConfigError) as caught:
        policy_named("cots")
    assert str(caught.value) == (
        "unknown compaction policy 'cots' (did you mean 'cost'?); the policies are: 'cost', 'fraction'"
    )
    with pytest.raises(ConfigError, match="unknown compaction policy 'lazy'; the policies are"):
        Context(config=ContextConfig(policy="lazy"))
    with pytest.raises(ConfigError, match="unknown compaction policy 'cots' \\(did you mean 'cost'"):
        Context().configure(policy="cots")
    with pytest.raises(ConfigError, match="unknown compaction policy 'cots'"):
        context_config({"policy": "cots"}, None)  # what Run.open checks before the provider starts
    with pytest.raises(ConfigError, match="must be a word"):
        register(CompactionPolicy("two words", "", every_six_turns))


def stored_session(store: SQLiteStore, config: ContextConfig, turns: int = 8) -> tuple[str, ScriptedProvider]:
    replies: list[object] = [tool_call("read_file", f"c{i}", path=f"{i}.txt") for i in range(turns)]
    session = Session.start(store, tools=[READ], system="s " * 300, config=config)
    ctx = session.context
    ctx.record_run(provider="anthropic", model=MODEL)
    p = ScriptedProvider(replies, name="anthropic", model=MODEL, pricing_id="anthropic")
    ctx.add_user("go")
    for i in range(turns):
        ctx.maybe_clear(p)
        ctx.maybe_compact(p)
        ctx.complete(p)
        ctx.add_tool_result(ToolResultBlock(f"c{i}", "data " * 400))
    session.close()
    return session.id, p


def test_a_session_naming_a_policy_this_process_lacks_still_reads(eager: CompactionPolicy, tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "s.db") as store:
        sid, _ = stored_session(store, ContextConfig(policy="fraction", clear_after=None, keep_turns=2))
        later = Session.resume(store, sid)
        later.context.configure(policy="every-six")  # as `--resume ID --policy every-six` records it
        later.close()
        del POLICIES["every-six"]
        try:
            assert Session.resume(store, sid).context.config.policy == "every-six"
            with pytest.raises(ConfigError, match="unknown compaction policy 'every-six'"):
                replay(store.entries(sid))  # replaying it needs the policy: one line saying which
        finally:
            register(eager)


def test_a_registered_policy_decides_and_its_decisions_carry_its_name(eager: CompactionPolicy, tmp_path: Path) -> None:
    config = ContextConfig(policy="every-six", clear_after=None, keep_turns=2)
    with SQLiteStore(tmp_path / "s.db") as store:
        session = Session.start(store, tools=[READ], system="s", config=config)
        ctx = session.context
        p = ScriptedProvider([*(tool_call("read_file", f"c{i}", path="x") for i in range(6)), Message.assistant("sum")])
        ctx.add_user("go")
        for i in range(6):
            ctx.complete(p)
            ctx.add_tool_result(ToolResultBlock(f"c{i}", "data " * 400))
        assert ctx.context_tokens(p) < ctx.threshold(p), "far below the limit"
        assert ctx.maybe_compact(p) is not None, "six turns: the policy says compact"
        (decision,) = decisions(ctx.entries)
        assert decision.policy == "every-six" and decision.prices == {}
        session.close()


def test_the_replay_command_takes_a_registered_name_and_refuses_an_unknown_one_in_one_line(
    eager: CompactionPolicy, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with SQLiteStore(tmp_path / "sessions.db") as store:
        sid, _ = stored_session(store, ContextConfig(policy="fraction", clear_after=None, keep_turns=2))
    monkeypatch.setenv("TINY_AGENT_STORE", str(tmp_path / "sessions.db"))
    assert main(["replay", sid, "--policy", "every-six", "--keep-turns", "2", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["policy"] == "keep-turns=2 policy=every-six"
    assert data["recorded"]["compactions"] == 0 and data["replayed"]["compactions"] >= 1
    assert {d["policy"] for d in data["replayed"]["decisions"]} == {"every-six"}
    assert main(["replay", sid, "--sweep", "policy=fraction,every-six"]) == 0
    assert "policy=every-six" in capsys.readouterr().out
    assert main(["replay", sid, "--policy", "fractoin"]) == 2
    one_line(capsys, "unknown compaction policy 'fractoin' (did you mean 'fraction'?)", "'every-six'")


def test_run_takes_a_registered_name(
    eager: CompactionPolicy, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert main(["--policy", "cots", "--no-session", "task"]) == 2
    one_line(capsys, "Invalid value for '--policy': unknown compaction policy 'cots' (did you mean 'cost'?)")
    assert main(["--provider", "anthropic", "--policy", "every-six", "--workspace", str(tmp_path), "hi"]) == 2
    line = one_line(capsys, "ANTHROPIC_API_KEY")
    assert "policy" not in line, "the policy was taken: what stops the run is the missing key"
