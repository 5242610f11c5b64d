"""The reading half of the boundary: events, tool inputs, lone surrogates, the streamed JSON answer."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tiny_agent.providers.decode import AnswerText, ShapeError, expect, scrub, tool_input
from tiny_agent.providers.lines import iter_sse
from tiny_agent.providers.openai.json_tools import parse_reply
from tiny_agent.types import INVALID_JSON_KEY


def test_server_sent_events() -> None:
    lines = [
        ": a comment, ignored",
        "event: message_start",
        'data: {"a":',
        "data: 1}",
        "",
        "",
        "data: [DONE]",
        "",
        "event: cut",
        "data: never closed by a blank line",
    ]
    assert list(iter_sse(lines)) == [("message_start", '{"a":\n1}'), (None, "[DONE]")]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ({"path": "a"}, {"path": "a"}),
        ('{"path": "a"}', {"path": "a"}),
        ("", {}),
        ("  ", {}),
        (None, {}),
        ('{"path": "a', {INVALID_JSON_KEY: '{"path": "a'}),
        ("[1, 2]", {INVALID_JSON_KEY: "[1, 2]"}),
        ("null", {INVALID_JSON_KEY: "null"}),
        (["x"], {INVALID_JSON_KEY: '["x"]'}),
        (3.5, {INVALID_JSON_KEY: "3.5"}),
        ('{"p": "\\ud800"}', {"p": "\ufffd"}),
    ],
)
def test_tool_input_is_always_an_object(raw: Any, expected: dict[str, Any]) -> None:
    assert tool_input(raw) == expected


def test_scrub_replaces_lone_surrogates_everywhere() -> None:
    value = {"k\udfff": ["a\ud800b", {"x": "\udc00"}], "n": 1, "ok": "😀"}
    assert scrub(value) == {"k\ufffd": ["a\ufffdb", {"x": "\ufffd"}], "n": 1, "ok": "😀"}
    json.dumps(scrub(value), ensure_ascii=False).encode("utf-8")


def test_expect_names_the_place_and_the_kinds() -> None:
    assert expect([1], list, "x") == [1]
    with pytest.raises(ShapeError, match=r"^'content' is a string, not a list$"):
        expect("hi", list, "'content'")
    with pytest.raises(ShapeError, match=r"^n is a boolean, not a whole number$"):
        expect(True, int, "n")
    with pytest.raises(ShapeError, match=r"^m is missing, not an object$"):
        expect(None, dict, "m")


def feed_in_pieces(raw: str, cuts: list[int]) -> str:
    answer = AnswerText()
    points = sorted({c % (len(raw) + 1) for c in cuts} | {0, len(raw)})
    return "".join(answer.feed(raw[a:b]) for a, b in itertools.pairwise(points))


NO_SURROGATES = st.text(st.characters(blacklist_categories=("Cs",)))


@given(
    text=NO_SURROGATES,
    cuts=st.lists(st.integers(min_value=0, max_value=10_000), max_size=12),
    ascii_only=st.booleans(),
    separators=st.sampled_from([(", ", ": "), (",", ":"), (" , ", " : ")]),
)
def test_the_streamed_answer_is_exactly_the_answer(
    text: str, cuts: list[int], ascii_only: bool, separators: tuple[str, str]
) -> None:
    raw = json.dumps({"answer": text}, ensure_ascii=ascii_only, separators=separators)
    streamed = feed_in_pieces(raw, cuts)
    assert streamed == text
    [block] = parse_reply(raw)
    assert getattr(block, "text", None) == streamed


@given(cuts=st.lists(st.integers(min_value=0, max_value=200), max_size=8))
def test_a_lone_surrogate_streams_as_a_replacement_character(cuts: list[int]) -> None:
    assert feed_in_pieces('{"answer": "a\\ud800b \\ud83d\\ude00"}', cuts) == "a\ufffdb 😀"


@pytest.mark.parametrize(
    "raw",
    [
        '{"tool": "read_file", "arguments": {"answer": "no"}}',
        '  {  "tool": "x"}',
        "plain prose, not JSON",
        '["answer"]',
    ],
)
def test_nothing_streams_from_anything_but_an_answer(raw: str) -> None:
    answer = AnswerText()
    assert [answer.feed(c) for c in raw] == [""] * len(raw)


def test_an_answer_that_turns_out_not_to_be_json_stops_streaming() -> None:
    answer = AnswerText()
    raw = '{"answer": "fine so far \\x bad escape"}'
    assert "".join(answer.feed(c) for c in raw) == "fine so far "
