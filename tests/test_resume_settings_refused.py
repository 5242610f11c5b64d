"""A reasoning setting refused because a resumed session stored it says so, as one from
tiny-agent.toml names its file: the user gave no ``--thinking off``, the session did, and the line
says where it came from and, where there is one, what to give instead."""

from __future__ import annotations

from pathlib import Path

import pytest

from tiny_agent.agent.run import Run
from tiny_agent.agent.settings import RunSettings
from tiny_agent.cli.app import main
from tiny_agent.errors import ConfigError
from tiny_agent.providers.thinking_check import SettingRefused
from tiny_agent.store.sqlite import SQLiteStore

NOWHERE = "http://127.0.0.1:9"
"""Nothing listens there: no call is made, the refusals come first."""
ENV = {"DEEPSEEK_API_KEY": "k", "ANTHROPIC_API_KEY": "k"}
DEEPSEEK_OFF = "--thinking off spends no reasoning effort on deepseek-v4-flash: leave out --effort low"
NO_ADAPTIVE = "claude-sonnet-4-5 has no adaptive thinking (use --thinking N with N >= 1024)"


def stored_session(store_path: Path, workspace: Path, **settings: object) -> str:
    """A session whose run settings are ``settings`` (opened and closed: no call is needed)."""
    spec = RunSettings(base_url=NOWHERE, workspace=str(workspace), **settings)  # type: ignore[arg-type]
    with SQLiteStore(store_path) as store, Run.open(store, settings=spec, env=ENV) as run:
        assert run.session is not None
        return run.session.id


def refusal(store_path: Path, sid: str, **given: object) -> ConfigError:
    with SQLiteStore(store_path) as store, pytest.raises(ConfigError) as raised:
        Run.open(store, settings=RunSettings(**given), resume=sid, env=ENV)  # type: ignore[arg-type]
    return raised.value


def test_the_sessions_thinking_off_is_named_with_how_to_turn_it_on(tmp_path: Path) -> None:
    sid = stored_session(tmp_path / "s.db", tmp_path, provider="deepseek", thinking="off")
    refused = refusal(tmp_path / "s.db", sid, effort="low")
    assert str(refused) == (
        f"{DEEPSEEK_OFF} (set by the session: --thinking off; give --thinking adaptive to turn thinking on)"
    )
    assert isinstance(refused, SettingRefused) and refused.flags == ("--thinking", "--effort")


def test_the_sessions_adaptive_is_named_on_a_model_without_it(tmp_path: Path) -> None:
    sid = stored_session(
        tmp_path / "s.db", tmp_path, provider="anthropic", model="claude-sonnet-5", thinking="adaptive"
    )
    refused = refusal(tmp_path / "s.db", sid, model="claude-sonnet-4-5")
    assert str(refused) == f"{NO_ADAPTIVE} (set by the session: --thinking adaptive)"


def test_the_sessions_server_compaction_is_named_on_a_provider_without_it(tmp_path: Path) -> None:
    sid = stored_session(tmp_path / "s.db", tmp_path, provider="anthropic", server_compact_at=60_000)
    refused = refusal(tmp_path / "s.db", sid, provider="deepseek", model="deepseek-v4-flash")
    assert str(refused).startswith("--server-compact-at works only with")
    assert str(refused).endswith("(set by the session: --server-compact-at 60000)")


def test_a_setting_given_again_on_the_resume_is_not_the_sessions(tmp_path: Path) -> None:
    sid = stored_session(tmp_path / "s.db", tmp_path, provider="deepseek", thinking="adaptive")
    refused = refusal(tmp_path / "s.db", sid, thinking="2048")
    assert "set by" not in str(refused), "the budget is the user's, given now"
    refused = refusal(tmp_path / "s.db", sid, thinking_display="bogus")
    assert str(refused) == "--thinking-display takes summarized or omitted, not 'bogus'", "not the thinking's"


def test_the_command_line_says_the_session_set_it_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    store = tmp_path / "s.db"
    off = stored_session(store, tmp_path, provider="deepseek", thinking="off")
    adaptive = stored_session(store, tmp_path, provider="anthropic", model="claude-sonnet-5", thinking="adaptive")
    common = ["--store", str(store), "--workspace", str(tmp_path), "go on"]
    assert main(["--resume", off, "--effort", "low", *common]) == 2
    assert capsys.readouterr().err.strip() == (
        f"tiny-agent: {DEEPSEEK_OFF} (set by the session: --thinking off; give --thinking adaptive to turn thinking on)"
    )
    assert main(["--resume", adaptive, "--model", "claude-sonnet-4-5", *common]) == 2
    assert capsys.readouterr().err.strip() == f"tiny-agent: {NO_ADAPTIVE} (set by the session: --thinking adaptive)"


def test_a_sessions_thinking_off_the_wire_never_sends_is_left_out_not_refused(tmp_path: Path) -> None:
    """DeepSeek over the Responses API is sent no switch: a session's ``--thinking off`` (from Chat
    Completions, or stored by an older version that took it there) is left out with a line, once,
    instead of refusing every resume with nothing to give instead."""
    env = {**ENV, "OPENAI_API_KEY": "k"}
    spec = RunSettings(
        provider="openai", model="deepseek-v4-flash", thinking="off", base_url=NOWHERE, workspace=str(tmp_path)
    )
    responses = RunSettings(api="responses")
    with SQLiteStore(tmp_path / "s.db") as store:
        with Run.open(store, settings=spec, env=env) as run:
            assert run.session is not None
            sid = run.session.id
        with Run.open(store, settings=responses, resume=sid, env=env) as run:
            assert [n for n in run.notes if n.startswith("the session's --thinking off is left out from now on: ")]
            assert run.session is not None and "thinking" not in run.session.context.run_settings
        with Run.open(store, settings=responses, resume=sid, env=env) as run:
            assert not [n for n in run.notes if "--thinking off" in n]
        with pytest.raises(SettingRefused, match="takes --thinking off only on"):
            Run.open(store, settings=RunSettings(api="responses", thinking="off"), resume=sid, env=env)
