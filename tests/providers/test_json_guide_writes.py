"""The guide offers ``write_file`` only to a request that asks for a file to be written.

The embedded model wrote ``path/to_output_file.txt`` when asked "Which license is this project
under?": a question that named no path left ``write_file`` on offer with any new path. A request
asks for a write when a write verb stands where a command does (the start of a sentence, after
"please", "and", "then", "can you"...) and it names a file (a new file name, or the word "file");
a write word inside a question ("Which files make up src?") or a story to tell is not one.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from benchmarks.tool_choice import ROOT, TASKS, prepare

from tiny_agent.guide.json_guide import asks_for_a_write, guide
from tiny_agent.tools.toolbox import Toolbox
from tiny_agent.tools.workspace import Workspace
from tiny_agent.types import Message, Prompt, ToolUseBlock

QUESTIONS = [
    "Which license is this project under?",
    "What license is this project under",
    "which license does this use?",
    "Tell me the license.",
    "Which files make up src?",
    "What does todo.md say?",
    "What should I write in todo.md?",
    "How do I add a recipe?",
    "Do you write files?",
    "What is stored in shopping.txt?",
    "Is there anything to create in recipes?",
    "Add up the prices in shopping.txt.",
    "Read shopping.txt and make sure nothing is missing.",
    "Summarise LICENSE in one line.",
    "Which recipe makes the most bread?",
    "What did I add to todo.md yesterday?",
]
WRITES = {
    "Write a file todo.txt that says: buy milk": ["todo.txt"],
    "Write a file ideas.txt that says: try rye bread": ["ideas.txt"],
    "Please create notes2.md with the word hello.": ["notes2.md"],
    "Can you save the shopping list to list.txt?": ["list.txt"],
    "Read shopping.txt and add it to a new file groceries.txt.": ["groceries.txt"],
    "make a file called plan.md": ["plan.md"],
    "Put the date in a new file when.txt": ["when.txt"],
    "Create a new file with my shopping list.": None,  # any new path: the request names none
}


@pytest.fixture(params=["named files", "bakery", "empty"])
def workspace(request: pytest.FixtureRequest, tmp_path: Path) -> Workspace:
    root = tmp_path / "ws"
    if request.param == "named files":  # the workspace of the report
        root.mkdir()
        (root / "LICENSE").write_text("MIT License\n")
        (root / "shopping.txt").write_text("eggs\n")
        (root / "todo.md").write_text("- call Anna\n")
        (root / "recipes").mkdir()
        (root / "recipes" / "bread.md").write_text("flour\n")
        (root / "src").mkdir()
        (root / "src" / "main.py").write_text("print(1)\n")
    elif request.param == "bakery":
        shutil.copytree(ROOT / "examples" / "bakery", root)
    else:
        root.mkdir()
    return Workspace(root)


def offered(workspace: Workspace, text: str) -> dict[str, Any]:
    toolbox = Toolbox(workspace.tools())
    request = (Message.user(text),)
    allowed = guide(
        Prompt(("s",), toolbox.specs, request, tool_grammar=toolbox.grammar(), path_terms=toolbox.path_terms())
    )
    return {name: schema["properties"].get("path", {}).get("enum") for name, schema in allowed.grammar.items()}


@pytest.mark.parametrize("text", QUESTIONS)
def test_a_question_is_never_offered_a_write(workspace: Workspace, text: str) -> None:
    assert not asks_for_a_write(text)
    tools = offered(workspace, text)
    assert "write_file" not in tools, tools
    assert tools, "it can still look"


STORIES = [
    "Write a long story about a lighthouse keeper, at least three paragraphs.",
    "tell me a joke about bread",
    "Make up a poem about the sea",
]


@pytest.mark.parametrize("text", STORIES)
def test_a_story_to_tell_is_a_short_free_reply_and_no_write(workspace: Workspace, text: str) -> None:
    assert not asks_for_a_write(text)
    assert offered(workspace, text) == {}


@pytest.mark.parametrize(("text", "paths"), WRITES.items())
def test_a_request_for_a_file_is_offered_the_write(workspace: Workspace, text: str, paths: list[str] | None) -> None:
    """Offered at once, or once the file the request names to read was read."""
    assert asks_for_a_write(text)
    toolbox = Toolbox(workspace.tools())
    messages: tuple[Message, ...] = (Message.user(text),)
    for step in range(2):
        allowed = guide(
            Prompt(("s",), toolbox.specs, messages, tool_grammar=toolbox.grammar(), path_terms=toolbox.path_terms())
        )
        if "write_file" in allowed.grammar:
            break
        assert step == 0 and list(allowed.grammar) == ["read_file"], "a write waits only for a read"
        path = allowed.grammar["read_file"]["properties"]["path"]["enum"][0]
        call = ToolUseBlock("c1", "read_file", {"path": path})
        messages = (*messages, Message("assistant", (call,)), Message("user", (toolbox.run(call),)))
    assert allowed.grammar["write_file"]["properties"]["path"].get("enum") == paths


def test_the_benchmark_tasks_get_write_file_exactly_when_they_ask_for_a_write(tmp_path: Path) -> None:
    """What benchmarks/tool_choice.py measures still holds: its write tasks are offered their file."""
    for index, task in enumerate(TASKS):
        _, toolbox, ctx = prepare(task, tmp_path / str(index))
        ctx.add_user(task.request)
        allowed = guide(ctx.prompt(tool_grammar=toolbox.grammar()))
        if task.tool == "write_file":
            assert allowed.grammar["write_file"]["properties"]["path"]["enum"] == [task.path], task.request
        else:
            assert "write_file" not in allowed.grammar, task.request
