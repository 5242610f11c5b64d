"""Hooks end to end through the CLI against the billing fake: commands run at the run's events with a
JSON description on stdin; a PreToolUse hook refuses a call; a PreCompact hook adds to the
summary's instructions; a PostCompact hook sees the new window's size; a hook that fails or hangs
is one line and the run goes on."""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.mcp_servers import kit
from tests.mcp_servers.kit import Cli, assert_legal_and_stored
from tests.recorded import tour
from tiny_agent.errors import ConfigError
from tiny_agent.testing import BillingFake, Task
from tiny_agent.tools.hooks import Hook, Hooks

RECORD = """\
import json, os, sys
payload = json.load(sys.stdin)
with open(os.path.join(sys.argv[1], payload["hook_event_name"] + ".jsonl"), "a") as out:
    out.write(json.dumps(payload) + "\\n")
if len(sys.argv) > 2:
    print(sys.argv[2])
"""
REFUSE = """\
import json, sys
call = json.load(sys.stdin)
if call["tool_name"] == "write_file":
    print("no writes today: " + call["tool_input"]["path"], file=sys.stderr)
    sys.exit(2)
"""
BLOCK_JSON = """\
import json, sys
json.load(sys.stdin)
print(json.dumps({"decision": "block", "reason": "the plan is frozen"}))
"""
HANG = """\
import subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
open(sys.argv[1], "w").write(str(child.pid))
time.sleep(600)
"""


@pytest.fixture
def fake(tmp_path: Path) -> Iterator[BillingFake]:
    (tmp_path / "ws").mkdir()
    tasks = [
        Task("write the plan", [[("write_file", {"path": "plan.txt", "content": "step 1"})]], "Tried."),
        Task("list the files", [[("list_dir", {"path": "."})]], "Listed."),
        tour(tmp_path / "ws", "iota", 4),
    ]
    with BillingFake(tasks) as server:
        yield server


cli = kit.cli  # the CLI against this module's fake


def script(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return shlex.join([sys.executable, str(path)])


def running(pid: int) -> bool:
    """Whether ``pid`` is a live process: a zombie (killed, and its parent gone before reaping it) is not."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def events(folder: Path, event: str) -> list[dict[str, object]]:
    path = folder / f"{event}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_a_refusing_pre_tool_hook_gives_the_model_its_reason_and_the_tool_does_not_run(
    cli: Cli, fake: BillingFake, tmp_path: Path
) -> None:
    hook = script(tmp_path, "refuse.py", REFUSE)
    ran = cli("--hook", f"PreToolUse={hook}", "write the plan")
    assert ran.code == 0, ran.err
    line = '  x write_file(path="plan.txt", content="step 1") -> error: refused by a hook: no writes today: plan.txt'
    assert line in ran.lines
    assert not (cli.workspace / "plan.txt").exists()
    results = [b for m in fake.bills("r")[-1].body["messages"] for b in m["content"] if b.get("type") == "tool_result"]
    assert results[0]["is_error"] and "no writes today: plan.txt" in json.dumps(results[0]["content"])
    assert_legal_and_stored(cli.store, fake, "r")


def test_a_hook_can_refuse_with_claude_codes_json_and_a_matcher_picks_the_tools(cli: Cli, tmp_path: Path) -> None:
    hook = script(tmp_path, "block.py", BLOCK_JSON)
    ran = cli("--hook", f"PreToolUse:write_.*={hook}", "write the plan")
    assert "-> error: refused by a hook: the plan is frozen" in ran.err
    ran = cli("--hook", f"PreToolUse:write_.*={hook}", "list the files")
    assert '  > list_dir(path=".") -> ' in ran.err, "the matcher leaves list_dir alone"


def test_hooks_see_each_event_as_json_on_stdin(cli: Cli, tmp_path: Path) -> None:
    seen = tmp_path / "seen"
    seen.mkdir()
    record = script(tmp_path, "record.py", RECORD) + f" {shlex.quote(str(seen))}"
    flags = [f"--hook={event}={record}" for event in ("SessionStart", "PreToolUse", "PostToolUse", "Stop")]
    assert cli(*flags, "list the files").code == 0
    assert cli(*flags, "-c", "list the files").code == 0
    starts = events(seen, "SessionStart")
    assert [s["source"] for s in starts] == ["startup", "resume"]
    assert starts[0]["session_id"] == cli.session() and starts[0]["cwd"] == str(cli.workspace)
    assert starts[0]["tools"] == ["read_file", "write_file", "list_dir", "edit_file", "search"]
    before, after = events(seen, "PreToolUse")[0], events(seen, "PostToolUse")[0]
    assert before["tool_name"] == "list_dir" and before["tool_input"] == {"path": "."}
    assert after["tool_use_id"] == before["tool_use_id"] and after["tool_response"]["is_error"] is False
    stops = events(seen, "Stop")
    assert [s["stop_reason"] for s in stops] == ["done", "done"] and stops[0]["answer"] == "Listed."


def test_compaction_hooks_add_to_the_summary_instructions_and_see_the_new_size(
    cli: Cli, fake: BillingFake, tmp_path: Path
) -> None:
    seen = tmp_path / "seen"
    seen.mkdir()
    record = script(tmp_path, "record.py", RECORD) + f" {shlex.quote(str(seen))}"
    extra = "Name every file that was read, one per line."
    (cli.workspace / "tiny-agent.toml").write_text(
        f"[[hooks.PreCompact]]\ncommand = {json.dumps(record + ' ' + shlex.quote(extra))}\n"
        f"[[hooks.PostCompact]]\ncommand = {json.dumps(record)}\n"
    )
    ran = cli("--compact-at", "4000", "--keep-turns", "1", "tour the iota files")
    assert ran.code == 0, ran.err
    compacted = [line for line in ran.lines if line.startswith("[compacted · ")]
    assert compacted, ran.err
    summaries = [b.body for b in fake.bills("r") if extra in json.dumps(b.body)]
    assert summaries and "summary" in json.dumps(summaries[0]).lower(), "the summary request carries the hook's text"
    before, after = events(seen, "PreCompact")[0], events(seen, "PostCompact")[0]
    assert before["trigger"] == "auto" and before["threshold"] == 4000
    assert after["tokens_before"] == before["tokens_before"]
    assert f"-> {after['tokens_after']:,} tokens" in compacted[0]
    assert after["context_window"] == before["context_window"]
    assert_legal_and_stored(cli.store, fake, "r")


def test_a_hook_that_hangs_is_stopped_with_what_it_started_and_the_run_goes_on(
    cli: Cli, fake: BillingFake, tmp_path: Path
) -> None:
    pid_file = tmp_path / "child.pid"
    hang = script(tmp_path, "hang.py", HANG) + f" {shlex.quote(str(pid_file))}"
    (cli.workspace / "tiny-agent.toml").write_text(f"[[hooks.PreToolUse]]\ncommand = {json.dumps(hang)}\ntimeout = 3\n")
    ran = cli("list the files")
    assert ran.code == 0, ran.err
    said = [line for line in ran.lines if "did not finish" in line]
    assert len(said) == 1 and said[0].startswith("tiny-agent: PreToolUse hook ") and "within 3s" in said[0]
    assert '  > list_dir(path=".") -> ' in ran.err, "a hook that hangs does not refuse the call"
    assert not running(int(pid_file.read_text())), "what the hook started was killed with it"
    assert ran.out.strip() == "Listed."
    assert_legal_and_stored(cli.store, fake, "r")


def test_a_failing_hook_is_one_line_and_the_run_goes_on(cli: Cli, tmp_path: Path) -> None:
    fail = script(tmp_path, "fail.py", "import sys; print('boom: no config', file=sys.stderr); sys.exit(1)")
    ran = cli("--hook", f"PostToolUse={fail}", "--hook", "Stop=/nonexistent/notify", "list the files")
    assert ran.code == 0, ran.err
    failed = [line for line in ran.lines if line.startswith("tiny-agent: ") and "hook" in line]
    assert failed[0].startswith("tiny-agent: PostToolUse hook ") and "failed (exit 1): boom: no config" in failed[0]
    assert failed[1].startswith("tiny-agent: Stop hook /nonexistent/notify failed (exit 127)")
    assert len(failed) == 2 and ran.out.strip() == "Listed."


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("PreTool=x", "unknown hook event 'PreTool'; the events are: SessionStart, PreToolUse"),
        ("PreToolUse", "--hook 'PreToolUse': give EVENT=COMMAND"),
        ("PreToolUse:[=x", "the hook's matcher '[' is not a regular expression"),
        ("Stop=  ", "a Stop hook needs a command"),
    ],
)
def test_a_bad_hook_flag_is_one_line(cli: Cli, spec: str, message: str) -> None:
    ran = cli("--hook", spec, "list the files")
    assert ran.code == 2 and len(ran.lines) == 1 and message in ran.lines[0], ran.err


def test_a_hook_runs_in_the_workspace_with_the_session_in_its_environment(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="timeout must be more than 0 seconds"):
        Hook(event="Stop", command="true", timeout=0)
    command = 'printf "%s %s %s" "$TINY_AGENT_SESSION_ID" "$TINY_AGENT_HOOK_EVENT" "$(pwd)"'
    hooks = Hooks([Hook(event="Stop", command=command)], cwd=str(tmp_path), report=pytest.fail)
    hooks.session_id = "abc123"
    [(_, ran)] = hooks.fire("Stop", {})
    assert (ran.code, ran.stdout) == (0, f"abc123 Stop {tmp_path}")


def test_a_guard_that_prints_broken_json_is_said_and_not_obeyed(cli: Cli, tmp_path: Path) -> None:
    """A typo in a guard's JSON would otherwise let every call through without a word."""
    broken = script(tmp_path, "broken.py", 'print(\'{"decision": "block", "reason": "frozen"\')')  # no closing }
    ran = cli("--hook", f"PreToolUse={broken}", "write the plan")
    assert ran.code == 0, ran.err
    said = [line for line in ran.lines if "printed JSON that does not parse" in line]
    assert len(said) == 1 and said[0].startswith("tiny-agent: PreToolUse hook ") and "ignored" in said[0]
