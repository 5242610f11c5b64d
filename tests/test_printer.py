"""What the terminal shows of an answer that streamed in: the answer once, whatever events follow it."""

from __future__ import annotations

import io
from pathlib import Path

from tiny_agent.agent.loop import Agent, AgentConfig
from tiny_agent.cli.printer import Printer
from tiny_agent.testing import ScriptedProvider, tool_call
from tiny_agent.tools.toolbox import Toolbox
from tiny_agent.tools.workspace import Workspace
from tiny_agent.types import Message, TextDelta


def test_a_streamed_answer_is_printed_once_after_its_turn_line(tmp_path: Path) -> None:
    (tmp_path / "rota.txt").write_text("Wednesday: Tom\n")
    provider = ScriptedProvider(
        [
            Message(
                "assistant",
                (*Message.assistant("Let me look.").content, *tool_call("read_file", "c1", path="rota.txt").content),
            ),
            Message.assistant("Wednesday: Tom"),
        ]
    )
    out = io.StringIO()
    printer = Printer(stream=True, out=out)
    try:
        agent = Agent(
            provider, Toolbox(Workspace(tmp_path).tools()), config=AgentConfig(stream=True), on_event=printer.event
        )
        result = agent.run("Who works on Wednesday?")
        printer.answer(result.answer)
    finally:
        printer.close()
    assert result.answer == "Wednesday: Tom"
    assert out.getvalue().count("Wednesday: Tom") == 1, out.getvalue()
    assert out.getvalue().count("Let me look.") == 1


def test_in_a_chat_each_direct_answer_prints_once() -> None:
    out = io.StringIO()
    printer = Printer(stream=True, out=out)
    try:
        for text in ("Hello.", "World."):
            printer.event(TextDelta(text))
            printer.answer(text)
    finally:
        printer.close()
    assert out.getvalue() == "Hello.\nWorld.\n"
