"""The CLI's front door: a user's mistake is one line that says what to fix, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from tiny_agent.cli import main

KEYS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "DEEPSEEK_API_KEY", "MOONSHOT_API_KEY")


@pytest.fixture(autouse=True)
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in KEYS:
        monkeypatch.delenv(key, raising=False)


def one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err
    return err


def test_a_missing_key_says_what_to_set(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--provider", "anthropic", "--workspace", str(tmp_path), "hi"]) == 2
    err = one_line_error(capsys)
    assert err == "tiny-agent: provider 'anthropic' needs ANTHROPIC_API_KEY"


def test_an_unknown_provider_lists_the_choices(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--provider", "gemini", "hi"]) == 2
    err = one_line_error(capsys)
    assert "'gemini' is not one of" in err and "anthropic" in err and "local" in err


@pytest.mark.parametrize(
    ("flag", "value", "fragment"),
    [
        ("--compact-at", "lots", "fraction"),
        ("--compact-at", "-1", "whole token count"),
        ("--compact-at", "1.5", "whole token count"),
        ("--compact-at", "nan", "whole token count"),
        ("--compact-at", "inf", "whole token count"),
        ("--max-steps", "0", "at least 1"),
        ("--budget-usd", "-1", "more than 0"),
        ("--timeout", "soon", "expected a number"),
        ("--max-retries", "-2", "0 or more"),
        ("--cache-ttl", "2h", "'2h' is not one of"),
    ],
)
def test_bad_flags_say_what_to_fix(flag: str, value: str, fragment: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([flag, value, "hi"]) == 2
    err = one_line_error(capsys)
    assert fragment in err and len(err.splitlines()) == 1


def test_an_empty_task_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["   "]) == 2
    assert "the task is empty" in one_line_error(capsys)


def test_a_missing_workspace_is_a_config_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--workspace", str(tmp_path / "nope"), "hi"]) == 2
    assert "nope" in one_line_error(capsys)


def test_local_with_a_model_name_instead_of_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--provider", "local", "--model", "gpt-4o", "--workspace", str(tmp_path), "hi"]) == 2
    assert ".gguf" in one_line_error(capsys)


def test_local_status_when_nothing_runs(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    assert main(["local", "status"]) == 3
    assert capsys.readouterr().out.strip() == "not running"


def test_a_misspelt_command_is_not_run_as_a_task(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 30, finding 9: ``tiny-agent sesions list`` ran the task "sesions list" (a model call)."""

    def no_model(*args: object, **kwargs: object) -> None:
        raise AssertionError("a model was called")

    monkeypatch.setattr("tiny_agent.agent.parts.resolve_provider", no_model)
    monkeypatch.chdir(tmp_path)
    for argv, meant in ((["sesions", "list"], "sessions"), (["stast"], "stats"), (["sessions", "lst"], "list")):
        assert main(argv) == 2, argv
        line = one_line_error(capsys)
        assert f"Did you mean '{meant}'" in line, line
    assert main(["--max-step", "3", "hi"]) == 2
    assert "--max-steps" in one_line_error(capsys), "an option close to a known one is named"
