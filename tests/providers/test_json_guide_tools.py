"""The guide offers search, edit_file and shell as the one call a request spells out, and only then."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tiny_agent.guide.json_guide import Guide, guide
from tiny_agent.guide.tool_request import asked_call
from tiny_agent.providers.openai.json_tools import response_format
from tiny_agent.tools.shell import shell_tool
from tiny_agent.tools.toolbox import Toolbox
from tiny_agent.tools.workspace import Workspace
from tiny_agent.types import Message, Prompt, ToolResultBlock, ToolUseBlock


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    root = tmp_path / "ws"
    (root / "staff").mkdir(parents=True)
    (root / "hours.md").write_text("Open 8am to 5pm\n")
    (root / "staff" / "rota.txt").write_text("Anna: Monday\n")
    return Workspace(root)


def toolbox(workspace: Workspace, *, shell: bool = False) -> Toolbox:
    extra = [shell_tool(workspace.root, mode="yes")] if shell else []
    return Toolbox([*workspace.tools(), *extra])


def allowed(box: Toolbox, *messages: Message) -> Guide:
    prompt = Prompt(("s",), box.specs, messages, tool_grammar=box.grammar(), path_terms=box.path_terms())
    return guide(prompt)


def the_call(box: Toolbox, text: str) -> tuple[str, dict[str, Any]] | None:
    """The one call on offer, its arguments as the grammar fixes them; checked against the tool's schema."""
    offer = allowed(box, Message.user(text))
    if len(offer.tools) != 1 or offer.answer is not None:
        return None
    name = offer.tools[0].name
    args = {key: spec["enum"][0] for key, spec in offer.grammar[name]["properties"].items()}
    jsonschema.validate(args, offer.tools[0].input_schema)
    response_format(offer.tools, offer.grammar, answer=offer.answer)  # a grammar the server accepts
    return name, args


@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        ("Search for Anna", "Anna"),
        ("search the workspace for 'Open 8am'", "Open\\ 8am"),
        ('Find "Monday" in the files', "Monday"),
        ("grep the notes for rota.", "rota"),
        ("Can you search for the word Tuesday?", "Tuesday"),
    ],
)
def test_a_search_request_offers_that_search(workspace: Workspace, text: str, pattern: str) -> None:
    assert the_call(toolbox(workspace), text) == ("search", {"pattern": pattern})


@pytest.mark.parametrize(
    ("text", "path", "old", "new"),
    [
        ("Replace 8am with 9am in hours.md", "hours.md", "8am", "9am"),
        ('In rota.txt, change "Monday" to "Tuesday".', "staff/rota.txt", "Monday", "Tuesday"),
        ("change 5pm to 6pm in notes.md", "notes.md", "5pm", "6pm"),  # a missing file: the tool says so
    ],
)
def test_a_replace_request_offers_that_edit(workspace: Workspace, text: str, path: str, old: str, new: str) -> None:
    call = ("edit_file", {"path": path, "old_string": old, "new_string": new})
    assert the_call(toolbox(workspace), text) == call


def test_a_command_in_backticks_offers_the_shell_only_when_it_is_enabled(workspace: Workspace) -> None:
    assert the_call(toolbox(workspace, shell=True), "Run `ls -a` please") == ("shell", {"command": "ls -a"})
    assert "shell" not in allowed(toolbox(workspace), Message.user("Run `ls -a` please")).grammar


@pytest.mark.parametrize(
    "text",
    [
        "should I edit dev.mjs to change the port?",
        "change the port to 8080 in hours.md",
        "What are the opening hours?",
        "Read hours.md",
        "Which files make up staff?",
        "Write a file todo.txt that says: buy milk",
        "Run the tests",
        "What did the search find for rye?",
        "Find out when we open for lunch",
        "Why would I replace 8am with 9am in hours.md?",
    ],
)
def test_other_requests_get_none_of_the_three(workspace: Workspace, text: str) -> None:
    offer = allowed(toolbox(workspace, shell=True), Message.user(text))
    assert not {"search", "edit_file", "shell"} & set(offer.grammar)
    assert asked_call(text, ["search", "edit_file", "shell"], ["hours.md"]) is None


def test_after_the_call_the_answer_quotes_its_result(workspace: Workspace) -> None:
    box = toolbox(workspace)
    call = ToolUseBlock("c1", "search", {"pattern": "Anna"})
    result = ToolResultBlock("c1", "staff/rota.txt:1:Anna: Monday")
    offer = allowed(box, Message.user("Search for Anna"), Message("assistant", (call,)), Message("user", (result,)))
    assert offer.tools == () and offer.answer == {"type": "string", "enum": ["staff/rota.txt:1:Anna: Monday"]}
    failed = ToolResultBlock("c1", "no line matches", is_error=True)
    offer = allowed(box, Message.user("Search for Anna"), Message("assistant", (call,)), Message("user", (failed,)))
    assert offer.tools == () and offer.answer == {"type": "string", "enum": ["no line matches"]}
