"""The recorder passes a streamed answer on as it arrives: the official SDKs, streaming through it
from the billing fake, have the first event in hand while the fake still holds back the last one,
and the call's usage (in the stream's events) is recorded all the same."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest

from tiny_agent.observe.record import Recorder
from tiny_agent.store.base import CallQuery
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.testing import BillingFake, Task

ANSWER = "It grants a licence to use the software, and no right to sublicense it."


def _anthropic_events(base_url: str) -> Iterator[Any]:
    client = anthropic.Anthropic(api_key="sk-test-stream-1", base_url=base_url, max_retries=0)
    yield from client.messages.create(
        model="claude-sonnet-4-6",
        max_tokens=100,
        stream=True,
        messages=[{"role": "user", "content": "summarise the agreement"}],
    )


def _openai_events(base_url: str) -> Iterator[Any]:
    client = openai.OpenAI(api_key="sk-test-stream-2", base_url=base_url, max_retries=0)
    yield from client.chat.completions.create(
        model="gpt-4o-mini",
        stream=True,
        stream_options={"include_usage": True},
        messages=[{"role": "user", "content": "summarise the agreement"}],
    )


STREAMS = {"anthropic": _anthropic_events, "openai": _openai_events}


@pytest.mark.parametrize("wire", list(STREAMS))
def test_a_stream_reaches_the_program_as_it_arrives(tmp_path: Path, wire: str) -> None:
    first_seen = threading.Event()
    released: list[bool] = []  # whether the client's first event let the fake send its last one

    def hold() -> None:
        # A recorder that read the stream whole would pass nothing on before this returns: the wait
        # then ends by its timeout, False, and the test fails (it does not hang).
        released.append(first_seen.wait(timeout=30))

    db = tmp_path / "s.db"
    with BillingFake([Task("summarise the agreement", [], ANSWER)], hold=hold) as fake:
        with Recorder(str(db), {wire: fake.url("r", wire)}) as recorder:
            events = []
            for event in STREAMS[wire](recorder.base_url(wire)):
                first_seen.set()
                events.append(event)
        (bill,) = fake.bills("r")
    assert released == [True], "the first event reached the program before the fake sent its last"
    assert len(events) > 2
    with SQLiteStore(db) as store:
        (info,) = store.sessions()
        (row,) = store.calls(CallQuery(sessions=(info.id,)))
    assert row.status == "done"
    assert (row.input_tokens, row.output_tokens) == (bill.call.input_tokens, bill.call.output_tokens)


def test_a_whole_answer_is_still_passed_on_whole(tmp_path: Path) -> None:
    question = [{"role": "user", "content": "summarise the agreement"}]
    with (
        BillingFake([Task("summarise the agreement", [], ANSWER)]) as fake,
        Recorder(str(tmp_path / "s.db"), {"anthropic": fake.url("r", "anthropic")}) as recorder,
    ):
        client = anthropic.Anthropic(api_key="sk-test-whole", base_url=recorder.base_url("anthropic"))
        answer = client.messages.create(model="claude-sonnet-4-6", max_tokens=100, messages=question)
    assert answer.content[0].type == "text" and answer.content[0].text == ANSWER


def test_a_refused_call_is_stored_as_failed_with_the_reason(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    question = [{"role": "user", "content": "summarise the agreement"}]
    with (
        BillingFake([Task("summarise the agreement", [], ANSWER)], refuses=("temperature",)) as fake,
        Recorder(str(db), {"openai": fake.url("r", "openai")}) as recorder,
    ):
        client = openai.OpenAI(api_key="sk-test-refused", base_url=recorder.base_url("openai"), max_retries=0)
        with pytest.raises(openai.BadRequestError):
            client.chat.completions.create(model="gpt-4o-mini", temperature=0.2, messages=question)
    with SQLiteStore(db) as store:
        (info,) = store.sessions()
        (row,) = store.calls(CallQuery(sessions=(info.id,)))
        (failed,) = store.entries(info.id, kinds=("call_failed",))
    assert row.status == "failed"
    assert failed.body["error"].startswith("HTTP 400: ") and "temperature" in failed.body["error"]
