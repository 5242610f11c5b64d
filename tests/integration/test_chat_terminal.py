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

import re
import shlex
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.faults import server as faults
from tests.faults.server import FaultServer
from tests.integration.terminal import Pane
from tiny_agent.providers.local.llama_server import LlamaServer

pytestmark = pytest.mark.integration

TURN_LINE = re.compile(r"\[turn \d+ · in=([\d,]+) \(cache_read=([\d,?]+)")


@pytest.fixture
def slow_server() -> Iterator[FaultServer]:
    running = FaultServer()
    try:
        yield running
    finally:
        running.close()  # also ends a stream a failed test left going


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
    screen = pane.wait_for(
        r"(compacted · \d+ messages -> summary.* · context [\d,]+ -> [\d,]+ tokens|/compact: )", 600.0, mark
    )
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
