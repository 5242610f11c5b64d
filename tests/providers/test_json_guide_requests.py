"""The guide reads a request as a person phrased it: the file a word names, what a file holds, a
greeting, a whole file, "here", and each new request looked at anew.

The workspace here is not one the benchmark uses (a garden's files), so what passes is the class of
phrasing, not sentences the guide was tuned on.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from tiny_agent.guide.json_guide import Guide, guide
from tiny_agent.guide.request_kind import read_request
from tiny_agent.tools.toolbox import Toolbox
from tiny_agent.tools.workspace import Workspace
from tiny_agent.types import Message, Prompt, TextBlock, ToolUseBlock

FILES = {
    "LICENSE": "MIT License\nCopyright 2026 the gardeners\n",
    "watering.txt": "Tomatoes: every morning\nBasil: every other day\nLemon tree: on Sundays\n",
    "recipes/soup.md": "# Tomato soup\nSimmer 1 kg tomatoes with basil for 25 minutes.\n",
    "recipes/pesto.md": "# Pesto\nBasil, pine nuts, parmesan, olive oil.\n",
    "plants/tomatoes.md": "# Tomatoes\nPlant out in May, 60 cm apart.\n",
    "config.yaml": "greenhouse: closed\nthreshold: 12\n",
    "notes/shopping-list.txt": "Seeds\nCompost\nString\n",
}


@pytest.fixture
def garden(tmp_path: Path) -> Toolbox:
    for rel, text in FILES.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return Toolbox(Workspace(tmp_path).tools())


def allowed(toolbox: Toolbox, *messages: Message) -> Guide:
    prompt = Prompt(("s",), toolbox.specs, messages, tool_grammar=toolbox.grammar(), path_terms=toolbox.path_terms())
    return guide(prompt)


def offered(allowed: Guide) -> dict[str, Any]:
    return {name: schema["properties"].get("path", {}).get("enum") for name, schema in allowed.grammar.items()}


def looked(toolbox: Toolbox, tool: str, path: str, call_id: str) -> Sequence[Message]:
    call = ToolUseBlock(call_id, tool, {"path": path})
    return (Message("assistant", (call,)), Message("user", (toolbox.run(call),)))


@pytest.mark.parametrize(
    ("request_text", "path"),
    [
        ("how do I make the soup recipe?", "recipes/soup.md"),
        ("which license is this under", "LICENSE"),
        ("what's the Licence", "LICENSE"),
        ("show me the recipie for pesto", "recipes/pesto.md"),
        ("is the greenhouse configured to be open?", "config.yaml"),
        ("when do I plant out the tomatoes", "plants/tomatoes.md"),
        ("what is on my shopping list", "notes/shopping-list.txt"),
        ("how often does the lemon tree need water?", "watering.txt"),
        ("how often should I water the tomatoes?", "watering.txt"),  # holds both words; plants/ names one
    ],
)
def test_a_word_that_names_a_file_or_is_in_it_puts_that_file_on_offer(
    garden: Toolbox, request_text: str, path: str
) -> None:
    assert offered(allowed(garden, Message.user(request_text))) == {"read_file": [path]}


@pytest.mark.parametrize(
    ("request_text", "folder"),
    [
        ("what files are here?", "."),
        ("What's in this folder", "."),
        ("list the workspace", "."),
        ("list everything", "."),
        ("which recipes are there", "recipes"),
        ("what's in the plants folder?", "plants"),
    ],
)
def test_here_is_the_root_and_a_folder_question_lists_the_folder(
    garden: Toolbox, request_text: str, folder: str
) -> None:
    assert offered(allowed(garden, Message.user(request_text))) == {"list_dir": [folder]}


@pytest.mark.parametrize(
    ("text", "reply"),
    [
        ("hi!", "Hello! How can I help you today?"),
        ("Hello, how are you?", "Hello! I am fine."),
        ("good morning", "Hello!"),
        ("who are you?", "Hello! I am tiny-agent."),
        ("thanks a lot!", "You're welcome!"),
        ("great, thanks!", "You're welcome! Happy to help."),
        ("thank you, that was helpful", "You're welcome!"),
        ("cheers, that's all", "Goodbye!"),
        ("bye", "Goodbye! See you."),
        ("tell me a joke about tomatoes", "Why did the tomato blush? It saw the salad dressing."),
    ],
)
def test_a_request_that_asks_nothing_of_the_workspace_gets_a_short_free_reply(
    garden: Toolbox, text: str, reply: str
) -> None:
    allowed_reply = allowed(garden, Message.user(text))
    assert allowed_reply.tools == () and allowed_reply.grammar == {}
    answer = allowed_reply.answer
    assert answer is not None and "enum" not in answer
    assert re.fullmatch(answer["pattern"], reply), "a reply in kind is admitted"
    assert not re.fullmatch(answer["pattern"], "Tomatoes: every morning"), "no quote of a file"
    assert not re.fullmatch(answer["pattern"], reply.split()[0] + " ----------- -----------"), "words"
    assert not re.fullmatch(answer["pattern"], reply + " and" * 30), "a short one"


QUESTIONS_WITH_A_GREETING = [
    "hi, what's in watering.txt?",
    "thanks! and who wrote the LICENSE?",
    "ok, list the files",
    "hey, show me it",
]


@pytest.mark.parametrize("text", QUESTIONS_WITH_A_GREETING)
def test_a_greeting_with_a_question_is_a_question(garden: Toolbox, text: str) -> None:
    assert not read_request(text).chat
    assert allowed(garden, Message.user(text)).tools


@pytest.mark.parametrize(
    "text",
    ["show me the pesto recipe", "open the pesto recipe", "what does the pesto recipe say?", "what's in pesto.md"],
)
def test_a_request_to_see_a_file_is_answered_with_all_of_it(garden: Toolbox, text: str) -> None:
    request = Message.user(text)
    assert offered(allowed(garden, request)) == {"read_file": ["recipes/pesto.md"]}
    answer = allowed(garden, request, *looked(garden, "read_file", "recipes/pesto.md", "c1")).answer
    assert answer is not None and answer["enum"] == [FILES["recipes/pesto.md"].strip()]


def test_a_question_is_answered_with_the_line_that_holds_it(garden: Toolbox) -> None:
    request = Message.user("how often should I water the basil?")
    assert offered(allowed(garden, request)) == {"read_file": ["watering.txt"]}
    answer = allowed(garden, request, *looked(garden, "read_file", "watering.txt", "c1")).answer
    assert answer is not None and answer["enum"] == ["Basil: every other day"]


def test_a_question_no_line_holds_beyond_the_files_name_gets_the_whole_file(garden: Toolbox) -> None:
    """ "tomato soup" names the file and its title: which line says how long, the model cannot tell."""
    request = Message.user("how long does the tomato soup take?")
    assert offered(allowed(garden, request)) == {"read_file": ["recipes/soup.md"]}
    answer = allowed(garden, request, *looked(garden, "read_file", "recipes/soup.md", "c1")).answer
    assert answer is not None and answer["enum"] == [FILES["recipes/soup.md"].strip()]


def test_each_new_request_looks_anew_and_quotes_only_what_it_gathered(garden: Toolbox) -> None:
    first = [Message.user("show me the pesto recipe"), *looked(garden, "read_file", "recipes/pesto.md", "c1")]
    first.append(Message("assistant", (TextBlock(FILES["recipes/pesto.md"].strip()),)))
    second = Message.user("when do I water the lemon tree?")
    before_looking = allowed(garden, *first, second)
    assert before_looking.answer is None, "no answer before this request's own look"
    assert offered(before_looking) == {"read_file": ["watering.txt"]}
    after = allowed(garden, *first, second, *looked(garden, "read_file", "watering.txt", "c2")).answer
    assert after is not None and after["enum"] == ["Lemon tree: on Sundays"]
    greeting = allowed(garden, *first, Message.user("thank you!"))
    assert greeting.answer is not None and "enum" not in greeting.answer, "no quote of the pesto"


def test_a_request_that_refers_back_may_answer_from_what_was_gathered(garden: Toolbox) -> None:
    first = [Message.user("how often do the tomatoes need water?"), *looked(garden, "read_file", "watering.txt", "c1")]
    first.append(Message("assistant", (TextBlock("Tomatoes: every morning"),)))
    reply = allowed(garden, *first, Message.user("and the basil?"))
    assert reply.tools == () and reply.answer is not None and reply.answer["enum"] == ["Basil: every other day"]
    again = allowed(garden, *first, Message.user("say that again"))
    assert again.answer is not None and again.answer["enum"] == ["Tomatoes: every morning"]
    all_of_it = allowed(garden, *first, Message.user("what does it say?"))
    assert all_of_it.answer is not None and all_of_it.answer["enum"] == [FILES["watering.txt"].strip()]
    # Referring back to what holds nothing on it: look anew, where this request's words lead.
    elsewhere = allowed(garden, *first, Message.user("and what about the pesto recipe?"))
    assert offered(elsewhere) == {"read_file": ["recipes/pesto.md"]} and elsewhere.answer is None


def test_a_request_that_refers_back_looks_where_both_requests_lead(garden: Toolbox) -> None:
    """ "and the pesto?" after the soup: both are recipes; "and the basil?" after a question about the
    soup's recipe reads the recipe that has basil, the one the soup question was about."""
    first = [
        Message.user("how long does the tomato soup simmer?"),
        *looked(garden, "read_file", "plants/tomatoes.md", "c1"),
    ]
    first.append(Message("assistant", (TextBlock("# Tomatoes"),)))
    assert offered(allowed(garden, *first, Message.user("and the pesto?"))) == {"read_file": ["recipes/pesto.md"]}
    assert offered(allowed(garden, *first, Message.user("and the basil?"))) == {"read_file": ["recipes/soup.md"]}


@pytest.mark.parametrize(
    "text",
    [
        "hi!",
        "and the basil?",
        "say that again",
        "show me the pesto recipe",
        "what files are here?",
        "tell me a story about a seed",
        "what does the shopping list contain?",
    ],
)
def test_never_a_write_on_a_request_that_does_not_ask_for_one(garden: Toolbox, text: str) -> None:
    first = [Message.user("how often do the tomatoes need water?"), *looked(garden, "read_file", "watering.txt", "c1")]
    first.append(Message("assistant", (TextBlock("Tomatoes: every morning"),)))
    for messages in ([Message.user(text)], [*first, Message.user(text)]):
        assert "write_file" not in allowed(garden, *messages).grammar
