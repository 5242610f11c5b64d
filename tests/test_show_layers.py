"""``sessions show``: each call's line says which prefix layers changed from the call before, and the
session's figures follow its story."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tiny_agent.cli.app import main
from tiny_agent.context.engine import Context
from tiny_agent.observe.history import history_lines
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.testing import BillingFake, ScriptedProvider
from tiny_agent.types import Message, ModelResponse, Usage

from .recorded import record, tour


@pytest.mark.parametrize("reports_reads", [True, False])
def test_a_changed_system_prompt_is_named_with_where_it_changed(reports_reads: bool) -> None:
    def reply(text: str) -> Message | ModelResponse:
        # Without cache reads there is no miss diagnosis: the line itself says where the prompt changed.
        return (
            Message.assistant(text)
            if reports_reads
            else ModelResponse(Message.assistant(text), Usage(100, 5), "end_turn", "m")
        )

    ctx = Context("You are terse. Time: 10:00:01.", [])
    provider = ScriptedProvider([reply("a"), reply("b"), reply("c")])
    ctx.add_user("one")
    ctx.complete(provider)
    ctx.system = "You are terse. Time: 10:00:02."
    ctx.add_user("two")
    ctx.complete(provider)
    ctx.add_user("three")
    ctx.complete(provider)
    turns = [line for line in history_lines(ctx.entries) if line.startswith("[turn")]
    assert "changed" not in turns[0] and "changed" not in turns[2], "nothing changed before the first or third"
    if reports_reads:
        assert "cache miss: system prompt changed at character 28" in turns[1]
        assert turns[1].endswith(" · changed: system]"), "where it changed is said once, in the miss"
    else:
        assert turns[1].endswith(
            '· changed: system at character 28: now "...terse. Time: 10:00:02.", was "...terse. Time: 10:00:01."]'
        )


def test_show_prints_the_layers_and_the_figures(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with SQLiteStore(tmp_path / "s.db") as store, BillingFake([tour(tmp_path, "iota", 2)]) as fake:
        sid = record(store, fake, tmp_path, "anthropic", "r", ["tour the iota files"], stamped=True)
    assert main(["sessions", "show", sid[:8], "--store", str(tmp_path / "s.db")]) == 0
    out = capsys.readouterr().out
    turns = [line for line in out.splitlines() if line.startswith("[turn")]
    assert len(turns) == 3 and all("changed: system" in t for t in turns[1:]) and "changed" not in turns[0]
    assert "[run ended: done after 3 step(s)]" in out
    assert "misses " in out and "system prompt changed" in out and "at character" in out.split("layers")[-1]
    assert main(["sessions", "show", sid, "--json", "--store", str(tmp_path / "s.db")]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert [c["changed"] for c in shown["calls"]] == [[], ["system"], ["system"]]
    assert shown["stats"]["layers"]["system"]["changed"] == 2 and shown["stats"]["calls"] == 3
