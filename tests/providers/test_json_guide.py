"""The guide: which replies the embedded model may give this turn, from the request and the log."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import jsonschema

from tiny_agent.guide.json_guide import Guide, guide, named_paths
from tiny_agent.providers.local.provider import LocalProvider
from tiny_agent.providers.openai.json_tools import response_format
from tiny_agent.tools.toolbox import Toolbox
from tiny_agent.tools.workspace import Workspace
from tiny_agent.types import Message, Prompt, ToolResultBlock, ToolUseBlock

ROOT = Path(__file__).resolve().parents[2] / "examples" / "bakery"
TOOLBOX = Toolbox(Workspace(ROOT).tools())
FILES = ["README.md", "hours.md", "menu.txt", "recipes/bread/rye.md", "recipes/bread/sourdough.md"]


def prompt(*messages: Message) -> Prompt:
    return Prompt(("s",), TOOLBOX.specs, messages, tool_grammar=TOOLBOX.grammar())


def offered(allowed: Guide) -> dict[str, Any]:
    """Tool name -> the paths on offer (None: any path)."""
    return {name: schema["properties"].get("path", {}).get("enum") for name, schema in allowed.grammar.items()}


def admits(allowed: Guide, reply: dict[str, Any]) -> bool:
    schema = response_format(allowed.tools, allowed.grammar, answer=allowed.answer)["json_schema"]["schema"]
    try:
        jsonschema.validate(reply, schema)
    except jsonschema.ValidationError:
        return False
    return True


def read(path: str, result: str, *, call_id: str = "c1", error: bool = False) -> Sequence[Message]:
    return (
        Message("assistant", (ToolUseBlock(call_id, "read_file", {"path": path}),)),
        Message("user", (ToolResultBlock(call_id, result, is_error=error),)),
    )


def test_the_paths_a_request_names_are_the_paths_on_offer() -> None:
    allowed = guide(prompt(Message.user("How much is a croissant? Prices are in menu.txt.")))
    assert offered(allowed) == {"read_file": ["menu.txt"]}  # no list_dir (no folder named), no write_file
    assert admits(allowed, {"tool": "read_file", "arguments": {"path": "menu.txt"}})
    assert not admits(allowed, {"tool": "read_file", "arguments": {"path": "hours.md"}})

    allowed = guide(prompt(Message.user("What is in the recipes/bread folder?")))
    assert offered(allowed) == {"list_dir": ["recipes/bread"]}


def test_a_named_new_file_may_be_created_but_a_named_existing_one_is_not_overwritten() -> None:
    allowed = guide(prompt(Message.user("Write a file ideas.txt that says: try rye bread")))
    assert offered(allowed) == {"write_file": ["ideas.txt"]}, "nothing to read first: the words to write are given"
    assert admits(allowed, {"tool": "write_file", "arguments": {"path": "ideas.txt", "content": "try rye bread"}})
    assert not admits(allowed, {"tool": "write_file", "arguments": {"path": "ideas.txt", "content": "rye is bad"}})
    assert not admits(allowed, {"tool": "write_file", "arguments": {"path": "menu.txt", "content": "x"}})

    allowed = guide(prompt(Message.user("Check staff/rota.txt.")))
    assert offered(allowed) == {"read_file": ["staff/rota.txt"]}


def test_the_workspace_is_the_root_folder() -> None:
    assert offered(guide(prompt(Message.user("Which files are in this workspace?")))) == {"list_dir": ["."]}


def test_a_request_that_names_no_path_leaves_every_path_on_offer() -> None:
    allowed = guide(prompt(Message.user("Anything new?")))  # no word names a path or is in a file
    assert offered(allowed)["read_file"] == TOOLBOX.grammar()["read_file"]["properties"]["path"]["enum"]
    assert {t.name for t in allowed.tools} == {"read_file", "list_dir"}, "a question is offered no write"
    assert offered(guide(prompt(Message.user("Which files are here?")))) == {"list_dir": ["."]}


def test_a_write_of_what_a_file_says_reads_it_first() -> None:
    request = Message.user("Create a new file with the opening hours.")
    first = guide(prompt(request))
    assert offered(first) == {"read_file": ["hours.md"]}
    hours = "# Opening hours\nTuesday to Sunday, 7am to 2pm."
    then = guide(prompt(request, *read("hours.md", hours)))
    assert offered(then) == {"write_file": None}  # any new path: the workspace checks it when the tool runs
    assert admits(then, {"tool": "write_file", "arguments": {"path": "hours-copy.md", "content": hours}})
    assert not admits(then, {"tool": "write_file", "arguments": {"path": "hours-copy.md", "content": "9 to 5"}})


def test_only_required_arguments_are_offered() -> None:
    allowed = guide(prompt(Message.user("Read menu.txt")))
    assert allowed.grammar["read_file"]["properties"].keys() == {"path"}
    assert not admits(allowed, {"tool": "read_file", "arguments": {"path": "menu.txt", "start_line": 9}})
    assert "start_line" in TOOLBOX.grammar()["read_file"]["properties"]  # the tool itself still takes it


def test_no_answer_before_the_first_look() -> None:
    first = guide(prompt(Message.user("How much is a croissant?")))
    assert first.answer is None
    assert not admits(first, {"answer": "30 grams"})
    request = Message.user("How much is a croissant? See menu.txt")
    after = guide(prompt(request, *read("menu.txt", "Croissant: 2 euros")))
    assert after.answer is not None
    assert admits(after, {"answer": "Croissant: 2 euros"})


def test_a_failed_look_does_not_count() -> None:
    allowed = guide(prompt(Message.user("What is in it?"), *read("menu.txt", "no such file", error=True)))
    assert allowed.answer is None


def test_a_read_that_succeeded_is_not_offered_again_so_the_model_answers() -> None:
    allowed = guide(prompt(Message.user("Read menu.txt"), *read("menu.txt", "Croissant: 2 euros")))
    assert allowed.tools == () and allowed.answer is not None
    assert not admits(allowed, {"tool": "read_file", "arguments": {"path": "menu.txt"}})


def test_answers_quote_what_the_tools_returned() -> None:
    request = Message.user("Price of a croissant? See menu.txt")
    allowed = guide(prompt(request, *read("menu.txt", "Menu\nSourdough loaf: 6 euros\nCroissant: 2 euros")))
    assert allowed.answer is not None
    assert allowed.answer["enum"] == ["Croissant: 2 euros"], "the line that holds the words asked about"
    assert not admits(allowed, {"answer": "A croissant is 30 grams"})
    asked = guide(prompt(Message.user("What does menu.txt say?"), *read("menu.txt", "Menu\nCroissant: 2 euros")))
    assert asked.answer is not None and asked.answer["enum"] == ["Menu\nCroissant: 2 euros"], "the whole of it"


def test_after_two_looks_the_model_answers() -> None:
    looks = [*read("menu.txt", "Menu", call_id="c1"), *read("hours.md", "7am", call_id="c2")]
    allowed = guide(prompt(Message.user("What is there?"), *looks[:2]))
    assert allowed.tools, "one look: more may follow"
    allowed = guide(prompt(Message.user("What is there?"), *looks))
    assert allowed.tools == () and allowed.answer is not None


def test_the_guide_changes_the_decoding_only() -> None:
    """The grammar, the files' words and the request's reading narrow the reply; the messages, so the
    prompt's bytes and its cached prefix, are the same with and without them."""
    local = LocalProvider(base_url="http://127.0.0.1:9", api_key="k")
    p = prompt(Message.user("Who works on Friday?"), *read("staff/rota.txt", "Friday: Lena"))
    p = dataclasses.replace(p, path_terms=TOOLBOX.path_terms())
    assert p.path_terms and guide(p).answer == {"type": "string", "enum": ["Friday: Lena"]}
    bare = Prompt(p.system, p.tools, p.messages)
    with_grammar, without = local.render(p), local.render(bare)
    assert with_grammar["response_format"] != without["response_format"]
    strip = ("response_format",)
    assert json.dumps({k: v for k, v in with_grammar.items() if k not in strip}) == json.dumps(
        {k: v for k, v in without.items() if k not in strip}
    )


def test_named_paths() -> None:
    assert named_paths("See recipes/bread/rye.md, then notes.txt.") >= {"recipes/bread/rye.md", "notes.txt"}
    assert "/etc/passwd" not in named_paths("read /etc/passwd")


def test_a_named_file_missing_from_the_lists_is_never_offered_to_write_unless_asked(tmp_path: Path) -> None:
    """A binary file is not in read_file's list, yet it exists: a question about it must not turn
    into the only reply on offer being a write that overwrites it."""
    (tmp_path / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    (tmp_path / "notes.txt").write_text("hello\n")
    toolbox = Toolbox(Workspace(tmp_path).tools())
    question = Prompt(("s",), toolbox.specs, (Message.user("Describe logo.png"),), tool_grammar=toolbox.grammar())
    allowed = guide(question)
    assert offered(allowed).get("write_file") != ["logo.png"], "a question is no reason to offer that write"
    assert "read_file" in offered(allowed) and "list_dir" in offered(allowed)
    asked = Prompt(("s",), toolbox.specs, (Message.user("Write a file todo.txt"),), tool_grammar=toolbox.grammar())
    assert offered(guide(asked))["write_file"] == ["todo.txt"]


def test_past_the_grammar_bound_a_named_file_is_read_not_written(tmp_path: Path) -> None:
    for i in range(250):
        (tmp_path / f"f{i}.txt").write_text("x")
    (tmp_path / "notes.txt").write_text("hello\n")
    toolbox = Toolbox(Workspace(tmp_path).tools())
    question = Prompt(("s",), toolbox.specs, (Message.user("What is in notes.txt?"),), tool_grammar=toolbox.grammar())
    allowed = guide(question)
    assert offered(allowed).get("write_file") != ["notes.txt"]
    assert admits(allowed, {"tool": "read_file", "arguments": {"path": "notes.txt"}})
