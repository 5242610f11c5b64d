"""The fault server driven through the CLI, as a user runs it: ``python -m tiny_agent --provider ...
--base-url http://127.0.0.1:PORT`` with a fake key in the environment.

Each case checks the exit code, one line on stderr (``-q`` leaves only the failure's line), no
traceback, the key nowhere in what was printed or written, and the workspace byte for byte as it was.

The adapters' fault suite covers both wires case by case; here, where each run pays for importing
an SDK (seconds on a small machine), a case runs on both wires only when the wire could matter to
what the user sees (the key, a cut tool call), and on one otherwise.

Exit codes (fixed for the CLI): 0 done, 1 provider or protocol failure, 2 usage or configuration
error (a bad key included), 3 step limit, 4 cut at the output limit, 5 budget, 6 no answer (empty or
refused), 130 interrupted.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.faults import server as faults
from tests.faults.kit import FAST, KEY, KITS, Kit, cli_env
from tests.faults.server import FaultServer

FILES = {
    "README.md": b"# Demo\nA small project.\n",
    "config.json": b'{"name": "demo", "version": 3}\n',
    "src/app.py": b"print('hello')\n",
}


ANTHROPIC, OPENAI = KITS
ON_ANTHROPIC = pytest.mark.parametrize("kit", [ANTHROPIC], ids=["anthropic"])
ON_OPENAI = pytest.mark.parametrize("kit", [OPENAI], ids=["openai"])


@pytest.fixture(params=KITS, ids=lambda k: k.name)
def kit(request: pytest.FixtureRequest) -> Kit:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    for name, data in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    (root / "config.json").chmod(0o640)
    return root


def snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    return {str(p.relative_to(root)): (p.read_bytes(), p.stat().st_mode) for p in root.rglob("*") if p.is_file()}


class Run:
    def __init__(self, result: subprocess.CompletedProcess[str]) -> None:
        self.code = result.returncode
        self.out = result.stdout
        self.err = result.stderr

    def failed(self, code: int, *fragments: str) -> str:
        """The run exited ``code`` with exactly one line on stderr holding every fragment."""
        assert self.code == code, (self.code, self.out, self.err)
        lines = self.err.strip().splitlines()
        assert len(lines) == 1, self.err
        assert lines[0].startswith("tiny-agent: "), lines[0]
        for fragment in fragments:
            assert fragment in lines[0], (fragment, lines[0])
        return lines[0]


def cli(tmp_path: Path, workspace: Path, kit: Kit, url: str, *extra: str, task: str = "What is this?") -> Run:
    env = cli_env(tmp_path, **{kit.key_env: KEY})
    base_url = f"{url}/v1" if kit.name == "openai" and url.startswith("http") else url
    argv = ["--provider", kit.name, "--base-url", base_url, "--workspace", str(workspace), "-q", *extra, task]
    before = snapshot(workspace)
    result = subprocess.run(
        [sys.executable, "-m", "tiny_agent", *argv], env=env, capture_output=True, text=True, timeout=120
    )
    run = Run(result)
    assert "Traceback" not in run.out + run.err
    assert KEY not in run.out + run.err
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), f"the key was written to {path}"
    if "write_file" not in task:
        assert snapshot(workspace) == before
    return run


def test_a_good_answer(server: FaultServer, tmp_path: Path, workspace: Path, kit: Kit) -> None:
    url = server.route(faults.reply(kit.text("All fine.")))
    run = cli(tmp_path, workspace, kit, url)
    assert (run.code, run.out, run.err) == (0, "All fine.\n", "")
    [seen] = server.seen(url)
    assert KEY in json.dumps(seen.headers)  # so the other cases look for a key that is really in use


@ON_OPENAI
def test_bursts_of_5xx_then_an_answer(server: FaultServer, tmp_path: Path, workspace: Path, kit: Kit) -> None:
    url = server.route(
        faults.status(503, kit.error("api_error", "unavailable"), FAST),
        faults.status(529, kit.error("overloaded_error", "Overloaded"), FAST),
        faults.reply(kit.text("Got there.")),
    )
    run = cli(tmp_path, workspace, kit, url)
    assert (run.code, run.out) == (0, "Got there.\n")
    assert len(server.seen(url)) == 3


@ON_ANTHROPIC
def test_retries_that_run_out(server: FaultServer, tmp_path: Path, workspace: Path, kit: Kit) -> None:
    url = server.route(faults.status(500, kit.error("api_error", "Internal server error"), FAST))
    run = cli(tmp_path, workspace, kit, url)
    run.failed(1, "500 api_error: Internal server error", f"{url}/v1/", "3 attempts in")


@ON_ANTHROPIC
def test_a_huge_retry_after_is_reported_at_once(server: FaultServer, tmp_path: Path, workspace: Path, kit: Kit) -> None:
    url = server.route(faults.status(429, kit.error("rate_limit_error", "slow down"), {"retry-after": "3600"}))
    run = cli(tmp_path, workspace, kit, url)
    run.failed(1, "429 rate_limit_error: slow down", "retry after 3600 s", "did not wait", "1 attempt in")
    assert len(server.seen(url)) == 1


def test_a_bad_key_names_the_variable_and_exits_2(
    server: FaultServer, tmp_path: Path, workspace: Path, kit: Kit
) -> None:
    # The server echoes the key back, as some do: it must not reach the screen.
    url = server.route(faults.status(401, kit.error("authentication_error", f"invalid x-api-key {KEY}")))
    run = cli(tmp_path, workspace, kit, url)
    run.failed(2, "401 authentication_error: invalid x-api-key [REDACTED]", f"check {kit.key_env}")


@pytest.mark.parametrize(
    ("kit", "fault", "fragment"),
    [
        (ANTHROPIC, faults.reset, "connection lost"),
        (ANTHROPIC, faults.raw(200, b"<html><body>502 Bad Gateway</body></html>", "text/html"), "(text/html)"),
        (OPENAI, faults.raw(200, b"Internal error", "text/plain"), "(text/plain) that is not JSON"),
        (OPENAI, faults.raw(200, b'{"content": 5, "choices": 5}', "application/json"), "the answer cannot be read: "),
    ],
    ids=["anthropic-reset", "anthropic-html", "openai-not-json", "openai-wrong-shape"],
)
def test_an_answer_that_cannot_be_used(
    server: FaultServer, tmp_path: Path, workspace: Path, kit: Kit, fault: faults.Fault, fragment: str
) -> None:
    url = server.route(fault)
    run = cli(tmp_path, workspace, kit, url)
    run.failed(1, fragment, f"{url}/v1/")


@ON_OPENAI
def test_an_answer_cut_in_the_middle(server: FaultServer, tmp_path: Path, workspace: Path, kit: Kit) -> None:
    url = server.route(faults.cut(kit.text("This answer will never arrive whole, it is cut halfway through.")))
    cli(tmp_path, workspace, kit, url).failed(1, "connection lost")


@ON_ANTHROPIC
def test_an_error_in_the_middle_of_the_answer(server: FaultServer, tmp_path: Path, workspace: Path, kit: Kit) -> None:
    events = kit.events(kit.text("This answer stops with an error event in the middle of it."))

    def fault(h: faults.Handler, body: dict[str, Any]) -> None:  # a stream breaks; a whole answer is a 529
        if body.get("stream"):
            faults.stream([*events[:4], kit.error_event("overloaded_error", "Overloaded")])(h, body)
        else:
            faults.status(529, kit.error("overloaded_error", "Overloaded"), FAST)(h, body)

    cli(tmp_path, workspace, kit, server.route(fault)).failed(1, "overloaded_error: Overloaded")


def test_a_refused_connection_names_the_url(tmp_path: Path, workspace: Path) -> None:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    run = cli(tmp_path, workspace, KITS[0], f"http://127.0.0.1:{port}")
    run.failed(1, "cannot connect", f"http://127.0.0.1:{port}/v1/messages")


@ON_OPENAI
def test_a_base_url_that_is_not_a_url_exits_2(tmp_path: Path, workspace: Path, kit: Kit) -> None:
    run = cli(tmp_path, workspace, kit, "not a url")
    run.failed(2, "'not a url' is not an http(s) URL with a host")


@ON_ANTHROPIC
def test_a_server_that_never_answers(server: FaultServer, tmp_path: Path, workspace: Path, kit: Kit) -> None:
    url = server.route(faults.hang)
    run = cli(tmp_path, workspace, kit, url, "--timeout", "1", "--max-retries", "1")
    run.failed(1, "no answer within 1 s", "2 attempts in")


@ON_OPENAI
def test_an_answer_cut_at_the_output_limit_exits_4(
    server: FaultServer, tmp_path: Path, workspace: Path, kit: Kit
) -> None:
    stop = "max_tokens" if kit.name == "anthropic" else "length"
    run = cli(tmp_path, workspace, kit, server.route(faults.reply(kit.text("The project is a sm", stop=stop))))
    run.failed(4, "output limit")
    assert run.out == "The project is a sm\n"


def test_a_tool_call_cut_at_the_output_limit_never_runs(
    server: FaultServer, tmp_path: Path, workspace: Path, kit: Kit
) -> None:
    stop = "max_tokens" if kit.name == "anthropic" else "length"
    cut_call = kit.tool("write_file", {"path": "config.json", "content": '{"name": "de'}, stop=stop)
    before = snapshot(workspace)
    run = cli(tmp_path, workspace, kit, server.route(faults.reply(cut_call)), "--max-steps", "2", task="write_file")
    assert snapshot(workspace) == before, "a cut write_file changed the workspace"
    run.failed(4)


@ON_OPENAI
def test_a_refusal_exits_6(server: FaultServer, tmp_path: Path, workspace: Path, kit: Kit) -> None:
    cli(tmp_path, workspace, kit, server.route(faults.reply(kit.refusal()))).failed(6)


@ON_ANTHROPIC
def test_an_empty_reply_exits_6(server: FaultServer, tmp_path: Path, workspace: Path, kit: Kit) -> None:
    cli(tmp_path, workspace, kit, server.route(faults.reply(kit.empty()))).failed(6)
