"""Thinking turned on by a resume inside a tool loop begun without it waits until the loop ends (one
thinking configuration per assistant turn): the requests of the loop go with thinking off. The resume
warning, the per-call miss line and the call's fingerprint name what was sent (``default -> off``),
not what was typed (``default -> 2048``); the change to 2048 is named where it happens."""

from __future__ import annotations

from pathlib import Path

import pytest

from tiny_agent.agent.loop import AgentConfig
from tiny_agent.agent.run import Run
from tiny_agent.agent.settings import RunSettings
from tiny_agent.context.entries import CallOpened
from tiny_agent.context.entry_codec import read
from tiny_agent.providers.profile import ProviderProfile
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.testing import BillingFake, Task
from tiny_agent.testing.thinking_server import ThinkingRules
from tiny_agent.whatif.figures import CallFigures
from tiny_agent.whatif.replay import replay

ENV = {"ANTHROPIC_API_KEY": "sk-test-1"}
OFF = {"type": "disabled"}
ON = {"type": "enabled", "budget_tokens": 2048}


def reads(ws: Path, first: int, count: int, trigger: str) -> Task:
    for i in range(first, first + count):
        (ws / f"p{i}.txt").write_text(f"words of file {i} " * 200)
    return Task(trigger, [[("read_file", {"path": f"p{i}.txt"})] for i in range(first, first + count)], "Done.")


def row(c: CallFigures) -> tuple[object, ...]:
    return (c.purpose, c.input_tokens, c.cache_read_tokens, c.cache_write_tokens, c.output_tokens, c.reasoning_tokens)


def stopped_in_a_loop(
    tmp_path: Path, first: str | None, as_asked: bool = False
) -> tuple[list[str], list[str | None], list[dict[str, object]]]:
    """A Claude 4.6 session run with ``first`` thinking, stopped inside its tool loop, resumed with
    --thinking 2048 to finish the loop and then ask one more: the resume's notes, the resumed calls'
    miss lines and every body sent. ``as_asked``: its call entries key the settings asked for, as the
    log of a version before they named the ones sent does."""
    ws = tmp_path / "ws"
    ws.mkdir()
    rules = ThinkingRules()
    tasks = [reads(ws, 0, 4, "the files"), reads(ws, 4, 1, "one more")]
    with (
        BillingFake(tasks, thinking=rules) as fake,
        SQLiteStore(tmp_path / "s.db") as store,
        pytest.MonkeyPatch.context() as patch,
    ):
        if as_asked:
            patch.setattr(ProviderProfile, "sent_thinking", lambda self, body: self.thinking)
        # Claude 4.6: it does not think unasked and takes a budget.
        base = {"provider": "anthropic", "model": "claude-sonnet-4-6", "base_url": fake.url("r", "anthropic")}
        given = {**base, "workspace": str(ws), "code_tools": False, **({"thinking": first} if first else {})}
        with Run.open(store, settings=RunSettings.of(given), env=ENV, agent=AgentConfig(max_steps=2)) as run:
            assert run.agent.run("Please read the files").stop == "step_limit"  # inside the loop
            assert run.session is not None
            sid = run.session.id
        with Run.open(store, settings=RunSettings.of({**base, "thinking": "2048"}), resume=sid, env=ENV) as run:
            notes = list(run.notes)
            before = len(run.agent.context.ledger.calls)
            assert run.agent.run("go on").stop == "done"
            assert run.agent.run("Read one more").stop == "done"
            misses = [c.miss for c in run.agent.context.ledger.calls[before:]]
        bodies = [b.body for b in fake.bills("r")]
        entries = store.entries(sid)
    assert rules.rejected == []
    keys = [v.fingerprint.get("thinking") for e in entries for v in read(e) if isinstance(v, CallOpened)]
    assert first is not None or ("off" in keys) != as_asked, keys  # the loop's requests, keyed as sent
    result = replay(entries)
    assert [row(c) for c in result.replayed.per_call] == [row(c) for c in result.recorded.per_call]
    assert not result.replayed.estimated
    return notes, misses, bodies


def test_a_resume_with_thinking_on_inside_a_loop_begun_with_the_default_names_what_was_sent(tmp_path: Path) -> None:
    notes, misses, bodies = stopped_in_a_loop(tmp_path, None)
    assert [b.get("thinking") for b in bodies[:2]] == [None, None], "the default sends no switch"
    resumed = [b.get("thinking") for b in bodies[2:]]
    on = resumed.index(ON)  # the turn after the loop's end, its own tool call and answer
    assert on > 0 and resumed == [OFF] * on + [ON] * (len(resumed) - on), resumed
    warned = [n for n in notes if "thinking settings differ" in n]
    assert warned == [
        "the thinking settings differ from the session's (default -> off): at the next request the cache "
        "misses from the first message on; 2048 starts when the tool loop it stopped in ends, a change of its own"
    ]
    assert misses[0] is not None and misses[0].startswith("thinking settings changed: default -> off"), misses[0]
    assert misses[on] is not None and misses[on].startswith("thinking settings changed: off -> 2048"), misses[on]
    assert not any("-> 2048" in (m or "") for m in misses[:on]), misses


def test_a_resume_with_thinking_on_inside_a_loop_begun_with_it_off_changes_nothing_until_its_end(
    tmp_path: Path,
) -> None:
    notes, misses, bodies = stopped_in_a_loop(tmp_path, "off")
    sent = [b.get("thinking") for b in bodies]
    on = sent.index(ON)
    assert sent == [OFF] * on + [ON] * (len(sent) - on), sent
    on -= len(sent) - len(misses)  # the resumed run's calls
    warned = [n for n in notes if "thinking settings differ" in n]
    assert warned == [
        "the thinking settings differ from the session's (off -> 2048) from the end of the tool loop it stopped "
        "in: there the cache misses from the first message on"
    ]
    assert not any("thinking settings changed" in (m or "") for m in misses[:on]), misses
    assert misses[on] is not None and misses[on].startswith("thinking settings changed: off -> 2048"), misses[on]


def test_an_older_log_keyed_with_the_asked_settings_replays_as_recorded(tmp_path: Path) -> None:
    """Its requests held back inside the loop are keyed 2048: the replay renders them off, as they were
    sent, and still finds each the recorded one (the recorded sizes and cache split, nothing estimated)."""
    stopped_in_a_loop(tmp_path, None, as_asked=True)
