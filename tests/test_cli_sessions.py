"""The CLI with sessions: every run is stored, -c and --resume continue it, ``sessions`` manages them.

The provider is scripted (no network); everything else is the real CLI, store and workspace.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tiny_agent.cli import main
from tiny_agent.providers.pricing import TokenPrices
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.testing import ScriptedProvider, tool_call
from tiny_agent.types import Message, ModelResponse, Usage


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "notes.txt").write_text("buy milk\n")
    monkeypatch.chdir(root)
    return root


class Script(list[ScriptedProvider]):
    """Every provider the CLI builds; each answers with the replies ``feed`` set before the run."""

    replies: list[Any]
    prices: TokenPrices | None = None


@pytest.fixture
def script(monkeypatch: pytest.MonkeyPatch) -> Script:
    built = Script()
    built.replies = []

    def resolve(name: str | None, **kwargs: Any) -> ScriptedProvider:
        model = kwargs.get("model") or "scripted-model"
        provider = ScriptedProvider(built.replies, model=model, name=name or "scripted", prices=built.prices)
        built.append(provider)
        return provider

    monkeypatch.setattr("tiny_agent.agent.parts.resolve_provider", resolve)
    return built


def feed(script: Script, *replies: Any) -> None:
    script.replies[:] = list(replies)


def store_path() -> Path:
    import os

    return Path(os.environ["TINY_AGENT_STORE"])


def sessions() -> list[dict[str, Any]]:
    with SQLiteStore(store_path()) as store:
        return [s.to_dict() for s in store.sessions()]


def test_a_run_is_a_session_and_continues(workspace: Path, script: Script, capsys: pytest.CaptureFixture[str]) -> None:
    feed(script, tool_call("read_file", "c1", path="notes.txt"), Message.assistant("It says buy milk."))
    assert main(["what is in notes.txt?"]) == 0
    out = capsys.readouterr()
    assert out.out.strip() == "It says buy milk."
    (only,) = sessions()
    assert f"tiny-agent --resume {only['id'][:12]}" in out.err
    assert only["title"] == "what is in notes.txt?" and only["workspace"] == str(workspace)

    feed(script, Message.assistant("Still milk."))
    assert main(["-c", "and now?"]) == 0
    capsys.readouterr()
    second = script[-1].requests[0]
    texts = json.dumps(second["messages"])
    assert "what is in notes.txt?" in texts and "buy milk" in texts, "the earlier turns are in the request"
    assert len(sessions()) == 1

    feed(script, Message.assistant("Yes."))
    assert main(["--resume", only["id"][:8], "--json", "sure?"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["answer"] == "Yes." and payload["stop"] == "done" and payload["session"] == only["id"]
    assert payload["exit_code"] == 0 and payload["calls"] == 4


def test_sessions_list_show_export_fork_rm(workspace: Path, script: Script, capsys: pytest.CaptureFixture[str]) -> None:
    feed(script, tool_call("read_file", "c1", path="notes.txt"), Message.assistant("buy milk"))
    main(["read notes"])
    capsys.readouterr()
    sid = sessions()[0]["id"]
    assert main(["sessions", "list", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["id"] == sid
    assert main(["sessions", "show", sid[:10]]) == 0
    shown = capsys.readouterr().out
    assert "user: read notes" in shown and "[turn 1 ·" in shown and 'read_file(path="notes.txt")' in shown
    assert main(["sessions", "export", sid, "--format", "jsonl"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert json.loads(lines[0])["format"] == "tiny-agent-session"
    assert [json.loads(line)["seq"] for line in lines[1:]] == list(range(len(lines) - 1))
    for fmt, key in (("anthropic", "system"), ("openai", "messages")):
        assert main(["sessions", "export", sid, "--format", fmt]) == 0
        assert key in json.loads(capsys.readouterr().out)
    assert main(["sessions", "fork", sid, "--at", "3", "--json"]) == 0
    fork = json.loads(capsys.readouterr().out)
    assert fork["parent_id"] == sid and fork["fork_seq"] == 3
    assert main(["sessions", "rm", sid, "--yes"]) == 0
    assert [s["id"] for s in sessions()] == [fork["id"]]
    assert main(["sessions", "show", sid]) == 2
    assert "no session" in capsys.readouterr().err


def test_settings_come_from_the_session(workspace: Path, script: Script) -> None:
    feed(script, Message.assistant("ok"))
    main(["--pin", "never edit dev.mjs", "--model", "m1", "--keep-turns", "2", "first"])
    feed(script, Message.assistant("ok"))
    main(["-c", "second"])
    assert "never edit dev.mjs" in json.dumps(script[-1].requests[0]["system"])
    assert script[-1].model == "m1", "the model of the session, without --model"
    feed(script, Message.assistant("ok"))
    main(["-c", "--model", "m2", "third"])
    assert script[-1].model == "m2"
    with SQLiteStore(store_path()) as store:
        entries = store.entries(sessions()[0]["id"])
    changes = [e.body["settings"] for e in entries if e.kind in ("config", "run")]
    assert {"model": "m2"} in changes, "a flag on resume is recorded as a change"
    assert any(c.get("keep_turns") == 2 for c in changes)


def test_the_task_from_stdin(workspace: Path, script: Script, monkeypatch: pytest.MonkeyPatch) -> None:
    diff = workspace / "diff.txt"
    diff.write_text("--- a\n+++ b\n+new line\n")
    feed(script, Message.assistant("looks fine"))
    with diff.open() as piped:
        monkeypatch.setattr(sys, "stdin", piped)
        assert main(["review this"]) == 0
    sent = script[-1].requests[0]["messages"][-1]["content"][0]["text"]
    assert sent.startswith("review this\n\n<stdin>\n--- a") and "+new line" in sent
    task = workspace / "task.txt"
    task.write_text("what is in notes.txt?")
    feed(script, Message.assistant("milk"))
    with task.open() as piped:
        monkeypatch.setattr(sys, "stdin", piped)
        assert main(["-"]) == 0
    assert script[-1].requests[0]["messages"][-1]["content"][0]["text"] == "what is in notes.txt?"


def test_no_task_and_no_terminal_is_a_usage_error(
    workspace: Path, script: Script, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    assert main([]) == 2
    assert "no task" in capsys.readouterr().err


def test_no_session_stores_nothing(workspace: Path, script: Script) -> None:
    feed(script, Message.assistant("ok"))
    assert main(["--no-session", "hello"]) == 0
    assert sessions() == []


def test_a_damaged_store_costs_nothing(workspace: Path, script: Script, capsys: pytest.CaptureFixture[str]) -> None:
    store_path().write_bytes(b"garbage" * 200)
    assert main(["hello"]) == 2
    err = capsys.readouterr().err.strip()
    assert str(store_path()) in err and "damaged" in err and len(err.splitlines()) == 1
    assert script == [], "no provider was even built"


def test_a_crash_left_calls_without_results(
    workspace: Path, script: Script, capsys: pytest.CaptureFixture[str]
) -> None:
    from tiny_agent.context.session import Session

    with SQLiteStore(store_path()) as store:
        session = Session.start(store, workspace=str(workspace), system="s")
        session.context.add_user("write two files")
        session.context.add_assistant(tool_call("write_file", "w1", path="a.txt", content="a"))
        sid = session.id  # the process "died" here, the call never ran
    feed(script, Message.assistant("I will write them again."))
    assert main(["--resume", sid, "--force", "go on"]) == 0
    err = capsys.readouterr().err
    assert "marked as interrupted and were not run again: write_file(path='a.txt'" in err
    first = script[-1].requests[0]["messages"]
    assert first[-1]["content"][0]["is_error"] and "not run again" in first[-1]["content"][0]["content"]


def test_a_budget_stop_says_how_to_go_on(
    workspace: Path, script: Script, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    script.prices = TokenPrices(input=1e-3, read=1e-3, write=1e-3, write_1h=1e-3, output=0.0)
    usage = Usage(400, 10, 0, 0)
    replies = [ModelResponse(tool_call("list_dir", f"c{i}", path="."), usage, "tool_use", "m") for i in range(5)]
    feed(script, *replies)
    assert main(["--budget-usd", "1", "loop"]) == 5
    err = capsys.readouterr().err
    assert "the budget is spent" in err and "--budget-usd 2.00" in err and "--resume" in err


def test_append_system_given_again_on_resume_replaces_its_own_text(
    workspace: Path, script: Script, capsys: pytest.CaptureFixture[str]
) -> None:
    """A flag given on every run (a date, a branch name) must not pile up in the system prompt."""

    def system_of_last_request() -> str:
        return "\n".join(block["text"] for block in script[-1].requests[-1]["system"])

    feed(script, Message.assistant("one"))
    assert main(["--append-system", "Branch: main.", "first"]) == 0
    assert "Branch: main." in system_of_last_request()
    feed(script, Message.assistant("two"))
    assert main(["-c", "--append-system", "Branch: dev.", "second"]) == 0
    system = system_of_last_request()
    assert "Branch: dev." in system and "Branch: main." not in system
    feed(script, Message.assistant("three"))
    assert main(["-c", "third"]) == 0
    assert "Branch: dev." in system_of_last_request(), "not given: the session's setting stays"
    feed(script, Message.assistant("four"))
    assert main(["-c", "--append-system", "", "fourth"]) == 0
    system = system_of_last_request()
    assert "Branch:" not in system and "tiny-agent" in system, "an empty one leaves the default prompt"
    capsys.readouterr()


def test_a_session_stored_before_appended_system_was_recorded_does_not_get_it_twice() -> None:
    from tiny_agent.agent.settings import compose_system

    stored = "You are careful.\n\nBe terse."
    assert compose_system(None, "Be terse.", stored, None) == stored
    assert compose_system(None, "B", "X\n\nA", "") == "X\n\nA\n\nB", "--system reset what was appended"


def test_options_written_before_a_command_go_to_that_command(
    workspace: Path, script: Script, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """`tiny-agent --store X sessions list` lists sessions: it is not the task "sessions list"."""
    feed(script, Message.assistant("done"))
    other = tmp_path / "other.db"
    assert main(["--store", str(other), "read notes"]) == 0
    capsys.readouterr()
    calls = len(script)
    assert main(["--store", str(other), "sessions", "list", "--json"]) == 0
    assert [s["title"] for s in json.loads(capsys.readouterr().out)] == ["read notes"]
    assert main(["--store", str(other), "stats"]) == 0
    assert "1 sessions" in capsys.readouterr().out
    assert main(["--provider", "anthropic", "stats", "--store", str(other)]) == 2, "stats takes no --provider"
    assert "No such option '--provider'" in capsys.readouterr().err
    assert len(script) == calls, "no model was asked"
    feed(script, Message.assistant("a task"))
    assert main(["--store", str(other), "list the sessions"]) == 0, "a task is still a task"
    assert capsys.readouterr().out.strip() == "a task"


def test_a_read_only_store_is_read_by_every_reading_command(
    workspace: Path, script: Script, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 30, finding 4: a copied 0444 store (or a mounted backup) was refused by every command."""
    feed(script, tool_call("read_file", "c1", path="notes.txt"), Message.assistant("buy milk"))
    assert main(["--provider", "anthropic", "read notes"]) == 0
    sid = sessions()[0]["id"]
    capsys.readouterr()
    import os

    real, path = os.access, store_path()
    # The tests run as root, which permission bits do not stop: the check sees what a user would.
    monkeypatch.setattr(os, "access", lambda p, mode: real(p, mode) and not (mode & os.W_OK and Path(p) == path))
    for argv in (
        ["sessions", "list"],
        ["sessions", "show", sid],
        ["stats"],
        ["replay", sid, "--provider", "anthropic"],
        ["sessions", "export", sid, "--format", "jsonl"],
        ["sessions", "export", sid, "--format", "anthropic"],
    ):
        assert main(argv) == 0, (argv, capsys.readouterr().err)
        assert capsys.readouterr().out, argv
    for argv in (["sessions", "rm", sid, "--yes"], ["-c", "and now?"]):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "is read-only" in err[0] and "Traceback" not in err[0], (argv, err)
    assert sessions()[0]["id"] == sid


@pytest.mark.parametrize("fmt", ["anthropic", "openai"])
def test_an_export_in_a_wire_format_is_a_legal_request(
    workspace: Path, script: Script, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    """Issue 30, finding 8: a finished session's export ended on the assistant's answer, which our own
    lint calls illegal as a request; the export is now the request that asked for that answer."""
    feed(script, tool_call("read_file", "c1", path="notes.txt"), Message.assistant("The note says to buy milk."))
    assert main(["read notes"]) == 0
    sid = sessions()[0]["id"]
    capsys.readouterr()
    assert main(["sessions", "export", sid, "--format", fmt]) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["messages"][-1]["role"] != "assistant"
    assert "The note says" not in json.dumps(body), "the final answer is what this request would get back"
    exported = workspace / "body.json"
    exported.write_text(json.dumps(body))
    main(["lint", str(exported), "--json"])  # a short prefix below the cache minimum is only a warning
    findings = json.loads(capsys.readouterr().out)["findings"]
    assert not [f for f in findings if f["severity"] == "error"], findings


def test_a_task_asked_again_after_no_reply_is_in_the_log_once(
    workspace: Path, script: Script, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run that stopped before any reply (the API was down) keeps its task; asking it again on resume
    retries it rather than sending it twice. A task that was answered is a new turn as before."""
    from tiny_agent.errors import ProviderError

    feed(script, ProviderError("anthropic: cannot connect"))
    assert main(["what is in notes.txt?"]) != 0
    sid = sessions()[0]["id"]
    feed(script, Message.assistant("It says buy milk."))
    assert main(["--resume", sid, "what is in notes.txt?"]) == 0
    asked = json.dumps(script[-1].requests[0]["messages"])
    assert asked.count("what is in notes.txt?") == 1, asked
    feed(script, Message.assistant("Still milk."))
    assert main(["--resume", sid, "what is in notes.txt?"]) == 0
    assert json.dumps(script[-1].requests[0]["messages"]).count("what is in notes.txt?") == 2
    with SQLiteStore(store_path()) as store:
        assert sum(1 for e in store.entries(sid) if e.kind == "user") == 2


def test_a_task_asked_again_after_an_interrupted_loop_is_in_the_log_once(
    workspace: Path, script: Script, capsys: pytest.CaptureFixture[str]
) -> None:
    """After tool results, the task that followed them and got no reply is retried, not doubled."""
    from tiny_agent.errors import ProviderError

    feed(script, tool_call("read_file", "c1", path="notes.txt"), ProviderError("anthropic: cannot connect"))
    assert main(["what is in notes.txt?"]) != 0
    sid = sessions()[0]["id"]
    feed(script, ProviderError("anthropic: cannot connect"))
    assert main(["--resume", sid, "go on"]) != 0
    feed(script, Message.assistant("It says buy milk."))
    assert main(["--resume", sid, "go on"]) == 0
    asked = json.dumps(script[-1].requests[0]["messages"])
    assert asked.count("go on") == 1, asked


def test_a_retried_task_is_counted_once_against_the_window() -> None:
    from tiny_agent.context.engine import Context, ContextConfig
    from tiny_agent.errors import RequestTooLarge

    provider = ScriptedProvider([], model="scripted-model")
    ctx = Context("s", (), config=ContextConfig(context_window=8_000))
    task = "word " * 2_400  # about 2,400 tokens: once fits under half the window, twice does not
    ctx.check_task(provider, task)
    ctx.add_user(task)
    ctx.check_task(provider, task)  # the same task again: it is in the log already
    with pytest.raises(RequestTooLarge):
        ctx.check_task(provider, task + " more " * 2_400)
