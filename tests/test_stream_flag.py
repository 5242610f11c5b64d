"""The answer streams to a terminal and comes whole into a pipe or a file; ``--stream`` and
``--no-stream`` say which whatever stdout is, and the help says so."""

from __future__ import annotations

from pathlib import Path

import click
import pytest

from tiny_agent.agent.loop import Agent, RunResult
from tiny_agent.cli import main
from tiny_agent.cli.app import run_command
from tiny_agent.cli.chat import chat_command
from tiny_agent.cli.printer import Printer
from tiny_agent.cli.runtime import Runtime


def streamed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, *flags: str) -> tuple[bool, bool]:
    """(whether the printer streams, whether the agent asks for a stream) of a run given ``flags``;
    stdout is pytest's capture, not a terminal. Nothing is sent."""
    seen: list[tuple[bool, bool]] = []

    def header(printer: Printer, runtime: Runtime) -> None:
        seen.append((printer.stream, runtime.agent.config.stream))

    monkeypatch.setattr("tiny_agent.cli.app._header", header)
    monkeypatch.setattr(Agent, "run", lambda self, task: RunResult("done", "ok", 1))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-stream")
    monkeypatch.chdir(tmp_path)
    assert main(["--provider", "openai", "--no-session", "-q", *flags, "task"]) == 0
    return seen[0]


def test_a_pipe_gets_the_answer_whole_unless_stream_is_given(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert streamed(monkeypatch, tmp_path) == (False, False)
    assert streamed(monkeypatch, tmp_path, "--stream") == (True, True)
    assert streamed(monkeypatch, tmp_path, "--no-stream") == (False, False)


def test_the_files_no_stream_false_streams_into_a_pipe(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "tiny-agent.toml").write_text("no_stream = false\n")
    assert streamed(monkeypatch, tmp_path) == (True, True)
    assert streamed(monkeypatch, tmp_path, "--no-stream") == (False, False), "a flag beats the file"


def test_stream_with_json_is_one_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-stream")
    assert main(["--provider", "openai", "--no-session", "--json", "--stream", "--workspace", str(tmp_path), "x"]) == 2
    assert "tiny-agent: --json prints the answer inside one object: leave out --stream" in capsys.readouterr().err


@pytest.mark.parametrize("command", [run_command, chat_command], ids=["run", "chat"])
def test_the_help_says_where_the_answer_streams(command: click.Command) -> None:
    (option,) = [p for p in command.params if isinstance(p, click.Option) and p.name == "no_stream"]
    assert option.opts == ["--no-stream"] and option.secondary_opts == ["--stream"]
    text = " ".join((option.help or "").split())
    assert "terminal" in text and "pipe" in text, text
