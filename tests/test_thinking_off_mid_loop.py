"""Issue 27: ``--thinking off`` on a session that stopped inside a tool loop. The API refuses thinking
in the final assistant message of a loop when the request does not think, so that message goes
without it (the log keeps the blocks); the resume warning compares with what the newest answered
request sent, and an effort ``--thinking off`` left out does not come back on a later resume."""

from __future__ import annotations

from pathlib import Path

from tiny_agent.agent.loop import AgentConfig
from tiny_agent.agent.run import Run
from tiny_agent.agent.settings import RunSettings
from tiny_agent.providers.anthropic.thinking import THINKING_TYPES
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.testing import BillingFake, Task
from tiny_agent.testing.thinking_server import ThinkingRules

ENV = {"ANTHROPIC_API_KEY": "sk-test-1", "DEEPSEEK_API_KEY": "sk-test-2"}


def reads(ws: Path, count: int, trigger: str = "read") -> Task:
    for i in range(count):
        (ws / f"p{i}.txt").write_text(f"words of file {i} " * 200)
    return Task(trigger, [[("read_file", {"path": f"p{i}.txt"})] for i in range(count)], "Done.")


def thinking_in(message: dict[str, object]) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(b.get("type") in THINKING_TYPES for b in content)


def test_thinking_off_goes_on_with_a_loop_begun_with_thinking_on(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    rules = ThinkingRules()
    with BillingFake([reads(ws, 4)], thinking=rules) as fake, SQLiteStore(tmp_path / "s.db") as store:
        base = {"provider": "anthropic", "model": "claude-sonnet-5", "base_url": fake.url("r", "anthropic")}
        first = RunSettings.of({**base, "workspace": str(ws), "thinking": "adaptive", "code_tools": False})
        with Run.open(store, settings=first, env=ENV, agent=AgentConfig(max_steps=2)) as run:
            assert run.agent.run("Please read the files").stop == "step_limit"  # inside the loop
            assert run.session is not None
            sid = run.session.id
        with Run.open(store, settings=RunSettings.of({**base, "thinking": "off"}), resume=sid, env=ENV) as run:
            assert (
                run.notes.count(
                    "the thinking settings differ from the session's (adaptive -> off): "
                    "at the next request the cache misses from the first message on"
                )
                == 1
            )
            result = run.agent.run("Go on")
            assert result.stop == "done", result.error
        off = next(b.body for b in fake.bills("r") if b.body["thinking"] == {"type": "disabled"})
        # Back to thinking: the blocks the off request left out go back, as the log kept them.
        with Run.open(store, settings=RunSettings.of({**base, "thinking": "adaptive"}), resume=sid, env=ENV) as run:
            assert any("(off -> adaptive)" in n for n in run.notes)
    assert rules.rejected == []
    assert off["messages"][-2]["role"] == "assistant"
    # None goes: the final assistant of a loop may not carry it, and the same rule for every message
    # keeps the prefix the same from one request that does not think to the next.
    assert not any(thinking_in(m) for m in off["messages"])


def test_thinking_on_waits_for_the_end_of_a_loop_begun_without_it(tmp_path: Path) -> None:
    """One thinking configuration per assistant turn, and a tool loop is one turn: a loop begun with
    thinking off goes on without it, and the next turn thinks."""
    ws = tmp_path / "ws"
    ws.mkdir()
    rules = ThinkingRules()
    with (
        BillingFake([reads(ws, 4, "the files"), reads(ws, 1, "one more")], thinking=rules) as fake,
        SQLiteStore(tmp_path / "s.db") as store,
    ):
        base = {"provider": "anthropic", "model": "claude-sonnet-4-6", "base_url": fake.url("r", "anthropic")}
        first = RunSettings.of({**base, "workspace": str(ws), "thinking": "off", "code_tools": False})
        with Run.open(store, settings=first, env=ENV, agent=AgentConfig(max_steps=2)) as run:
            assert run.agent.run("Please read the files").stop == "step_limit"  # inside the loop
            assert run.session is not None
            sid = run.session.id
        on = RunSettings.of({**base, "thinking": "2048"})
        with Run.open(store, settings=on, resume=sid, env=ENV) as run:
            result = run.agent.run("Go on")
            assert result.stop == "done", result.error
        looping = len(fake.bills("r"))
        with Run.open(store, settings=on, resume=sid, env=ENV) as run:
            assert run.agent.run("Read one more").stop == "done"
        bodies = [b.body for b in fake.bills("r")]
    assert rules.rejected == []
    assert all(b["thinking"] == {"type": "disabled"} for b in bodies[2:looping]), "the loop goes on as it began"
    assert bodies[looping]["thinking"] == {"type": "enabled", "budget_tokens": 2048}, "the next turn thinks"


def test_a_resume_compares_with_what_was_sent_not_a_run_that_sent_nothing(tmp_path: Path) -> None:
    """A run that stopped before its first call recorded its settings but sent nothing: the next
    resume's warning compares with the newest request that was answered."""
    ws = tmp_path / "ws"
    ws.mkdir()
    with (
        BillingFake([reads(ws, 2), reads(ws, 2)], thinking=ThinkingRules()) as fake,
        SQLiteStore(tmp_path / "s.db") as store,
    ):
        base = {"provider": "anthropic", "model": "claude-sonnet-5", "base_url": fake.url("r", "anthropic")}
        first = RunSettings.of({**base, "workspace": str(ws), "thinking": "adaptive", "code_tools": False})
        with Run.open(store, settings=first, env=ENV) as run:
            assert run.agent.run("Please read the files").stop == "done"
            assert run.session is not None
            sid = run.session.id
        with Run.open(store, settings=RunSettings.of({**base, "thinking": "off"}), resume=sid, env=ENV):
            pass  # opened, recorded, no call
        with Run.open(store, settings=RunSettings.of({**base, "thinking": "adaptive"}), resume=sid, env=ENV) as run:
            assert not [n for n in run.notes if "thinking settings differ" in n]


def test_an_effort_left_out_by_thinking_off_stays_out(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    rules = ThinkingRules()
    tasks = [reads(ws, 2), reads(ws, 2), reads(ws, 2)]
    with BillingFake(tasks, thinking=rules) as fake, SQLiteStore(tmp_path / "s.db") as store:
        base = {"provider": "deepseek", "model": "deepseek-v4-flash", "base_url": fake.url("r", "openai")}
        first = RunSettings.of({**base, "workspace": str(ws), "effort": "low", "code_tools": False})
        with Run.open(store, settings=first, env=ENV) as run:
            assert run.agent.run("Please read the files").stop == "done"
            assert run.session is not None
            sid = run.session.id
        with Run.open(store, settings=RunSettings.of({**base, "thinking": "off"}), resume=sid, env=ENV) as run:
            # DeepSeek's effort is its thinking's own, refused beside off: the line offers no giving it again.
            assert "--thinking off leaves out the session's --effort low" in run.notes
            assert not any("give it again" in n for n in run.notes), run.notes
            assert run.agent.run("Again").stop == "done"
        again = RunSettings.of({**base, "thinking": "adaptive"})
        with Run.open(store, settings=again, resume=sid, env=ENV) as run:
            assert (
                run.notes.count(
                    "the thinking settings differ from the session's (off -> adaptive): "
                    "at the next request the cache misses from the first message on"
                )
                == 1
            )
            assert run.agent.run("Once more").stop == "done"
        last = fake.bills("r")[-1].body
    assert rules.rejected == []
    assert last["thinking"] == {"type": "enabled"} and "reasoning_effort" not in last
