"""Issue 27: every thinking setting is honoured or refused. The toml keys work like the flags (a flag
beats the file); a setting the model does not take is one line before any call, exit status 2, from
the command line and from the library alike."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tiny_agent.agent.run import Run
from tiny_agent.agent.settings import RunSettings
from tiny_agent.cli.app import main
from tiny_agent.errors import ConfigError
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.testing import BillingFake, Task
from tiny_agent.testing.thinking_server import ThinkingRules

NOWHERE = "http://127.0.0.1:9"
"""Nothing listens there: a setting that got past the checks would fail with another line."""
KEYS = {"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k", "DEEPSEEK_API_KEY": "k", "MOONSHOT_API_KEY": "k"}


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch, private_dirs: Path) -> None:
    for name, value in KEYS.items():
        monkeypatch.setenv(name, value)


def one_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip()
    assert "\n" not in err, err
    return err


def thinking_run(
    tmp_path: Path, fake: BillingFake, route: str, *flags: str, model: str = "claude-sonnet-5"
) -> list[str]:
    url = fake.url(route, "anthropic")
    return ["--provider", "anthropic", "--model", model, "--base-url", url, *flags,
            "--workspace", str(tmp_path), "please read a"]  # fmt: skip


def test_the_files_thinking_keys_reach_the_run_and_a_flag_beats_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], keys: None, private_dirs: Path
) -> None:
    (tmp_path / "a.txt").write_text("alpha " * 50)
    (tmp_path / "tiny-agent.toml").write_text('thinking = 4096\neffort = "low"\n')
    task = Task("read a", [[("read_file", {"path": "a.txt"})]], "Read.")
    store = private_dirs / "sessions.db"
    with BillingFake([task, task], thinking=ThinkingRules(words=80)) as fake:
        # A model that takes a budget and does not think unasked: the file's 4096 is what turns it on.
        assert main(thinking_run(tmp_path, fake, "file", model="claude-sonnet-4-6")) == 0
        assert "(thinking " in capsys.readouterr().err, "the turn line shows the thinking the file asked for"
        flags = ("--thinking", "off", "--no-session")
        assert main(thinking_run(tmp_path, fake, "flag", *flags, model="claude-sonnet-4-6")) == 0
        assert "(thinking " not in capsys.readouterr().err, "--thinking off beats the file's 4096"
    with SQLiteStore(store) as opened:
        (info,) = opened.sessions()
        runs = [e.body["settings"] for e in opened.entries(info.id, kinds=("run", "config"))]
    assert any(r.get("thinking") == "4096" and r.get("effort") == "low" for r in runs), runs


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("thinking = 500", "thinking: --thinking 500: the budget must be at least 1024 tokens"),
        ('thinking = "lots"', "thinking: --thinking takes off, adaptive or a token budget"),
        ("thinking = true", 'thinking: must be "off", "adaptive" or a token budget like 4096, not true'),
        ('effort = "extreme"', "effort: "),
    ],
)
def test_a_bad_thinking_value_in_the_file_is_one_line_naming_the_file_and_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], keys: None, text: str, line: str
) -> None:
    (tmp_path / "tiny-agent.toml").write_text(f"{text}\n")
    argv = ["--provider", "anthropic", "--base-url", NOWHERE, "--no-session", "--workspace", str(tmp_path), "hi"]
    assert main(argv) == 2
    assert one_line(capsys).startswith(f"tiny-agent: {tmp_path / 'tiny-agent.toml'}: {line}")


@pytest.mark.parametrize(
    ("provider", "line"),
    [
        ("anthropic", "claude-sonnet-4-6: the server compacts at 50,000 input tokens at the least, not 1,000"),
        ("deepseek", "--server-compact-at works only with --provider anthropic or --provider openai --api responses"),
    ],
)
def test_the_files_server_compact_at_is_checked_like_the_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], keys: None, provider: str, line: str
) -> None:
    (tmp_path / "tiny-agent.toml").write_text("server_compact_at = 1000\n")
    argv = ["--provider", provider, "--base-url", NOWHERE, "--no-session", "--workspace", str(tmp_path), "hi"]
    assert main(argv) == 2
    assert one_line(capsys).startswith(f"tiny-agent: {line}")


@pytest.mark.parametrize(
    ("text", "flags", "said"),
    [
        ("thinking = 4096", ["--provider", "deepseek"], "thinking = 4096"),
        ('effort = "max"', ["--provider", "openai", "--api", "responses", "--model", "gpt-5.6"], 'effort = "max"'),
        ("server_compact_at = 1000", ["--provider", "deepseek"], "server_compact_at = 1000"),
        (
            'thinking_binding = "drop_block"',
            ["--provider", "anthropic", "--model", "claude-sonnet-4-5"],
            'thinking_binding = "drop_block"',
        ),
        (
            'thinking_display = "omitted"',
            ["--provider", "anthropic", "--model", "claude-sonnet-4-6"],
            'thinking_display = "omitted"',
        ),
        ("thinking = 4096", ["--provider", "anthropic", "--model", "claude-sonnet-5"], "thinking = 4096"),
        ('thinking = "off"', ["--provider", "anthropic", "--model", "claude-opus-5-5"], 'thinking = "off"'),
    ],
)
def test_a_refused_setting_from_the_file_names_the_file_and_its_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], keys: None, text: str, flags: list[str], said: str
) -> None:
    (tmp_path / "tiny-agent.toml").write_text(f"{text}\n")
    assert main([*flags, "--base-url", NOWHERE, "--no-session", "--workspace", str(tmp_path), "hi"]) == 2
    assert one_line(capsys).endswith(f"(set by {said} in {tmp_path / 'tiny-agent.toml'})")


def test_a_refused_flag_is_named_as_the_flag_even_where_a_file_sets_other_keys(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], keys: None
) -> None:
    (tmp_path / "tiny-agent.toml").write_text('thinking = "adaptive"\n')
    argv = ["--provider", "deepseek", "--thinking", "2048", "--base-url", NOWHERE, "--no-session"]
    assert main([*argv, "--workspace", str(tmp_path), "hi"]) == 2
    assert "set by" not in one_line(capsys)


def test_a_files_key_is_named_only_for_the_refusal_it_caused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], keys: None
) -> None:
    """The file's display is not what DeepSeek refused: the budget given as a flag is."""
    (tmp_path / "tiny-agent.toml").write_text('thinking_display = "omitted"\n')
    argv = ["--provider", "deepseek", "--thinking", "2048", "--base-url", NOWHERE, "--no-session"]
    assert main([*argv, "--workspace", str(tmp_path), "hi"]) == 2
    line = one_line(capsys)
    assert line.startswith("tiny-agent: deepseek-v4-flash does not take a thinking budget"), line
    assert "set by" not in line


LOCAL = ["--provider", "local", "--base-url", NOWHERE]
RESPONSES = ["--provider", "openai", "--api", "responses", "--model", "gpt-5.6", "--base-url", NOWHERE]
ONLY = "--server-compact-at works only with --provider anthropic or --provider openai --api responses"
CLAUDE_OVER_OPENAI = ["--provider", "openai", "--model", "claude-sonnet-5", "--base-url", NOWHERE]
SONNET_5 = ["--provider", "anthropic", "--model", "claude-sonnet-5", "--base-url", NOWHERE]
SONNET_4_6 = ["--provider", "anthropic", "--model", "claude-sonnet-4-6", "--base-url", NOWHERE]
"""Claude 4.6 does not think unasked: a display or a binding without ``--thinking`` shapes nothing."""
HAIKU_3_5 = ["--provider", "anthropic", "--model", "claude-3-5-haiku", "--base-url", NOWHERE]
DS_RESPONSES = ["--provider", "openai", "--api", "responses", "--base-url", NOWHERE]
"""A model that thinks by default, served where tiny-agent sends it no reasoning settings: ``--thinking
off`` would change what it does, so it is refused there like ``--thinking adaptive``."""
ON = "needs thinking on: add --thinking adaptive or --thinking N"
REFUSED = [
    ([*LOCAL, "--thinking", "2048"], "the local model does not think: leave out --thinking 2048"),
    ([*LOCAL, "--thinking", "adaptive"], "the local model does not think: leave out --thinking adaptive"),
    ([*LOCAL, "--effort", "high"], "the local model does not think: leave out --effort high"),
    ([*LOCAL, "--thinking-display", "omitted"], "the local model does not think: leave out --thinking-display omitted"),
    ([*HAIKU_3_5, "--thinking", "adaptive"], "claude-3-5-haiku does not think: leave out --thinking adaptive"),
    ([*HAIKU_3_5, "--thinking", "2048"], "claude-3-5-haiku does not think: leave out --thinking 2048"),
    (
        ["--provider", "openai", "--model", "gpt-4o-mini", "--thinking", "adaptive"],
        "gpt-4o-mini does not think: leave out --thinking adaptive",
    ),
    ([*LOCAL, "--server-compact-at", "60000"], "--server-compact-at works only with"),
    ([*RESPONSES, "--thinking", "2048"], "gpt-5.6 reasons by itself: leave out --thinking 2048; --effort low|"),
    (
        [*CLAUDE_OVER_OPENAI, "--thinking", "2048"],
        "claude-sonnet-5 takes --thinking 2048 only on the Messages API (--provider anthropic): tiny-agent sends "
        "no reasoning settings over this API",
    ),
    (
        [*CLAUDE_OVER_OPENAI, "--thinking-binding", "drop_block"],
        "claude-sonnet-5 takes --thinking-binding drop_block only on the Messages API (--provider anthropic): ",
    ),
    ([*CLAUDE_OVER_OPENAI, "--effort", "low"], "claude-sonnet-5 takes --effort low only on the Messages API"),
    # It thinks unasked there too: an off that is never sent would change nothing.
    ([*CLAUDE_OVER_OPENAI, "--thinking", "off"], "claude-sonnet-5 takes --thinking off only on the Messages API"),
    ([*SONNET_4_6, "--thinking-display", "omitted"], f"--thinking-display omitted {ON}"),
    (
        [*SONNET_4_6, "--thinking-binding", "drop_block"],
        "claude-sonnet-4-6 has no preserved thinking, whose blocks are bound to their prefix: leave out "
        "--thinking-binding drop_block",
    ),
    (
        ["--provider", "anthropic", "--model", "claude-opus-4-7", "--thinking-display", "omitted"],
        "--thinking-display omitted needs thinking on: add --thinking adaptive",
    ),
    (
        [*SONNET_5, "--thinking", "2048"],
        "claude-sonnet-5 does not take a thinking budget (use --thinking adaptive; --effort low|medium|high|xhigh|max "
        "sets how much it thinks)",
    ),
    (
        ["--provider", "anthropic", "--model", "claude-opus-4-7", "--thinking", "2048"],
        "claude-opus-4-7 does not take a thinking budget (use --thinking adaptive; --effort low|medium|high|xhigh|max "
        "sets how much it thinks)",
    ),
    (
        ["--provider", "anthropic", "--model", "claude-opus-5-5", "--thinking", "off"],
        "claude-opus-5-5 always thinks (its API refuses thinking off): leave out --thinking off; --effort low thinks "
        "least",
    ),
    (
        ["--provider", "anthropic", "--model", "claude-fable-5", "--thinking", "off"],
        "claude-fable-5 always thinks (its API refuses thinking off): leave out --thinking off",
    ),
    (
        ["--provider", "anthropic", "--model", "claude-sonnet-4-5", "--thinking-display", "summarized"],
        "--thinking-display summarized needs thinking on: add --thinking N (N >= 1024)",
    ),
    (
        [*SONNET_5, "--thinking", "off", "--thinking-binding", "drop_block"],
        "--thinking off binds no thinking blocks: leave out --thinking-binding drop_block",
    ),
    (
        ["--provider", "anthropic", "--model", "claude-sonnet-4-5", "--thinking", "2048", "--effort", "low"],
        "claude-sonnet-4-5 has no reasoning effort: leave out --effort low",
    ),
    ([*RESPONSES, "--thinking-display", "omitted"], "gpt-5.6 does not take --thinking-display: leave out"),
    ([*RESPONSES, "--effort", "max"], "gpt-5.6 does not take --effort max (it takes: low, medium, high, xhigh)"),
    (
        ["--provider", "deepseek", "--effort", "medium"],
        "deepseek-v4-flash does not take --effort medium (it takes: low, high, max); its API would read medium as "
        "high: give --effort high",
    ),
    (
        ["--provider", "deepseek", "--thinking", "off", "--effort", "high"],
        "--thinking off spends no reasoning effort on deepseek-v4-flash: leave out --effort high",
    ),
    (
        ["--provider", "anthropic", "--model", "claude-sonnet-4-5", "--thinking", "200000"],
        "claude-sonnet-4-5 writes at most 64,000 output tokens a reply, its thinking included: give a budget below "
        "that (--thinking N with N < 64,000)",
    ),
    (
        ["--provider", "anthropic", "--model", "claude-sonnet-4-5", "--context-window", "30000", "--thinking", "30000"],
        "--thinking 30000 with the answer's room (max_tokens 34,096) leaves no room for a request",
    ),
    (
        ["--provider", "deepseek", "--thinking-binding", "drop_block"],
        "deepseek-v4-flash has no preserved thinking, whose blocks are bound to their prefix: leave out "
        "--thinking-binding drop_block",
    ),
    (["--provider", "moonshot", "--effort", "high"], "kimi-k2.6 does not take --effort: its API refuses"),
    (["--provider", "deepseek", "--thinking", "2048"], "deepseek-v4-flash does not take a thinking budget: it thinks"),
    (["--provider", "moonshot", "--thinking", "2048"], "kimi-k2.6 does not take a thinking budget: it thinks"),
    (["--provider", "deepseek", "--server-compact-at", "60000"], "--server-compact-at works only with"),
    (
        ["--provider", "openai", "--api", "chat", "--server-compact-at", "60000"],
        f"{ONLY}: openai over Chat Completions",
    ),
    (["--provider", "anthropic", "--thinking", "off", "--thinking-display", "omitted"], "--thinking off shows no"),
    (
        [*DS_RESPONSES, "--model", "deepseek-v4-flash", "--thinking", "off"],
        "deepseek-v4-flash takes --thinking off only on Chat Completions (--provider deepseek) and the Messages "
        "wire: tiny-agent sends no reasoning settings over this API",
    ),
    (
        [*DS_RESPONSES, "--model", "kimi-k2.6", "--thinking", "off"],
        "kimi-k2.6 takes --thinking off only on Chat Completions (--provider moonshot): tiny-agent sends",
    ),
    (
        ["--provider", "anthropic", "--model", "kimi-k2.6", "--thinking", "off"],
        "kimi-k2.6 takes --thinking off only on Chat Completions (--provider moonshot): tiny-agent sends",
    ),
]


@pytest.mark.parametrize(("flags", "line"), REFUSED)
def test_a_setting_the_model_does_not_take_is_refused_before_any_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], keys: None, flags: list[str], line: str
) -> None:
    assert main([*flags, "--no-session", "--workspace", str(tmp_path), "hi"]) == 2
    assert one_line(capsys).startswith(f"tiny-agent: {line}")


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"provider": "local", "thinking": "2048"}, "the local model does not think"),
        ({"provider": "anthropic", "model": "claude-sonnet-4-6", "thinking_display": "omitted"}, "needs thinking on"),
        (
            {"provider": "anthropic", "model": "claude-opus-4-7", "thinking_display": "omitted"},
            "add --thinking adaptive$",
        ),
        (
            {"provider": "anthropic", "model": "claude-sonnet-5", "thinking": "2048"},
            "claude-sonnet-5 does not take a thinking budget",
        ),
        (
            {"provider": "anthropic", "model": "claude-fable-5-1", "thinking": "off"},
            "claude-fable-5-1 always thinks",
        ),
        ({"provider": "moonshot", "effort": "high"}, "kimi-k2.6 does not take --effort"),
        ({"provider": "deepseek", "server_compact_at": 60000}, "--server-compact-at works only with"),
        ({"provider": "openai", "api": "responses", "model": "gpt-5.6", "effort": "max"}, "gpt-5.6 does not take"),
        (
            {"provider": "openai", "api": "responses", "model": "deepseek-v4-pro", "thinking": "off"},
            "deepseek-v4-pro takes --thinking off only on Chat Completions",
        ),
        ({"provider": "anthropic", "model": "kimi-k2.6", "thinking": "off"}, "kimi-k2.6 takes --thinking off only"),
    ],
)
def test_the_library_refuses_the_same_settings_before_any_call(
    tmp_path: Path, keys: None, settings: dict[str, Any], message: str
) -> None:
    spec = RunSettings(workspace=str(tmp_path), base_url=NOWHERE, **settings)
    with pytest.raises(ConfigError, match=message):
        Run.open(None, settings=spec)


ANTHROPIC_SERVER = {"provider": "anthropic", "model": "claude-sonnet-4-6"}
RESPONSES_SERVER = {"provider": "openai", "api": "responses", "model": "gpt-5"}


@pytest.mark.parametrize(
    ("where", "value", "line"),
    [
        (ANTHROPIC_SERVER, "60000", "--server-compact-at expects a whole number of input tokens, not '60000'"),
        (ANTHROPIC_SERVER, 150000.0, "--server-compact-at expects a whole number of input tokens, not 150000.0"),
        (ANTHROPIC_SERVER, True, "--server-compact-at expects a whole number of input tokens, not True"),
        (RESPONSES_SERVER, "1000", "--server-compact-at expects a whole number of input tokens, not '1000'"),
        (RESPONSES_SERVER, 2.5, "--server-compact-at expects a whole number of input tokens, not 2.5"),
        (RESPONSES_SERVER, True, "--server-compact-at expects a whole number of input tokens, not True"),
        (RESPONSES_SERVER, 0, "--server-compact-at must be at least 1 input token, not 0"),
    ],
)
def test_the_librarys_server_compact_at_of_a_wrong_type_is_one_line_before_any_call(
    tmp_path: Path, keys: None, where: dict[str, str], value: object, line: str
) -> None:
    """The command line and the file take a whole number only: the library's ``RunSettings`` and
    ``resolve_provider`` alike (a str was a bare TypeError, a float or a bool was sent as it was)."""
    from tiny_agent.providers.registry import resolve_provider

    spec = RunSettings(workspace=str(tmp_path), base_url=NOWHERE, server_compact_at=value, **where)  # type: ignore[arg-type]
    with pytest.raises(ConfigError) as raised:
        Run.open(None, settings=spec)
    assert str(raised.value) == line
    options = {"api": where["api"]} if "api" in where else {}
    with pytest.raises(ConfigError, match=r"^--server-compact-at"):
        resolve_provider(where["provider"], model=where["model"], base_url=NOWHERE, compact_threshold=value, **options)


def test_what_each_model_takes_still_runs_where_it_is_declared(tmp_path: Path, keys: None) -> None:
    """The refusals are the model's, not blanket: what the caps declare opens (no call is made)."""
    for settings in (
        {"provider": "deepseek", "thinking": "adaptive", "effort": "max"},
        {"provider": "moonshot", "thinking": "off"},
        {"provider": "openai", "api": "responses", "model": "gpt-5.6", "effort": "high", "server_compact_at": 60000},
        {"provider": "anthropic", "thinking": "adaptive", "thinking_display": "omitted", "effort": "max"},
        {"provider": "anthropic", "effort": "low"},  # Claude's effort goes out without thinking too
        {"provider": "anthropic", "thinking_binding": "strict"},  # the API's own default: nothing to drop
        {"provider": "anthropic", "model": "claude-3-5-haiku", "thinking": "off"},
        {"provider": "openai", "model": "claude-sonnet-4-6", "thinking": "off"},
        # The Claude 5 models think unasked: a display and a binding shape that thinking.
        {"provider": "anthropic", "model": "claude-sonnet-5", "thinking_display": "omitted"},
        {"provider": "anthropic", "model": "claude-sonnet-5", "thinking_binding": "drop_block"},
        {"provider": "anthropic", "model": "claude-opus-5-5", "thinking_display": "omitted"},
        {"provider": "anthropic", "model": "claude-fable-5-1", "thinking_display": "summarized", "effort": "xhigh"},
        {"provider": "anthropic", "model": "claude-sonnet-5", "thinking": "off"},
        {"provider": "anthropic", "model": "claude-sonnet-4-6", "thinking": "2048"},
    ):
        with Run.open(None, settings=RunSettings(workspace=str(tmp_path), base_url=NOWHERE, **settings)) as run:
            assert run.provider.profile.model


def test_thinking_off_given_leaves_out_the_files_display_and_effort(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], keys: None, private_dirs: Path
) -> None:
    (tmp_path / "a.txt").write_text("alpha " * 50)
    (tmp_path / "tiny-agent.toml").write_text('thinking = 4096\nthinking_display = "omitted"\neffort = "low"\n')
    task = Task("read a", [[("read_file", {"path": "a.txt"})]], "Read.")
    with BillingFake([task], thinking=ThinkingRules()) as fake:
        assert main(thinking_run(tmp_path, fake, "off", "--thinking", "off", "--no-session")) == 0
        bodies = [b.body for b in fake.bills("off")]
    err = capsys.readouterr().err
    assert f'tiny-agent: --thinking off leaves out effort = "low" of {tmp_path / "tiny-agent.toml"}' in err
    assert all(b["thinking"] == {"type": "disabled"} and "output_config" not in b for b in bodies), bodies


def test_the_thinking_binding_flag_and_key_send_drop_block(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], keys: None, private_dirs: Path
) -> None:
    (tmp_path / "a.txt").write_text("alpha " * 50)
    task = Task("read a", [[("read_file", {"path": "a.txt"})]], "Read.")
    rules = ThinkingRules()
    with BillingFake([task, task, task], thinking=rules) as fake:
        flags = ("--thinking", "adaptive", "--no-session")
        assert main(thinking_run(tmp_path, fake, "flag", *flags, "--thinking-binding", "drop_block")) == 0
        (tmp_path / "tiny-agent.toml").write_text('thinking_binding = "drop_block"\n')
        assert main(thinking_run(tmp_path, fake, "file", *flags)) == 0
        # Claude 5 thinks unasked: the binding alone shapes that thinking, sent as adaptive.
        assert main(thinking_run(tmp_path, fake, "unasked", "--no-session")) == 0
        bodies = [b.body for route in ("flag", "file", "unasked") for b in fake.bills(route)]
        unasked = [b.body for b in fake.bills("unasked")]
    assert rules.rejected == []
    binding = {"prefix_mismatch_behavior": "drop_block"}
    assert bodies and all(b["thinking"].get("block_binding") == binding for b in bodies), bodies
    assert unasked and all(b["thinking"]["type"] == "adaptive" for b in unasked), unasked


def test_the_configuration_page_gives_what_each_wire_takes_for_server_compaction() -> None:
    """The Responses API takes any positive threshold, Anthropic one of at least its smallest trigger:
    the page and ``--help`` say so per wire (they gave Anthropic's minimum for both)."""
    import click

    from tiny_agent.cli.app import run_command
    from tiny_agent.providers.anthropic.compaction import MIN_TRIGGER, checked_trigger
    from tiny_agent.providers.settings_check import check_settings

    check_settings("openai", "responses", "gpt-5.6", {"compact_threshold": 1000})
    with pytest.raises(ConfigError):
        checked_trigger(MIN_TRIGGER - 1, "claude-sonnet-4-6")
    page = (Path(__file__).resolve().parents[1] / "docs" / "configuration.md").read_text()
    row = next(line for line in page.splitlines() if line.startswith("| `--server-compact-at`"))
    assert "Responses API any positive count" in row and f"Anthropic at least {MIN_TRIGGER:,}" in row
    (option,) = [p for p in run_command.params if isinstance(p, click.Option) and "--server-compact-at" in p.opts]
    assert "Responses API: any count" in (option.help or "") and f"Anthropic: at least {MIN_TRIGGER:,}" in (
        option.help or ""
    )


def test_the_configuration_page_quotes_the_set_by_suffix_as_it_is_printed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], keys: None
) -> None:
    """The line names the file by its absolute path (a user file and a project's file can both be
    named tiny-agent.toml): the page quotes it so, not as ``./tiny-agent.toml``."""
    import re

    page = (Path(__file__).resolve().parents[1] / "docs" / "configuration.md").read_text()
    quoted = re.search(r"`(\(set by thinking = 4096 in (/[^`()]*)/tiny-agent\.toml\))`", page)
    assert quoted is not None, "the page quotes the suffix with the file's absolute path"
    (tmp_path / "tiny-agent.toml").write_text("thinking = 4096\n")
    argv = ["--provider", "deepseek", "--base-url", NOWHERE, "--no-session", "--workspace", str(tmp_path), "hi"]
    assert main(argv) == 2
    assert one_line(capsys).endswith(quoted[1].replace(quoted[2], str(tmp_path)))


@pytest.mark.parametrize(
    ("provider", "model", "says"),
    [
        ("anthropic", "fable", "tiny-agent declares no thinking for the model id fable, so it sends it no"),
        ("moonshot", "kimi-k2-thinking", "kimi-k2-thinking was discontinued in 2026: name a model served today"),
        ("openai", "gpt-4.1", "gpt-4.1 does not think: leave out --thinking adaptive"),
    ],
)
def test_a_model_that_takes_no_thinking_says_why(
    provider: str, model: str, says: str, capsys: pytest.CaptureFixture[str], keys: None
) -> None:
    """A short name or a typo is not called a model that does not think; a discontinued id names its successor."""
    argv = ["--provider", provider, "--model", model, "--base-url", NOWHERE, "--thinking", "adaptive", "hi"]
    assert main(argv) == 2
    line = one_line(capsys)
    assert line.startswith(f"tiny-agent: {says}"), line
