"""What the terminal shows of an answer that streamed in: the answer once, whatever events follow it;
and of a library's warning: one line of ours."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import tiny_agent
from tiny_agent.agent.loop import Agent, AgentConfig
from tiny_agent.cli.printer import Printer
from tiny_agent.testing import BillingFake, ScriptedProvider, Task, tool_call
from tiny_agent.testing.thinking_server import ThinkingRules
from tiny_agent.tools.toolbox import Toolbox
from tiny_agent.tools.workspace import Workspace
from tiny_agent.types import Block, Message, TextBlock, TextDelta, ThinkingBlock, ThinkingDelta

SRC = Path(tiny_agent.__file__).resolve().parents[1]
"""Where the tiny_agent under test is, for a command run as its own process."""


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


class Screen:
    """stdout and stderr as one terminal shows them: in the order they were written."""

    def __init__(self) -> None:
        self.text = ""
        self.out, self.err = self._Stream(self), self._Stream(self)

    class _Stream(io.StringIO):
        def __init__(self, screen: Screen) -> None:
            super().__init__()
            self.screen = screen

        def write(self, s: str) -> int:
            self.screen.text += s
            return super().write(s)

        def isatty(self) -> bool:
            return False


THOUGHT = "The rota file will say. " * 10


def run_streamed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, replies: list[Message], **kw: bool) -> str:
    screen = Screen()
    monkeypatch.setattr(sys, "stderr", screen.err)
    printer = Printer(stream=True, out=screen.out, **kw)
    try:
        agent = Agent(
            ScriptedProvider(replies),
            Toolbox(Workspace(tmp_path).tools()),
            config=AgentConfig(stream=True),
            on_event=printer.event,
        )
        printer.answer(agent.run("Who works on Wednesday?").answer)
    finally:
        printer.close()
    return screen.text


def thinking_reply(*blocks: Block) -> Message:
    return Message("assistant", (ThinkingBlock(THOUGHT, "sig"), *blocks))


def test_a_streamed_answers_thinking_is_one_folded_line_above_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = run_streamed(tmp_path, monkeypatch, [thinking_reply(TextBlock("Wednesday: Tom"))])
    assert text.count("thinking: The rota file will say.") == 1, text
    assert text.index("thinking: ") < text.index("Wednesday: Tom"), "the thinking comes before the answer it led to"
    assert f"({len(THOUGHT):,} chars)" in text, "folded to one line"


@pytest.mark.parametrize("columns", [60, 80, 200])
def test_the_folded_thinking_fits_one_line_of_the_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, columns: int
) -> None:
    monkeypatch.setenv("COLUMNS", str(columns))
    text = run_streamed(tmp_path, monkeypatch, [thinking_reply(TextBlock("Wednesday: Tom"))])
    (line,) = [x for x in text.splitlines() if "thinking: " in x]
    assert len(line) <= columns and line.endswith(f"({len(THOUGHT):,} chars)"), line


def test_with_show_thinking_it_streams_whole_before_the_answer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = run_streamed(tmp_path, monkeypatch, [thinking_reply(TextBlock("Wednesday: Tom"))], show_thinking=True)
    assert text.count("thinking: ") == 1 and THOUGHT.strip() in text, text
    assert text.index(THOUGHT.strip()) < text.index("Wednesday: Tom")
    assert "chars)" not in text


def test_a_tool_turns_thinking_shows_once_and_the_next_turn_gets_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "rota.txt").write_text("Wednesday: Tom\n")
    replies = [
        thinking_reply(*tool_call("read_file", "c1", path="rota.txt").content),
        Message("assistant", (ThinkingBlock("It says Tom.", "sig2"), TextBlock("Wednesday: Tom"))),
    ]
    text = run_streamed(tmp_path, monkeypatch, replies)
    assert text.count("thinking: The rota file") == 1 and text.count("thinking: It says Tom.") == 1, text
    assert text.index("thinking: The rota file") < text.index("thinking: It says Tom.") < text.index("Wednesday: Tom")


def test_thinking_of_a_turn_cut_off_does_not_open_the_next_one() -> None:
    out = io.StringIO()
    printer = Printer(stream=True, out=out)
    try:
        printer.event(ThinkingDelta("half a thought"))
        printer.answer("")  # the turn ended without a reply (an error, Ctrl-C)
        printer.event(TextDelta("Hello."))
    finally:
        printer.close()
    assert out.getvalue() == "Hello."


def test_a_library_warning_is_one_line_of_ours_once_per_message(capsys: pytest.CaptureFixture[str]) -> None:
    """A warning from a library under the CLI (an SDK's deprecation notice) stays visible, as one line
    of ours: its first line only, no file, no source line, each message once."""
    printer = Printer()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("always")
            for _ in range(3):
                warnings.warn("Using this is deprecated.\nSee the docs.", UserWarning, stacklevel=1)
            warnings.warn("another thing", DeprecationWarning, stacklevel=1)
    finally:
        printer.close()
    lines = capsys.readouterr().err.splitlines()
    assert lines == ["tiny-agent: warning: Using this is deprecated.", "tiny-agent: warning: another thing"]


def test_the_sdks_warning_reaches_the_terminal_as_one_tidy_line(tmp_path: Path) -> None:
    """The Anthropic SDK warns about manual thinking on claude-opus-4-6 from inside ``create()``: the
    command shows it as one line of its own, once for the run's two calls, and no ``file:line:`` nor
    source line of the SDK's."""
    (tmp_path / "a.txt").write_text("alpha " * 50)
    task = Task("read a", [[("read_file", {"path": "a.txt"})]], "Read.")
    with BillingFake([task], thinking=ThinkingRules()) as fake:
        argv = ["--provider", "anthropic", "--model", "claude-opus-4-6", "--base-url", fake.url("w", "anthropic")]
        argv += ["--thinking", "2048", "--no-session", "--workspace", str(tmp_path), "please read a"]
        env = {**os.environ, "ANTHROPIC_API_KEY": "sk-test", "PYTHONPATH": str(SRC), "PYTHONWARNINGS": "always"}
        done = subprocess.run(
            [sys.executable, "-m", "tiny_agent", *argv], capture_output=True, text=True, env=env, timeout=120
        )
    assert done.returncode == 0, done.stderr
    said = [line for line in done.stderr.splitlines() if "thinking.type=enabled" in line]
    assert said == [
        "tiny-agent: warning: Using Claude with claude-opus-4-6 and 'thinking.type=enabled' is deprecated. Use "
        "'thinking.type=adaptive' instead which results in better model performance in our testing: "
        "https://platform.claude.com/docs/en/build-with-claude/adaptive-thinking"
    ], done.stderr
    assert "Warning:" not in done.stderr and ".py:" not in done.stderr, done.stderr
