"""Text that JSON leaves raw but ``str.splitlines`` splits at (U+2028, U+2029, U+0085, the C0
separators): an answer, a spooled entry or an exported session that holds one is read whole."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tiny_agent.observe.lint_inputs import load_bodies
from tiny_agent.observe.record import UPSTREAMS, _usage
from tiny_agent.providers.lines import iter_sse, jsonl_lines, sse_lines
from tiny_agent.store.spool import Spool
from tiny_agent.types import Entry

ODD = "a\u2028b\u2029c\x85d\x0be\x0cf\x1cg\x1dh\x1ei"


def test_the_odd_breaks_are_what_splitlines_splits_at() -> None:
    assert len(ODD.splitlines()) == 9  # the reason for the readers below


@pytest.mark.parametrize("cut", range(1, 40))
def test_sse_lines_split_at_cr_lf_and_crlf_only_wherever_the_pieces_break(cut: int) -> None:
    event = json.dumps({"t": ODD}, ensure_ascii=False)  # C0 characters escaped, the others raw
    stream = f"data: {event}\r\n\r\nevent: x\rdata: 1\r\rdata: 2\n\n"
    pieces = [stream[:cut], stream[cut:]]
    assert list(iter_sse(sse_lines(pieces))) == [(None, event), ("x", "1"), (None, "2")]
    assert json.loads(event) == {"t": ODD}


def test_a_line_not_ended_when_the_stream_ends_is_given_last() -> None:
    assert list(sse_lines(["data: 1\r\n", "data: 2\r"])) == ["data: 1", "data: 2"]


def test_jsonl_lines_keep_a_raw_line_separator() -> None:
    text = json.dumps({"t": ODD}, ensure_ascii=False) + "\r\n" + json.dumps({"u": 1}) + "\n"
    assert [json.loads(line) for line in jsonl_lines(text) if line] == [{"t": ODD}, {"u": 1}]


def test_a_spooled_entry_holding_a_line_separator_is_read_back(tmp_path: Path) -> None:
    spool = Spool("sqlite:///x.db", "s1", folder=tmp_path)
    entries = [Entry("turn", {"text": ODD}, "e1", 1, 1.0), Entry("turn", {"text": "plain"}, "e2", 2, 2.0)]
    spool.add(entries)
    assert [e.body for e in spool.entries()] == [{"text": ODD}, {"text": "plain"}]


def test_lint_reads_a_jsonl_body_holding_a_line_separator(tmp_path: Path) -> None:
    body = {"model": "claude-sonnet-5", "max_tokens": 10, "messages": [{"role": "user", "content": ODD}]}
    path = tmp_path / "bodies.jsonl"
    path.write_text(json.dumps(body, ensure_ascii=False) + "\n" + json.dumps(body, ensure_ascii=False) + "\n")
    assert [b for _, b in load_bodies(path)] == [body, body]


def test_the_recorder_reads_the_usage_of_a_stream_holding_a_line_separator() -> None:
    # Some servers put the last piece of text and the usage in one chunk.
    chunks = [
        {"choices": [{"index": 0, "delta": {"content": "x"}}]},
        {"choices": [{"index": 0, "delta": {"content": ODD}}], "usage": {"prompt_tokens": 7, "completion_tokens": 12}},
    ]
    answer = "".join(f"data: {json.dumps(c, ensure_ascii=False)}\n\n" for c in chunks) + "data: [DONE]\n\n"
    usage = _usage(UPSTREAMS["openai"], answer.encode(), "text/event-stream")
    assert (usage.input_tokens, usage.output_tokens) == (7, 12)
