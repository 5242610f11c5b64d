"""``tiny-agent.toml``: the user's file, then the workspace's, then the flags; ``config show`` says where
each value came from; a bad file is one line naming the file and the key."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.expect import one_line
from tiny_agent.agent.loop import Agent, RunResult
from tiny_agent.cli import main
from tiny_agent.cli.config_file import load_config
from tiny_agent.cli.runtime import Runtime

USER = """\
provider = "openai"
model = "gpt-4o-mini"
pins = ["answer in English"]
protect = ["secrets/**"]

[mcp.docs]
command = "python docs_server.py --root ."
timeout = 12

[[hooks.Stop]]
command = "notify-send done"
"""
WORKSPACE = """\
model = "gpt-4.1-mini"
pins = ["never edit dev.mjs"]
allow_read = [".env.example"]

[mcp.docs]
url = "https://docs.example/mcp"
headers = { Authorization = "Bearer ${DOCS_TOKEN}" }

[[hooks.PreToolUse]]
matcher = "write_file"
command = "python check.py"
timeout = 5
"""


@pytest.fixture
def files(tmp_path: Path, private_dirs: Path) -> tuple[Path, Path]:
    user = private_dirs / "xdg_config_home" / "tiny-agent" / "tiny-agent.toml"
    user.parent.mkdir(parents=True)
    user.write_text(USER)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "tiny-agent.toml").write_text(WORKSPACE)
    return user, workspace / "tiny-agent.toml"


def test_the_workspace_file_overrides_the_users_and_lists_add_up(files: tuple[Path, Path]) -> None:
    user, here = files
    config = load_config(here.parent)
    assert config.files == (user, here)
    settings = config.settings()
    assert (settings.provider, settings.model) == ("openai", "gpt-4.1-mini")
    assert settings.protect == ("secrets/**",) and settings.allow_read == (".env.example",)
    assert config.pins == ("answer in English", "never edit dev.mjs")
    assert config.sources["provider"] == str(user) and config.sources["model"] == str(here)
    assert config.sources["pins"] == f"{user} + {here}" and config.sources["mcp.docs"] == str(here)
    [docs] = config.servers(env={"DOCS_TOKEN": "tok-1234567890"})
    assert (docs.url, docs.command, dict(docs.headers)) == (
        "https://docs.example/mcp",
        (),
        {"Authorization": "Bearer tok-1234567890"},
    )
    assert [(h.event, h.matcher, h.timeout) for h in config.hooks()] == [
        ("Stop", None, 60.0),
        ("PreToolUse", "write_file", 5.0),
    ]


def test_config_show_says_where_each_value_came_from(
    files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    user, here = files
    assert main(["config", "show", "--workspace", str(here.parent)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[:2] == [f"# {user}", f"# {here}"]
    assert f'model = "gpt-4.1-mini"  # {here}' in out
    assert f'provider = "openai"  # {user}' in out
    assert f'pins = ["answer in English", "never edit dev.mjs"]  # {user} + {here}' in out
    assert any(line.startswith('mcp.docs = {"url": "https://docs.example/mcp"') for line in out)
    assert "${DOCS_TOKEN}" in "\n".join(out), "shown as written: the environment's value is not"
    assert main(["config", "show", "--workspace", str(here.parent), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["files"] == [str(user), str(here)] and shown["sources"]["allow_read"] == str(here)
    hook = {"matcher": "write_file", "command": "python check.py", "timeout": 5}
    assert shown["values"]["hooks"]["PreToolUse"] == [hook]


def test_config_show_with_no_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["config", "show", "--workspace", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert f"# {tmp_path / 'tiny-agent.toml'} (none)" in out and "no tiny-agent.toml sets anything" in out


def opened(monkeypatch: pytest.MonkeyPatch, workspace: Path, *flags: str) -> dict[str, Any]:
    """What a run the CLI opens in ``workspace`` is given; nothing is sent and no server is started."""
    seen: dict[str, Any] = {}

    def header(printer: object, runtime: Runtime) -> None:
        seen.update(
            provider=runtime.provider.profile.name,
            model=runtime.provider.profile.model,
            protect=runtime.workspace.protect,
            pins=runtime.context.pins,
        )

    monkeypatch.setattr("tiny_agent.cli.app._header", header)
    monkeypatch.setattr(Agent, "run", lambda self, task: RunResult("done", "ok", 1))
    monkeypatch.setattr("tiny_agent.cli.runtime._servers", lambda files, opts: [])
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-config-file")
    monkeypatch.chdir(workspace)
    assert main(["-q", *flags, "task"]) == 0
    return seen


def test_flags_override_the_files(files: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    _, here = files
    seen = opened(monkeypatch, here.parent)
    assert seen == {
        "provider": "openai",
        "model": "gpt-4.1-mini",
        "protect": ("secrets/**",),
        "pins": ["answer in English", "never edit dev.mjs"],
    }
    seen = opened(monkeypatch, here.parent, "--model", "gpt-4o", "--protect", "dist/**", "--pin", "be brief")
    assert seen["model"] == "gpt-4o" and seen["protect"] == ("secrets/**", "dist/**")
    assert seen["pins"][-1] == "be brief"
    seen = opened(monkeypatch, here.parent, "--no-config", "--no-session", "--provider", "openai")
    assert seen["model"] == "gpt-4o-mini" and seen["protect"] == () and seen["pins"] == []


@pytest.mark.parametrize(
    ("text", "fragments"),
    [
        ('model = "x"\nprovider = @\npins = []', ("not valid TOML", "line 2")),
        ('modle = "x"', ("modle: unknown key; did you mean 'model'? the keys are: provider, model",)),
        ("pins = 3", ("pins: must be a list of strings, not a number",)),
        ('provider = "antropic"', ("provider: 'antropic' is not one of: anthropic",)),
        ('[mcp.docs]\ncomand = "x"', ("mcp.docs.comand: unknown key; the keys are: command, url",)),
        ('[mcp.docs]\ncommand = "x"\nurl = "http://h/mcp"', ("mcp.docs: give a command (stdio) or a url",)),
        ('[mcp.docs]\ncommand = "x"\ntimeout = -1', ("mcp.docs.timeout: must be a number of seconds above 0",)),
        ('[mcp.docs]\nurl = "ftp://h"', ("mcp.docs: an MCP server's url must start with http:// or https://",)),
        ('[mcp.docs]\nurl = "https://h/mcp"\nheaders = { A = "${NOT_SET_ANYWHERE}" }', ("mcp.docs.headers.A",)),
        ('[[hooks.PreTool]]\ncommand = "x"', ("hooks.PreTool: unknown hook event; the events are: SessionStart",)),
        ("[[hooks.Stop]]\ntimeout = 3", ("hooks.Stop: a hook needs a command",)),
        ('show_thinking = "yes"', ("show_thinking: must be true or false, not 'yes'",)),
        ('allow_shell = "maybe"', ("allow_shell: must be true, false or one of 'ask', 'yes', 'off', not 'maybe'",)),
        ('[[hooks.Stop]]\ncommand = "x"\nmatcher = "["', ("hooks.Stop #1: the hook's matcher '[' is not a regular",)),
    ],
)
def test_a_bad_file_is_one_line_naming_the_file_and_the_key(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    text: str,
    fragments: tuple[str, ...],
) -> None:
    (tmp_path / "tiny-agent.toml").write_text(text)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-config-file")
    assert main(["--no-session", "--provider", "openai", "task"]) == 2
    line = one_line(capsys, *fragments)
    assert line.startswith(f"tiny-agent: {tmp_path / 'tiny-agent.toml'}: "), line


def test_the_users_file_is_named_too(private_dirs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    user = private_dirs / "xdg_config_home" / "tiny-agent" / "tiny-agent.toml"
    user.parent.mkdir(parents=True)
    user.write_text("pins = 'one'")
    assert main(["config", "show", "--workspace", str(tmp_path)]) == 2
    one_line(capsys, f"tiny-agent: {user}: pins: must be a list of strings, not a string")


def test_config_show_masks_what_a_server_is_given_literally(
    tmp_path: Path, private_dirs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "tiny-agent.toml").write_text(
        '[mcp.vault]\ncommand = "python vault.py"\nenv = { API_TOKEN = "literal-secret-123", HOME_DIR = "${HOME}" }\n'
        '[mcp.web]\nurl = "https://x.example/mcp"\nheaders = { X-Api-Key = "hardcoded-key-456" }\n'
    )
    for json_flag in ([], ["--json"]):
        assert main(["config", "show", "--workspace", str(tmp_path), *json_flag]) == 0
        out = capsys.readouterr().out
        assert "literal-secret-123" not in out and "hardcoded-key-456" not in out and "***" in out
        assert "${HOME}" in out, "a reference to the environment holds no secret"


def test_a_flag_for_a_server_a_file_names_replaces_it_and_keeps_its_name(tmp_path: Path, private_dirs: Path) -> None:
    from tiny_agent.cli.runtime import _servers

    (tmp_path / "tiny-agent.toml").write_text(
        '[mcp.glossary]\ncommand = "python glossary_server.py"\n[mcp.other]\ncommand = "python other.py"\n'
    )
    files = load_config(tmp_path)
    servers = _servers(files, {"mcp": ("python glossary_server.py",), "mcp_url": (), "mcp_timeout": 7})
    assert [(s.name, s.command, s.timeout) for s in servers] == [
        ("other", ("python", "other.py"), 7),
        ("glossary", ("python", "glossary_server.py"), 7),
    ], "started once, under the file's name, with the flag's settings"


def test_config_show_hides_credentials_in_urls(
    tmp_path: Path, private_dirs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 30, finding 7: ``https://u:p@host`` and ``?api_key=`` were printed as written."""
    (tmp_path / "tiny-agent.toml").write_text(
        'base_url = "https://alice:hunter2-pass@proxy.example/v1?api_key=sk-query-secret-789"\n'
        '[mcp.web]\nurl = "https://bob:mcp-pass-321@x.example/mcp?token=tok-in-query-654"\n'
    )
    for json_flag in ([], ["--json"]):
        assert main(["config", "show", "--workspace", str(tmp_path), *json_flag]) == 0
        out = capsys.readouterr().out
        for secret in ("hunter2-pass", "sk-query-secret-789", "mcp-pass-321", "tok-in-query-654"):
            assert secret not in out, (secret, out)
        assert "proxy.example" in out and "x.example/mcp" in out, "the rest of the URL is still shown"


def test_stored_settings_hide_url_credentials() -> None:
    from tiny_agent.context.entries import ConfigChange
    from tiny_agent.context.entry_codec import encode

    _kind, body = encode(ConfigChange({"base_url": "https://u:pw-secret-1@h.example/v1?api_key=k-secret-22"}))
    assert "pw-secret-1" not in json.dumps(body) and "k-secret-22" not in json.dumps(body)


def test_every_run_option_has_a_config_key(tmp_path: Path, private_dirs: Path) -> None:
    """The keys come from the run command's own options: a new flag is a new key, or it is named
    in ``NOT_IN_FILES`` on purpose; each is checked by the option's own type."""
    import click

    from tiny_agent.cli.app import run_command
    from tiny_agent.cli.run_keys import NOT_IN_FILES, run_option_keys

    options = [p for p in run_command.params if isinstance(p, click.Option) and p.name]
    assert {p.name for p in options} - NOT_IN_FILES == set(run_option_keys())
    for option in options:
        if option.name in NOT_IN_FILES or option.multiple:
            continue
        if option.is_flag:
            sample: Any = True
        elif isinstance(option.type, click.Choice):
            sample = option.type.choices[0]
        elif option.type.name in ("integer", "N", "n"):
            sample = 3
        else:
            sample = {"compact_at": 0.5, "budget_usd": 1.5, "timeout": 30, "policy": "cost", "thinking": 4096}.get(
                option.name, 3
            )
        (tmp_path / "tiny-agent.toml").write_text(f"{option.name} = {json.dumps(sample)}\n")
        try:
            assert option.name in load_config(tmp_path).values, option.name
        except Exception as exc:  # a number where the option takes text: try text
            (tmp_path / "tiny-agent.toml").write_text(f'{option.name} = "x"\n')
            assert option.name in load_config(tmp_path).values, (option.name, exc)


def test_a_run_setting_from_the_file_applies_and_a_flag_replaces_it(
    tmp_path: Path, private_dirs: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from tiny_agent.testing import ScriptedProvider, tool_call
    from tiny_agent.types import Message

    (tmp_path / "notes.txt").write_text("milk\n")
    (tmp_path / "tiny-agent.toml").write_text("max_steps = 1\n")
    monkeypatch.chdir(tmp_path)
    made: list[ScriptedProvider] = []

    def resolve(name: str | None, **kwargs: Any) -> ScriptedProvider:
        replies = [tool_call("read_file", f"c{i}", path="notes.txt") for i in range(3)] + [Message.assistant("ok")]
        made.append(ScriptedProvider(replies, model="scripted-model", name=name or "scripted"))
        return made[-1]

    monkeypatch.setattr("tiny_agent.agent.parts.resolve_provider", resolve)
    assert main(["--no-session", "read notes"]) == 3, "the file's max_steps = 1 stopped it"
    assert "step limit (1 steps)" in capsys.readouterr().err
    assert main(["--no-session", "--max-steps", "9", "read notes"]) == 0, "the flag replaces the file's value"
    capsys.readouterr()
    (tmp_path / "tiny-agent.toml").write_text('max_steps = "many"\n')
    assert main(["--no-session", "read notes"]) == 2
    err = capsys.readouterr().err.strip()
    assert "tiny-agent.toml: max_steps:" in err and len(err.splitlines()) == 1
    (tmp_path / "tiny-agent.toml").write_text("max_steps = 1\ncompact_at = 0.6\n")
    monkeypatch.setenv("TINY_AGENT_STORE", str(tmp_path / "env.db"))
    assert main(["config", "show"]) == 0
    shown = capsys.readouterr().out
    assert f"max_steps = 1  # workspace config {tmp_path / 'tiny-agent.toml'}" in shown
    assert f'store = "{tmp_path / "env.db"}"  # environment TINY_AGENT_STORE' in shown
    assert "keep_turns = null  # default" in shown
