"""``tiny-agent chat`` in a real terminal (tmux), against the real llama.cpp server and model.

Two user turns, ``/context``, ``/compact``, ``/cost``, leave with Ctrl-D, come back with ``-c``: the
conversation is there, and the first request after coming back reads the prefix from the server's
cache (the server outlives both chat processes).

Ctrl-C during a reply needs a reply that is still coming when the key lands, and the real model
answers "Write a long story" in under a second on a quiet machine. So that part talks to a local
server that streams slowly on purpose (a word every 0.2 s, for up to two minutes): the key is sent
once the first words are on the screen, whatever the machine's speed.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.faults import server as faults
from tests.faults.server import FaultServer
from tiny_agent.providers.llama_server import LlamaServer

pytestmark = pytest.mark.integration

TURN_LINE = re.compile(r"\[turn \d+ · in=([\d,]+) \(cache_read=([\d,?]+)")


class Pane:
    """One tmux session running a shell: type into it, read what it shows."""

    def __init__(self, name: str, env: dict[str, str]) -> None:
        self.name = name
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        subprocess.run(
            [
                "tmux",
                "new-session",
                "-d",
                "-s",
                name,
                "-x",
                "200",
                "-y",
                "80",
                f"env {exports} bash --norc --noprofile",
            ],
            check=True,
        )

    def keys(self, *keys: str) -> None:
        subprocess.run(["tmux", "send-keys", "-t", self.name, *keys], check=True)

    def type(self, text: str) -> None:
        subprocess.run(["tmux", "send-keys", "-t", self.name, "-l", text], check=True)
        self.keys("Enter")

    def screen(self) -> str:
        out = subprocess.run(
            ["tmux", "capture-pane", "-p", "-J", "-S", "-2000", "-t", self.name], capture_output=True, text=True
        )
        # The pane's empty bottom rows come out as blank lines; without them, offsets into the screen
        # stay put as output is added, so "after this mark" means "printed after this point".
        return out.stdout.rstrip()

    def wait_for(self, pattern: str, seconds: float = 300.0, after: int = 0) -> str:
        """Wait until ``pattern`` shows at or after character ``after`` of the screen; returns the screen."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            screen = self.screen()
            if re.search(pattern, screen[after:]):
                return screen
            time.sleep(0.3)
        raise AssertionError(f"{pattern!r} never showed; the screen:\n{self.screen()[after:]}")

    def wait_prompt(self, after: int, seconds: float = 600.0) -> str:
        """Wait until the chat prompt is back (a line that is exactly "> ")."""
        return self.wait_for(r"(?m)^> ?$", seconds, after)  # tmux trims the trailing space

    def close(self) -> None:
        subprocess.run(["tmux", "kill-session", "-t", self.name], capture_output=True)


@pytest.fixture
def slow_server() -> Iterator[FaultServer]:
    running = FaultServer()
    try:
        yield running
    finally:
        running.close()  # also ends a stream a failed test left going


@pytest.fixture
def pane(tmp_path: Path, private_dirs: Path) -> Iterator[Pane]:
    if shutil.which("tmux") is None:
        pytest.fail("tmux is needed for the terminal test (scripts/setup installs it)")
    env = {
        "TINY_AGENT_STORE": str(tmp_path / "sessions.db"),
        "XDG_DATA_HOME": str(private_dirs / "xdg_data_home"),
        "XDG_STATE_HOME": str(private_dirs / "xdg_state_home"),
        "PATH": os.environ["PATH"],
        "PYTHONPATH": os.pathsep.join(sys.path),
        "TERM": "xterm-256color",
        "HOME": str(tmp_path),
    }
    running = Pane(f"tiny-agent-test-{os.getpid()}-{int(time.time())}", env)
    try:
        yield running
    finally:
        running.close()


def test_chat_in_a_real_terminal(
    pane: Pane, llama_server: LlamaServer, slow_server: FaultServer, tmp_path: Path
) -> None:
    pane.type(f"export LLAMA_API_KEY={shlex.quote(llama_server.api_key)}")  # --base-url's server wants its key
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("The meeting is on Tuesday at 10.\n")
    command = [
        sys.executable,
        "-m",
        "tiny_agent",
        "chat",
        "--provider",
        "local",
        "--base-url",
        llama_server.base_url,
        "--workspace",
        str(workspace),
        "--max-steps",
        "2",
        "--max-tokens",
        "200",
    ]
    pane.type(shlex.join(command))
    start = 0
    screen = pane.wait_prompt(start)

    for message in ("Read notes.txt.", "When is the meeting?"):
        mark = len(screen)
        pane.type(message)
        screen = pane.wait_for(r"\[turn 1 ", after=mark)
        screen = pane.wait_prompt(mark)

    mark = len(screen)
    pane.type("/context")
    screen = pane.wait_for(r"threshold [\d,]+", after=mark)
    assert re.search(r"tools\s+[\d,]+", screen[mark:]) and "#1 user" in screen[mark:]

    mark = len(screen)
    pane.type("/compact 1")
    # The summary is the longest call of the test: on a busy machine the small model takes minutes.
    screen = pane.wait_for(r"(compacted \d+ messages: context [\d,]+ -> [\d,]+ tokens|/compact: )", 600.0, mark)
    screen = pane.wait_prompt(mark)

    mark = len(screen)
    pane.type("/cost")
    screen = pane.wait_for(r"cache\s+\S+ of input read from the cache", after=mark)

    mark = len(screen)
    pane.type("/nonsense")
    screen = pane.wait_for(r"unknown command /nonsense; commands: /context", after=mark)
    screen = pane.wait_prompt(mark)  # a key sent before the prompt is back can be lost

    mark = len(screen)
    pane.keys("C-d")
    screen = pane.wait_for(r"session (\w{12}) · come back with", after=mark)
    session = re.findall(r"session (\w{12}) · come back with", screen)[-1]
    assert "Traceback" not in screen

    # Ctrl-C during a reply, on a reply that takes two minutes unless it is interrupted.
    disconnected = threading.Event()
    slow = slow_server.route(
        faults.slow_stream(
            "Once upon a time, a lighthouse keeper", " kept", every=0.2, most=600, disconnected=disconnected
        )
    )
    mark = len(screen)
    slow_chat = [*command[:4], "--store", str(tmp_path / "slow.db"), "--provider", "openai", "--base-url", f"{slow}/v1"]
    pane.type(shlex.join([*slow_chat, "--model", "slow", "--workspace", str(workspace)]))
    screen = pane.wait_prompt(mark)
    mark = len(screen)
    pane.type("Write a long story about a lighthouse keeper, at least three paragraphs.")
    screen = pane.wait_for(r"Once upon a time, a lighthouse keeper kept", after=mark)  # it is streaming now
    pane.keys("C-c")
    screen = pane.wait_for(r"\(turn interrupted", after=mark)
    screen = pane.wait_prompt(mark)
    assert disconnected.wait(30), "the reply in flight was dropped: its connection was closed"
    assert len(slow_server.seen(slow)) == 1
    mark = len(screen)
    pane.keys("C-d")
    screen = pane.wait_for(r"session (\w{12}) · come back with", after=mark)
    assert "Traceback" not in screen

    mark = len(screen)
    pane.type(shlex.join([*command[:4], "-c", *command[4:]]))
    screen = pane.wait_prompt(mark)
    assert f"session {session}" in screen[mark:], "-c goes back to the newest session of the workspace"
    mark = len(screen)
    pane.type("/context")
    screen = pane.wait_for(r"threshold [\d,]+", after=mark)
    assert "When is the meeting?" in screen[mark:] or "summary" in screen[mark:], "the conversation is there"
    mark = len(screen)
    pane.type("Thanks. Anything else in notes.txt?")
    screen = pane.wait_for(r"\[turn 1 ", after=mark)
    first = TURN_LINE.search(screen[mark:])
    assert first is not None
    assert int(first.group(2).replace(",", "")) > 0, "the first request after coming back reads the cache"
    pane.wait_prompt(mark)
    pane.keys("C-d")
    pane.wait_for(r"come back with", after=mark)
    assert "Traceback" not in pane.screen()
