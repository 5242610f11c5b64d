"""The bad-input corpus: flags, environment and tool inputs a user (or a model) gets wrong, each
with the one clear line it must produce. Flags and environment exit 2 with one line that says what
to fix, before anything is sent; a bad tool call goes back to the model as an error result.

docs/faults.md lists the same classes with what a user sees.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tiny_agent.cli import main
from tiny_agent.store.migrations import SCHEMA_VERSION
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.tools.toolbox import Toolbox
from tiny_agent.tools.workspace import Workspace
from tiny_agent.types import INVALID_JSON_KEY, ToolUseBlock

KEYS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "DEEPSEEK_API_KEY", "MOONSHOT_API_KEY")

# (flags, fragment of the one line on stderr). Every case exits 2.
FLAGS: list[tuple[list[str], str]] = [
    (["--compact-at", "lots"], "fraction like 0.8"),
    (["--compact-at", "-1"], "whole token count"),
    (["--compact-at", "1.5"], "whole token count"),
    (["--compact-at", "nan"], "whole token count"),
    (["--compact-at", "inf"], "whole token count"),
    (["--max-steps", "0"], "at least 1"),
    (["--max-steps", "many"], "expected a whole number"),
    (["--keep-turns", "0"], "at least 1"),
    (["--context-window", "-5"], "at least 1"),
    (["--max-tokens", "0"], "at least 1"),
    (["--budget-usd", "0"], "more than 0 dollars"),
    (["--budget-usd", "ten"], "expected a number dollars"),
    (["--timeout", "-1"], "more than 0 seconds"),
    (["--timeout", "0"], "more than 0 seconds"),
    (["--max-retries", "-1"], "0 or more"),
    (["--cache-ttl", "2h"], "'2h' is not one of"),
    (["--provider", "gemini"], "'gemini' is not one of"),
    (["--frobnicate"], "No such option '--frobnicate'"),
    (["--protect", ""], "--protect '' is empty: it would match every path"),
    (["--allow-read", "  "], "--allow-read '  ' is empty"),
    (["--resume", "zzzz"], "no session 'zzzz'"),
    (["--resume", ""], "give a session id"),
    (["--resume", "  "], "give a session id"),
    (["--resume", "", "--continue"], "either --resume ID or --continue"),
    (["--resume", "abc", "--continue"], "either --resume ID or --continue"),
    (["--no-session", "--resume", "abc"], "--no-session cannot be combined"),
    (["--base-url", "not a url"], "is not an http(s) URL with a host"),
    (["--base-url", "ftp://example.com/v1"], "is not an http(s) URL with a host"),
    (["--system", "@/nonexistent/prompt.txt"], "--system @/nonexistent/prompt.txt: cannot read"),
    (["--provider", "local", "--model", "gpt-4o"], "takes --model PATH to a .gguf file"),
    (["--provider", "anthropic"], "needs ANTHROPIC_API_KEY"),
    (["--provider", "deepseek"], "needs DEEPSEEK_API_KEY"),
]


@pytest.fixture(autouse=True)
def no_keys(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for key in KEYS:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.chdir(tmp_path)


def one_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err
    assert len(err.splitlines()) == 1, err
    return err


@pytest.mark.parametrize(("flags", "fragment"), FLAGS, ids=[" ".join(f) or "empty" for f, _ in FLAGS])
def test_a_bad_flag(flags: list[str], fragment: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*flags, "a task"]) == 2
    assert fragment in one_line(capsys)


def test_bad_flags_after_a_session_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sessions", "list", "--limit", "0"]) == 2
    assert "at least 1" in one_line(capsys)
    assert main(["sessions", "fork", "nope"]) == 2
    assert "no session 'nope'" in one_line(capsys)
    assert main(["lint", "/nonexistent.json"]) == 2
    assert "cannot read" in one_line(capsys)


def test_files_where_folders_belong_and_back(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    assert main(["--workspace", str(a_file), "task"]) == 2
    assert "is a file" in one_line(capsys)
    assert main(["--workspace", str(tmp_path / "missing"), "task"]) == 2
    assert "does not exist" in one_line(capsys)
    assert main(["--store", str(tmp_path), "task"]) == 2
    assert "is a directory" in one_line(capsys)
    not_gguf = tmp_path / "model.gguf"
    not_gguf.write_text("not a model")
    assert main(["--provider", "local", "--model", str(not_gguf), "task"]) == 2
    assert "is not a GGUF model file" in one_line(capsys)


def test_bad_store_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    damaged = tmp_path / "damaged.db"
    damaged.write_bytes(b"\x00garbage" * 500)
    assert main(["--store", str(damaged), "task"]) == 2
    assert f"{damaged} is damaged" in one_line(capsys)
    newer = tmp_path / "newer.db"
    SQLiteStore(newer).close()
    db = sqlite3.connect(newer)
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    db.close()
    assert main(["--store", str(newer), "task"]) == 2
    assert "newer than this tiny-agent knows" in one_line(capsys)


@pytest.mark.parametrize(
    ("variable", "value", "flags", "fragment"),
    [
        ("OPENAI_BASE_URL", "not a url", ["--provider", "openai"], "OPENAI_BASE_URL: base URL 'not a url'"),
        ("TINY_AGENT_MODEL", "/nonexistent/model.gguf", ["--provider", "local"], "model file not found"),
        ("TINY_AGENT_LLAMA_SERVER", "/nonexistent/llama-server", ["--provider", "local"], "which is not a file"),
        (
            "TINY_AGENT_CACHE_MIN_TOKENS",
            "sonnet",
            ["--provider", "openai", "--base-url", "http://127.0.0.1:9/v1"],
            "TINY_AGENT_CACHE_MIN_TOKENS: expected model=tokens pairs",
        ),
    ],
)
def test_bad_environment(
    variable: str,
    value: str,
    flags: list[str],
    fragment: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    fake_model = Path("fake.gguf")
    fake_model.write_bytes(b"GGUF" + bytes(60))  # passes the model check, so the next one is reached
    monkeypatch.setenv("TINY_AGENT_MODEL", str(fake_model.resolve()))
    monkeypatch.setenv(variable, value)
    assert main([*flags, "task"]) == 2
    assert fragment in one_line(capsys)


def test_a_cache_lifetime_for_a_provider_without_one(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-abcdefgh")
    assert main(["--provider", "openai", "--cache-ttl", "1h", "task"]) == 2
    assert "a cache lifetime applies to Anthropic" in one_line(capsys)


def test_a_budget_without_a_price(capsys: pytest.CaptureFixture[str]) -> None:
    flags = ["--provider", "openai", "--base-url", "http://127.0.0.1:9/v1", "--model", "my-own-model"]
    assert main([*flags, "--budget-usd", "1", "task"]) == 2
    assert "needs the model's price" in one_line(capsys)


# -- tool inputs: (tool, arguments, fragment of the error result the model gets) -------------------

LONG = "x" * 300
TOOL_INPUTS: list[tuple[str, Any, str]] = [
    ("read_file", {}, "'path' is a required property"),
    ("read_file", {"path": 5}, "5 is not of type 'string'"),
    ("read_file", {"path": ""}, "should be non-empty"),
    ("read_file", {"path": "../outside.txt"}, "is outside the workspace"),
    ("read_file", {"path": "/etc/passwd"}, "is outside the workspace"),
    ("read_file", {"path": "notes.txt", "start_line": 0}, "less than the minimum of 1"),
    ("read_file", {"path": "notes.txt", "max_lines": -3}, "less than the minimum of 1"),
    ("read_file", {"path": "notes.txt", "colour": "red"}, "unexpected argument"),
    ("read_file", {"path": "no\x00te"}, "NUL"),
    ("read_file", {"path": f"{LONG}.txt"}, "refused"),
    ("read_file", {"path": "docs"}, "is a directory; use list_dir"),
    ("read_file", {"path": "image.bin"}, "looks like a binary file"),
    ("read_file", {"path": "missing.txt"}, "no such file"),
    ("read_file", {"path": ".env"}, "looks like a secret"),
    ("read_file", {"path": "notes.txt", "start_line": 99}, "past the end"),
    ("write_file", {"path": "a.txt"}, "'content' is a required property"),
    ("write_file", {"path": "newdir/", "content": "x"}, "names a folder"),
    ("write_file", {"path": ".git/config", "content": "x"}, "protected by default"),
    ("write_file", {"path": "notes.txt/child.txt", "content": "x"}, "is a file, not a directory"),
    ("write_file", {"path": "a.txt", "content": "bad \ud800 text"}, "unpaired surrogate"),
    ("list_dir", {"path": "notes.txt"}, "is a file, not a directory"),
    ("list_dir", {"path": "nowhere"}, "no such directory"),
    ("rm_rf", {"path": "."}, "unknown tool 'rm_rf'"),
    ("read_file", {INVALID_JSON_KEY: '{"path": "notes.txt"'}, "arguments were not valid JSON"),
    ("read_file", ["notes.txt"], "must be a JSON object"),
]


@pytest.fixture
def toolbox(tmp_path: Path) -> Toolbox:
    root = tmp_path / "ws"
    (root / "docs").mkdir(parents=True)
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("[core]\n")
    (root / "notes.txt").write_text("buy milk\n")
    (root / ".env").write_text("API_KEY=123\n")
    (root / "image.bin").write_bytes(b"\x89PNG\x00\x00\x00")
    return Toolbox(Workspace(root).tools())


@pytest.mark.parametrize(
    ("tool", "arguments", "fragment"), TOOL_INPUTS, ids=[f"{t}-{i}" for i, (t, _, _) in enumerate(TOOL_INPUTS)]
)
def test_a_bad_tool_call_goes_back_as_an_error(toolbox: Toolbox, tool: str, arguments: Any, fragment: str) -> None:
    result = toolbox.run(ToolUseBlock("t1", tool, arguments))
    assert result.is_error, result.content
    assert fragment in result.content


def test_the_corpus_is_big_enough() -> None:
    assert len(FLAGS) + len(TOOL_INPUTS) + 4 + 8 >= 40
