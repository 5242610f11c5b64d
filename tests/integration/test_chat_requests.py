"""Five different requests in a row in ``tiny-agent chat`` on the embedded model, in a real terminal.

The report this answers: after the first request, every later one was answered at once with a quote
of an earlier tool result ("cakes/" five times). Here each request must be answered on its own: a
greeting as a greeting with no tool call, a question from the file that holds its words, "show me
the menu" with the whole menu (a file found from a word of its name), a folder listed when asked,
thanks as thanks; no reply repeats an earlier one, and the workspace is byte-identical afterwards.

What is asserted is what the guide decides, whatever the model samples within it (the lines on
offer, the greeting's opening), so the test does not depend on the model's luck or the machine's
speed: every wait is for the prompt to come back.
"""

from __future__ import annotations

import re
import shlex
import shutil
import sys
from pathlib import Path

import pytest

from tests.integration.terminal import Pane
from tiny_agent.providers.local.llama_server import LlamaServer

pytestmark = pytest.mark.integration

BAKERY = Path(__file__).resolve().parents[2] / "examples" / "bakery"
TOOL_LINE = re.compile(r"^\s+> (\w+)\((.*)\) ->", re.MULTILINE)


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def exchange(pane: Pane, screen: str, request: str) -> tuple[str, list[tuple[str, str]], str]:
    """Type ``request``; (the screen, the tool calls it made, the reply's text) once the prompt is back."""
    mark = len(screen)
    pane.type(request)
    pane.wait_for(r"\[turn 1 ", after=mark)
    screen = pane.wait_prompt(mark)
    shown = screen[mark:]
    calls = TOOL_LINE.findall(shown)
    lines = shown.splitlines()[1:-1]  # the request echoed, then everything up to the next prompt
    reply = "\n".join(line for line in lines if line.strip() and not line.startswith("[") and not TOOL_LINE.match(line))
    return screen, calls, reply.strip()


def test_five_requests_in_a_row_are_each_answered_on_their_own(
    pane: Pane, llama_server: LlamaServer, tmp_path: Path
) -> None:
    workspace = Path(shutil.copytree(BAKERY, tmp_path / "bakery"))
    before = snapshot(workspace)
    pane.type(f"export LLAMA_API_KEY={shlex.quote(llama_server.api_key)}")
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
    ]
    pane.type(shlex.join(command))
    screen = pane.wait_prompt(0)
    replies: list[str] = []

    screen, calls, reply = exchange(pane, screen, "hi!")
    assert calls == [], "a greeting asks nothing of the workspace"
    assert reply.startswith("Hello!"), f"a greeting is answered as a greeting: {reply!r}"
    replies.append(reply)

    screen, calls, reply = exchange(pane, screen, "who works on Friday?")
    assert calls == [("read_file", 'path="staff/rota.txt"')], "the file that holds the words asked about"
    assert reply == "Friday: Lena"
    replies.append(reply)

    screen, calls, reply = exchange(pane, screen, "show me the menu")
    assert calls == [("read_file", 'path="menu.txt"')], "a file found from a word of its name"
    assert reply == (workspace / "menu.txt").read_text().strip(), "the whole menu, not one line of it"
    replies.append(reply)

    screen, calls, reply = exchange(pane, screen, "which bread recipes are there")
    assert calls == [("list_dir", 'path="recipes/bread"')]
    assert "rye.md" in reply and "sourdough.md" in reply
    replies.append(reply)

    screen, calls, reply = exchange(pane, screen, "thanks a lot!")
    assert calls == []
    assert reply.startswith("You're welcome!"), reply
    replies.append(reply)

    assert len(set(replies)) == len(replies), f"a reply repeated an earlier one: {replies}"
    mark = len(screen)
    pane.keys("C-d")
    pane.wait_for(r"come back with", after=mark)
    assert "Traceback" not in pane.screen()
    assert snapshot(workspace) == before, "the workspace is unchanged"
    print(pane.screen())  # the transcript, for a reader of ``pytest -rP``
