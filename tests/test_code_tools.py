"""edit_file, search and shell: the refusals of edit_file (missing, non-unique, protected, outside, secret),
its diff and the encoding and line endings it keeps; search's order, bounds and .gitignore; the shell's
approval, timeout, output cap, scrubbed environment and default off; each tool called by a scripted task
through the billing fake on both wires; and the local model's grammar with them on offer."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.mcp_servers import kit
from tests.mcp_servers.kit import Cli
from tests.recorded import ENV, MODELS
from tiny_agent import Run, RunSettings
from tiny_agent.cli import main, runtime
from tiny_agent.guide.json_guide import UNGUIDED, guide
from tiny_agent.providers.openai.json_tools import response_format
from tiny_agent.redaction import register_secret
from tiny_agent.testing import BillingFake, Task
from tiny_agent.tools.search import MAX_LINE_CHARS, MAX_MATCHES
from tiny_agent.tools.shell import clean_environment, shell_tool
from tiny_agent.tools.toolbox import Toolbox, ToolFailure
from tiny_agent.tools.workspace import Workspace
from tiny_agent.types import CachePlan, Message, Prompt, ToolUseBlock

TASKS = [
    Task("fix the greeting", [[("edit_file", {"path": "a.py", "old_string": "helo", "new_string": "hello"})]], "Ok."),
    Task("find the todos", [[("search", {"pattern": "TODO"})]], "Found."),
    Task("run the tests", [[("shell", {"command": "echo ran; echo $ANTHROPIC_API_KEY"})]], "Ran."),
]


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    root = tmp_path / "ws"
    root.mkdir()
    return Workspace(root, protect=["dev.mjs"])


def call(ws: Workspace, name: str, **arguments: object) -> tuple[bool, str]:
    result = Toolbox(ws.tools()).run(ToolUseBlock("t1", name, arguments))
    return result.is_error, result.content


# -- edit_file ------------------------------------------------------------------------------------


def test_an_edit_shows_its_diff_and_writes_once(ws: Workspace) -> None:
    (ws.root / "a.py").write_text("def greet():\n    print('helo')\n")
    failed, out = call(ws, "edit_file", path="a.py", old_string="helo", new_string="hello")
    assert not failed
    assert out.splitlines()[0] == "edited a.py: 1 replacement(s)"
    assert "--- a/a.py\n+++ b/a.py\n" in out and "-    print('helo')\n+    print('hello')" in out
    assert (ws.root / "a.py").read_text() == "def greet():\n    print('hello')\n"


@pytest.mark.parametrize(
    ("path", "old", "fragment"),
    [
        ("a.py", "absent", "old_string was not found in a.py; it must match exactly"),
        ("a.py", "x = 1", "old_string occurs 3 times in a.py (lines 1, 3, 5); include more of the text"),
        ("missing.py", "x", "no such file: missing.py; to create it, use write_file"),
        ("../outside.py", "x", "is outside the workspace"),
        ("dev.mjs", "x", "refused: dev.mjs is protected (--protect dev.mjs)"),
        (".git/config", "x", "refused: .git/config is protected by default"),
        (".env", "KEY", "refused: .env looks like a secret"),
        ("a.py", "", "old_string: '' should be non-empty"),
    ],
)
def test_edit_refusals(ws: Workspace, path: str, old: str, fragment: str) -> None:
    (ws.root / "a.py").write_text("x = 1\ny = 2\nx = 1\nz = 3\nx = 1\n")
    (ws.root / "dev.mjs").write_text("x\n")
    (ws.root / ".git").mkdir()
    (ws.root / ".git" / "config").write_text("x\n")
    (ws.root / ".env").write_text("KEY=1\n")
    (ws.root.parent / "outside.py").write_text("x\n")
    before = {p: p.read_bytes() for p in ws.root.rglob("*") if p.is_file()}
    failed, out = call(ws, "edit_file", path=path, old_string=old, new_string="changed")
    assert failed and fragment in out, out
    assert {p: p.read_bytes() for p in ws.root.rglob("*") if p.is_file()} == before, "nothing changed"
    assert (ws.root.parent / "outside.py").read_text() == "x\n"


def test_replace_all_changes_every_one(ws: Workspace) -> None:
    (ws.root / "a.py").write_text("x = 1\ny = 2\nx = 1\n")
    failed, out = call(ws, "edit_file", path="a.py", old_string="x = 1", new_string="x = 9", replace_all=True)
    assert not failed and out.startswith("edited a.py: 2 replacement(s)")
    assert (ws.root / "a.py").read_text() == "x = 9\ny = 2\nx = 9\n"


def test_crlf_and_latin1_are_kept(ws: Workspace) -> None:
    (ws.root / "win.txt").write_bytes(b"first line\r\nsecond line\r\n")
    failed, out = call(ws, "edit_file", path="win.txt", old_string="first line\nsecond", new_string="one\ntwo")
    assert not failed and "(kept CRLF line endings)" in out
    assert (ws.root / "win.txt").read_bytes() == b"one\r\ntwo line\r\n"
    (ws.root / "latin.txt").write_bytes("caf\xe9 cr\xe8me\n".encode("latin-1"))
    failed, out = call(ws, "edit_file", path="latin.txt", old_string="crème", new_string="brûlée")
    assert not failed and "(kept cp1252)" in out and "+café brûlée" in out
    assert (ws.root / "latin.txt").read_bytes() == "café brûlée\n".encode("cp1252")
    failed, out = call(ws, "edit_file", path="latin.txt", old_string="café", new_string="咖啡")
    assert failed and "is cp1252 text, which cannot hold '咖啡'" in out
    assert (ws.root / "latin.txt").read_bytes() == "café brûlée\n".encode("cp1252")


# -- search ---------------------------------------------------------------------------------------


def test_search_sorts_and_respects_gitignore(ws: Workspace) -> None:
    root = ws.root
    (root / "src" / "deep").mkdir(parents=True)
    (root / "build").mkdir()
    (root / "node_modules").mkdir()
    (root / ".gitignore").write_text("build/\n*.log\n")
    (root / "src" / ".gitignore").write_text("generated.py\n")
    (root / "b.py").write_text("x\n# TODO two\n")
    (root / "a.py").write_text("# TODO one\n")
    (root / "src" / "deep" / "c.py").write_text("ok\nok\n# todo lower\n# TODO three\n")
    (root / "src" / "generated.py").write_text("# TODO ignored\n")
    (root / "build" / "out.py").write_text("# TODO ignored\n")
    (root / "run.log").write_text("TODO ignored\n")
    (root / "node_modules" / "m.js").write_text("TODO ignored\n")
    (root / ".env").write_text("TODO=secret\n")
    failed, out = call(ws, "search", pattern="TODO")
    assert not failed
    hits = "a.py:1:# TODO one\nb.py:2:# TODO two\nsrc/deep/c.py:4:# TODO three"
    assert out == f"{hits}\n[1 file(s) not searched (binary, over 2,097,152 bytes, or secret)]", "the .env"
    assert (
        call(ws, "search", pattern="(?i)todo", glob="src/**")[1]
        == "src/deep/c.py:3:# todo lower\nsrc/deep/c.py:4:# TODO three"
    )
    assert call(ws, "search", glob="*.py")[1] == "a.py\nb.py\nsrc/deep/c.py"
    assert call(ws, "search", pattern="TODO", path="src")[1] == "src/deep/c.py:4:# TODO three"
    assert call(ws, "search", pattern="nothing here") == (False, "[no match for /nothing here/]")
    failed, out = call(ws, "search", pattern="(")
    assert failed and out.startswith("pattern is not a valid regular expression")


def test_search_is_bounded(ws: Workspace) -> None:
    (ws.root / "many.txt").write_text("hit\n" * (MAX_MATCHES + 50) + "hit " + "x" * 1000 + "\n")
    _, out = call(ws, "search", pattern="hit")
    lines = out.splitlines()
    assert len(lines) == MAX_MATCHES + 1 and lines[-1].startswith("[51 more not shown (at most 200)")
    (ws.root / "many.txt").write_text("hit " + "x" * 1000 + "\n")
    (_, out) = call(ws, "search", pattern="hit")
    assert out == f"many.txt:1:{('hit ' + 'x' * 1000)[:MAX_LINE_CHARS]}..."
    assert call(ws, "search", pattern="hit") == call(ws, "search", pattern="hit"), "the same bytes each time"


# -- shell ----------------------------------------------------------------------------------------


def test_shell_is_off_by_default_and_on_when_asked(tmp_path: Path) -> None:
    def names(**settings: object) -> list[str]:
        given = RunSettings(provider="anthropic", workspace=str(tmp_path), **settings)  # type: ignore[arg-type]
        with Run.open(None, settings=given, env=ENV) as run:
            return list(run.agent.toolbox.names)

    assert "shell" not in names()
    assert "shell" not in names(allow_shell="off")
    assert "shell" in names(allow_shell="ask") and "shell" in names(allow_shell="yes")


def test_shell_asks_and_a_no_is_final(tmp_path: Path) -> None:
    shown: list[str] = []
    answers = iter([False, True])
    tool = shell_tool(tmp_path, mode="ask", approve=lambda command: next(answers), announce=shown.append)
    with pytest.raises(ToolFailure, match="refused by the user"):
        tool.fn({"command": "touch made"})
    assert not (tmp_path / "made").exists()
    assert tool.fn({"command": "touch made && echo done"}) == "[exit code 0]\ndone\n"
    assert (tmp_path / "made").exists() and shown == ["shell $ touch made", "shell $ touch made && echo done"]
    nobody = shell_tool(tmp_path, mode="ask", approve=None)
    with pytest.raises(ToolFailure, match="no one is at a terminal"):
        nobody.fn({"command": "true"})


def test_shell_timeout_cap_stdin_and_status(tmp_path: Path) -> None:
    tool = shell_tool(tmp_path, mode="yes", timeout=1, max_chars=100)
    assert tool.fn({"command": "sleep 30; echo never"}).startswith("[timed out after 1 s (killed)")
    out = tool.fn({"command": "yes abc | head -c 100000"})
    assert out.endswith("[... cut: the output had 100,000 bytes; 100 characters are shown]")
    assert tool.fn({"command": "cat"}) == "[exit code 0, no output]", "stdin is empty, never the user's"
    assert tool.fn({"command": "echo oops >&2; exit 3"}) == "[exit code 3]\noops\n"


def test_the_shell_sees_no_secret(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    register_secret("sk-registered-secret-value-123")
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": "/home/u",
        "ANTHROPIC_API_KEY": "sk-ant-xyz-1234567890",
        "GITHUB_TOKEN": "ghp_abcdefgh",
        "DB_PASSWORD": "hunter22",
        "AWS_SECRET_ACCESS_KEY": "aws-secret",
        "CUSTOM": "has sk-registered-secret-value-123 inside",
    }
    assert clean_environment(env) == {"PATH": env["PATH"], "HOME": "/home/u"}
    out = shell_tool(tmp_path, mode="yes", env=env).fn({"command": "env"})
    assert "HOME=/home/u" in out
    assert not any(value in out for name, value in env.items() if name not in ("PATH", "HOME"))


# -- each tool through the billing fake, both wires -------------------------------------------------


@pytest.fixture
def fake() -> Iterator[BillingFake]:
    with BillingFake(TASKS) as server:
        yield server


cli = kit.cli


@pytest.mark.parametrize("wire", ["anthropic", "openai"])
def test_each_tool_on_each_wire(
    wire: str, fake: BillingFake, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in ENV.items():
        monkeypatch.setenv(key, value)
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.py").write_text("print('helo')\n")
    (root / "notes.md").write_text("TODO: write the docs\n")
    monkeypatch.setattr(runtime, "_on_a_terminal", lambda: True)
    monkeypatch.setattr("click.confirm", lambda *a, **k: True)  # the user says yes on the terminal
    base = ["--provider", wire, "--model", MODELS[wire], "--no-stream", "--base-url", fake.url(wire, wire)]
    base += ["--store", str(tmp_path / "s.db"), "--workspace", str(root), "--json"]
    for task in ("fix the greeting", "find the todos", "run the tests"):
        capsys.readouterr()
        extra = ["--allow-shell"] if task == "run the tests" else []
        assert main([*base, *extra, task]) == 0, capsys.readouterr().err
        assert json.loads(capsys.readouterr().out)["stop"] == "done"
    sent = json.dumps([bill.body for bill in fake.bills(wire)])
    assert "+print('hello')" in sent and (root / "a.py").read_text() == "print('hello')\n"
    assert "notes.md:1:TODO: write the docs" in sent
    assert "[exit code 0]\\nran\\n\\n" in sent, "the key's echo is an empty line: it is not in the environment"


def test_without_a_terminal_the_shell_is_refused(cli: Cli, fake: BillingFake) -> None:
    ran = cli("--json", "--allow-shell", "run the tests")
    assert json.loads(ran.out)["stop"] == "done"
    assert "tiny-agent: shell $ echo ran" in ran.err
    assert "no one is at a terminal" in json.dumps(fake.bills("r")[-1].body)


# -- the local model -------------------------------------------------------------------------------


def test_the_local_grammar_stays_valid_with_the_new_tools(ws: Workspace) -> None:
    (ws.root / "notes.txt").write_text("hello\n")
    tools = [*ws.tools(), shell_tool(ws.root, mode="yes")]
    specs = tuple(t.spec for t in tools)
    box = Toolbox(tools)
    prompt = Prompt(("system",), specs, (Message.user("read notes.txt"),), CachePlan(), tool_grammar=box.grammar())
    offered = guide(prompt)
    assert {t.name for t in offered.tools} & UNGUIDED == set(), "the guide offers what its benchmarks measure"
    schema = response_format(specs, box.grammar())
    text = json.dumps(schema)
    assert all(name in text for name in ("edit_file", "search", "shell"))
    from jsonschema import Draft202012Validator

    Draft202012Validator.check_schema(schema["json_schema"]["schema"] if "json_schema" in schema else schema)
