"""MCP servers' tools, end to end: a real server written with the SDK's ``MCPServer`` (tests/mcp_servers/server.py),
started over stdio by the run and over streamable HTTP on 127.0.0.1 by the test, and the real CLI
against the billing fake. Listed, called, results in the window and the store, a failing tool, a
server killed mid-call, one that hangs past the timeout, a tool list reordered between two runs (no
cache miss) and one changed (the miss names the tool)."""

from __future__ import annotations

import json
import os
import shlex
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.mcp_servers import kit
from tests.mcp_servers.kit import Cli, assert_legal_and_stored, http_server, stdio
from tests.recorded import ENV, MODELS
from tiny_agent import McpServer, Run, RunSettings
from tiny_agent.cli import main
from tiny_agent.context.entries import CallDone, ConfigChange, RunChange, ToolResult
from tiny_agent.context.entry_codec import read
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.testing import BillingFake, Task
from tiny_agent.tools.mcp.content import exposed_names, result_text

BIG = "a long line of the project's notes, read to pass the cache's minimum length\n" * 120


@pytest.fixture
def fake() -> Iterator[BillingFake]:
    tasks = [
        Task("use the kit", [[("echo", {"text": "hello"})], [("picture", {})], [("document", {})]], "Used."),
        Task("call fail", [[("fail", {"reason": "no way"})]], "It failed."),
        Task("kill it", [[("die", {})], [("echo", {"text": "still there?"})]], "Gone."),
        Task("wait for it", [[("hang", {})], [("echo", {"text": "after the wait"})]], "Waited."),
        Task("read the notes", [[("read_file", {"path": "notes.txt"})], [("echo", {"text": "one"})]], "Read."),
        Task("echo again", [[("echo", {"text": "two"})]], "Again."),
        Task("tell the secret", [[("secret", {})]], "Told."),
        Task("who am i", [[("whoami", {})]], "Known."),
    ]
    with BillingFake(tasks) as server:
        yield server


cli = kit.cli  # the CLI against this module's fake


def stored(cli: Cli) -> list[object]:
    with SQLiteStore(cli.store) as store:
        return [value for entry in store.entries(cli.session()) for value in read(entry)]


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_server_is_listed_called_and_its_results_are_in_the_window_and_the_store(
    cli: Cli, fake: BillingFake, transport: str
) -> None:
    if transport == "stdio":
        ran = cli("--mcp", stdio(), "use the kit")
    else:
        with http_server() as url:
            ran = cli("--mcp-url", url, "use the kit")
    assert ran.code == 0, ran.err
    assert "[mcp kit · " in ran.err and " · 9 tool(s)]" in ran.err
    assert '  > [kit] echo(text="hello") -> 11 chars' in ran.lines
    bodies = [bill.body for bill in fake.bills("r")]
    names = [t["name"] for t in bodies[0]["tools"]]
    # The workspace's tools first, then the server's sorted; its read_file clashes and is prefixed.
    workspace = ["read_file", "write_file", "list_dir", "edit_file", "search"]
    server = ["die", "document", "echo", "fail", "hang", "kit__read_file", "picture", "secret", "whoami"]
    assert names == [*workspace, *server]
    results = [b for m in bodies[-1]["messages"] for b in m["content"] if b.get("type") == "tool_result"]
    texts = [json.dumps(r["content"]) for r in results]
    assert "echo: hello" in texts[0]
    assert "[image: image/png, 70 bytes]" in texts[1]
    assert "[resource: file:///notes.txt (text/plain, 8 characters)]\\nbuy milk" in texts[2]
    assert "[resource link: file:///big.bin (application/zip, 2,048 bytes)]" in texts[2]
    values = stored(cli)
    assert next(v.block.content for v in values if isinstance(v, ToolResult)) == "echo: hello"
    servers = [v.settings["mcp"] for v in values if isinstance(v, RunChange) and "mcp" in v.settings]
    assert servers[0]["kit"]["tools"]["kit__read_file"] == "read_file"
    assert_legal_and_stored(cli.store, fake, "r")


def test_a_failing_tool_is_an_error_result_for_the_model(cli: Cli, fake: BillingFake) -> None:
    ran = cli("--mcp", stdio(), "call fail")
    assert ran.code == 0, ran.err
    assert '  x [kit] fail(reason="no way") -> error: Error executing tool fail: refused: no way' in ran.lines
    result = next(v for v in stored(cli) if isinstance(v, ToolResult))
    assert result.block.is_error and "refused: no way" in result.block.content


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_server_killed_mid_call_is_an_error_result_and_the_session_stays_legal(
    cli: Cli, fake: BillingFake, transport: str
) -> None:
    if transport == "stdio":
        ran = cli("--mcp", stdio(), "kill it")
    else:
        with http_server() as url:
            ran = cli("--mcp-url", url, "kill it")
    assert ran.code == 0, ran.err
    killed = [line for line in ran.lines if "[kit] die()" in line]
    assert len(killed) == 1 and "error: MCP server kit " in killed[0], ran.err
    after = [line for line in ran.lines if "[kit] echo(" in line]
    assert len(after) == 1 and "x [kit]" in after[0], "its tools answer with an error"
    if transport == "stdio":
        assert "stopped during the call" in killed[0]
        assert "is not running (it stopped during a call of die)" in after[0]
    assert ran.out.strip() == "Gone."
    assert_legal_and_stored(cli.store, fake, "r")


def test_a_server_that_hangs_past_the_timeout_is_an_error_result_and_the_run_goes_on(
    cli: Cli, fake: BillingFake
) -> None:
    ran = cli("--mcp", stdio(), "--mcp-timeout", "5", "wait for it")
    assert ran.code == 0, ran.err
    assert "  x [kit] hang() -> error: MCP server kit did not answer hang within 5s; the call was abandoned" in ran.err
    assert '  > [kit] echo(text="after the wait") -> 20 chars' in ran.lines, "the server still answers"
    assert_legal_and_stored(cli.store, fake, "r")


def first_call_of_the_resume(cli: Cli) -> tuple[str | None, int]:
    turns = [v.record for v in stored(cli) if isinstance(v, CallDone) and v.record.purpose == "turn"]
    resumed = turns[3]  # the first run made three calls (read_file, echo, the answer)
    return resumed.miss, resumed.usage.cache_read_tokens or 0


def test_a_tool_list_the_server_reorders_between_runs_is_no_cache_miss(cli: Cli, fake: BillingFake) -> None:
    (cli.workspace / "notes.txt").write_text(BIG)
    assert cli("--mcp", stdio(), "read the notes").code == 0
    ran = cli("--mcp", stdio("--order", "reverse"), "--resume", cli.session(), "echo again")
    assert ran.code == 0, ran.err
    assert "cache miss" not in ran.err and "tools changed" not in ran.err
    miss, read_tokens = first_call_of_the_resume(cli)
    assert miss is None and read_tokens > 2_000
    configs = [v for v in stored(cli) if isinstance(v, ConfigChange) and "tools" in v.settings]
    assert len(configs) == 1, "the same list in another order records no change"


def test_a_changed_tool_is_a_recorded_change_the_miss_diagnosis_names(cli: Cli, fake: BillingFake) -> None:
    (cli.workspace / "notes.txt").write_text(BIG)
    assert cli("--mcp", stdio(), "read the notes").code == 0
    ran = cli("--mcp", stdio("--variant", "louder"), "--resume", cli.session(), "echo again")
    assert ran.code == 0, ran.err
    assert "the tools changed since this session last ran (echo's description changed)" in ran.err
    turn = next(line for line in ran.lines if line.startswith("[turn 1 "))
    assert "cache miss: tools changed: echo's description changed" in turn
    miss, _ = first_call_of_the_resume(cli)
    # after the resume the previous request is re-rendered from the log, so the simulator says where
    assert (
        miss
        == "tools changed: echo's description changed [tool-description-changed at tools[7].description, character 18]"
    )
    configs = [v for v in stored(cli) if isinstance(v, ConfigChange) and "tools" in v.settings]
    assert len(configs) == 2, "the changed list is recorded"
    echo = next(t for t in configs[-1].settings["tools"] if t["name"] == "echo")
    assert echo["description"] == "Echo the text back, louder."


def test_values_given_to_a_server_are_never_stored(
    cli: Cli, fake: BillingFake, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = "kit-token-5f3a9c1e77"
    monkeypatch.setenv("KIT_TOKEN_SOURCE", token)
    (cli.workspace / "tiny-agent.toml").write_text(
        f'[mcp.kit]\ncommand = {json.dumps(stdio().split())}\nenv = {{ KIT_TOKEN = "${{KIT_TOKEN_SOURCE}}" }}\n'
    )
    ran = cli("tell the secret")
    assert ran.code == 0, ran.err
    assert "  > [kit] secret() -> 23 chars" in ran.lines, "the server got the token (hidden in its result)"
    header = "TINY_AGENT_MCP_HEADER_AUTHORIZATION"
    bearer = "Bearer kit-bearer-8d2b6e40aa"
    monkeypatch.setenv(header, bearer)
    with http_server() as url:
        ran = cli("--no-config", "--mcp-url", url, "who am i")
    assert ran.code == 0, ran.err
    result = [v for v in stored(cli) if isinstance(v, ToolResult)][-1]
    assert result.block.content == "authorization: [REDACTED]", "the header reached the server"
    for path in cli.store.parent.glob("sessions.db*"):
        data = path.read_bytes()
        assert token.encode() not in data and b"kit-bearer-8d2b6e40aa" not in data, path
    assert token not in ran.err + ran.out


def test_a_server_that_cannot_start_is_one_line(cli: Cli, capsys: pytest.CaptureFixture[str]) -> None:
    ran = cli("--mcp", "python3 -c 'import sys; print(\"no such module\", file=sys.stderr); sys.exit(3)'", "x")
    assert ran.code == 2
    assert len(ran.lines) == 1 and "Traceback" not in ran.err
    assert ran.lines[0].startswith("tiny-agent: --mcp ") and "could not be started" in ran.lines[0]
    assert "no such module" in ran.lines[0], "the server's last words"
    ran = cli("--mcp", "/nonexistent/server --flag", "x")
    assert ran.code == 2 and len(ran.lines) == 1 and "/nonexistent/server" in ran.lines[0], ran.err
    ran = cli("--mcp", "python3 -c 'print(\"hello, not JSON-RPC\")'", "x")
    assert ran.code == 2 and len(ran.lines) == 1 and "Traceback" not in ran.err, "the SDK's own log stays quiet"
    ran = cli("--mcp", "", "x")
    assert ran.code == 2 and ran.lines == ["tiny-agent: --mcp needs a command, e.g. --mcp 'python my_server.py'"]
    with http_server() as url:
        wrong = url.rstrip("/").rsplit("/", 1)[0] + "/nothing-here"
        ran = cli("--no-config", "--mcp-url", wrong, "x")
    assert ran.code == 2 and len(ran.lines) == 1, ran.err
    assert "HTTP 404" in ran.lines[0] and "check the URL" in ran.lines[0], "the status the server refused with"


def test_names_are_prefixed_only_where_two_clash() -> None:
    names = exposed_names(["read_file"], {"a": ["search", "read_file", "x.y"], "b": ["search", "fetch"]})
    assert names == {
        ("a", "search"): "a__search",
        ("a", "read_file"): "a__read_file",
        ("a", "x.y"): "x_y",
        ("b", "search"): "b__search",
        ("b", "fetch"): "fetch",
    }


def test_results_become_text_naming_what_is_not_text() -> None:
    import mcp_types as types

    blocks = [
        types.TextContent(type="text", text="one"),
        types.ImageContent(type="image", data="aGVsbG8=", mime_type="image/png"),
        types.AudioContent(type="audio", data="!!", mime_type="audio/wav"),
        types.EmbeddedResource(
            type="resource", resource=types.BlobResourceContents(uri="file:///a.bin", blob="AAAA", mime_type=None)
        ),
    ]
    assert result_text(blocks).splitlines() == [
        "one",
        "[image: image/png, 5 bytes]",
        "[audio: audio/wav, size unknown]",
        "[resource: file:///a.bin (unknown type, 3 bytes)]",
    ]
    assert result_text([], {"answer": 42}) == '{"answer": 42}'


def test_ctrl_c_during_a_call_ends_the_run_and_the_servers_stop_at_once(tmp_path: Path) -> None:
    marker = tmp_path / "called"
    server = McpServer(command=tuple(shlex.split(stdio())), env={"KIT_MARKER": str(marker)}, timeout=3600)
    task = Task("wait for it", [[("hang", {})]], "Waited.")

    def interrupt_once_called() -> None:
        deadline = time.monotonic() + 120
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        os.kill(os.getpid(), signal.SIGINT)

    with BillingFake([task]) as fake, SQLiteStore(tmp_path / "s.db") as store:
        url = fake.url("r", "anthropic")
        settings = RunSettings(provider="anthropic", model=MODELS["anthropic"], base_url=url, workspace=str(tmp_path))
        run = Run.open(store, settings=settings, env=ENV, mcp=[server])
        threading.Thread(target=interrupt_once_called, daemon=True).start()
        result = run.run("wait for it")
        started = time.monotonic()
        run.close()
        assert time.monotonic() - started < 30, "the call in flight was cancelled, not waited for"
        assert result.stop == "interrupted" and marker.exists()
        [entry] = [e for e in store.entries(store.sessions(limit=1)[0].id) if e.kind == "tool_result"]
        assert entry.body["block"]["is_error"] and "interrupted" in entry.body["block"]["content"]


def test_a_missing_key_is_said_before_any_server_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.chdir(tmp_path)
    assert main(["--no-session", "--provider", "openai", "--mcp", "/nonexistent/server", "hi"]) == 2
    assert capsys.readouterr().err.strip() == "tiny-agent: provider 'openai' needs OPENAI_API_KEY"


def test_a_command_given_as_one_string_is_refused_with_the_way_to_split_it() -> None:
    from tiny_agent.errors import ConfigError

    with pytest.raises(ConfigError, match=r"sequence of words.*McpServer\.stdio\('python server\.py'\)"):
        McpServer(command="python server.py")  # type: ignore[arg-type]
    assert McpServer.stdio("python server.py").command == ("python", "server.py")


def test_a_server_that_never_answers_is_given_up_on_at_the_deadline_it_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 30, finding 9: a server silent on ``initialize`` was said to have had 30 s and took 45 (the
    stop then waited for a task stuck in its start). One deadline now covers start, initialize and
    the listing, and a server that missed it is cancelled, not waited for."""
    from tiny_agent.errors import ConfigError
    from tiny_agent.tools.mcp import connection
    from tiny_agent.tools.mcp.tools import McpServers

    monkeypatch.setattr(connection, "START_TIMEOUT", 1.0)
    monkeypatch.setattr(connection, "_STOP_TIMEOUT", 60.0)  # what a stuck stop would cost, made plain
    silent = McpServer(name="silent", command=("python3", "-c", "import time; time.sleep(120)"))
    servers = McpServers([silent], cwd=tmp_path)
    started = time.monotonic()
    with pytest.raises(ConfigError, match=r"did not start within 1s"):
        try:
            servers.start()
        finally:
            servers.close()
    assert time.monotonic() - started < 30, "the stop did not wait for the server stuck in its start"
