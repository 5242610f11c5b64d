"""A model switch on the Responses wire, counted: the line a resumed run prints and the line an
export prints name the reasoning items the new model cannot read, as many as there are, whatever
the number of times the window was rendered (a resume renders the previous request again to
diagnose the cache, and every call renders its own)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tiny_agent.agent.loop import AgentConfig
from tiny_agent.agent.run import Run
from tiny_agent.agent.settings import RunSettings
from tiny_agent.cli import main
from tiny_agent.observe.call_lines import format_event
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.testing.responses_server import ResponsesServer
from tiny_agent.testing.tasks import Task

ENV = {"OPENAI_API_KEY": "sk-test-switch"}
READS = Task("read the notes", [[("read_file", {"path": f"note{i}.txt"})] for i in range(2)], "Read.")


@pytest.fixture
def session(tmp_path: Path) -> Iterator[Any]:
    """``run(model, ask)`` runs one turn of a session on the test server (the first one starts it,
    each later one resumes it) and gives back the lines it printed; ``run.sid`` is its id."""
    ws = tmp_path / "ws"
    ws.mkdir()
    for i in range(2):
        (ws / f"note{i}.txt").write_text(f"note {i} says hello\n" * 20)
    with ResponsesServer([READS]) as server:

        def run(model: str, ask: str, stream: bool = False) -> list[str]:
            said: list[str] = []
            given = RunSettings(provider="openai", api="responses", model=model, base_url=server.url("switch"),
                                workspace=str(ws), code_tools=False)  # fmt: skip
            with SQLiteStore(tmp_path / "s.db") as store, Run.open(
                store, settings=given, env=ENV, agent=AgentConfig(stream=stream), resume=getattr(run, "sid", None),
                on_event=lambda event: said.append(format_event(event)),
            ) as opened:  # fmt: skip
                assert opened.agent.run(ask).stop == "done"
                assert opened.session is not None
                run.sid = opened.session.id  # type: ignore[attr-defined]
            return said

        run.server = server  # type: ignore[attr-defined]
        run.store = tmp_path / "s.db"  # type: ignore[attr-defined]
        yield run


def _notes(said: list[str]) -> list[str]:
    return [line for line in said if "cannot read" in line]


def _carried(server: ResponsesServer) -> list[str]:
    """The ids of the reasoning items the newest request carried."""
    return [x["id"] for x in server.bills("switch")[-1].body["input"] if x.get("type") == "reasoning"]


def test_the_line_counts_each_item_left_out_once_however_often_the_window_is_rendered(session: Any) -> None:
    assert _notes(session("gpt-5.6", "Please read the notes")) == []
    written = [x for b in session.server.bills("switch") for x in b.reply["output"] if x["type"] == "reasoning"]
    assert len(written) == 3, "three calls, one reasoning item each"
    said = session("gpt-5.5", "Once more, please")
    assert _notes(said) == ["[left out encrypted reasoning items gpt-5.5 cannot read: 3 of gpt-5.6]"], said
    assert _carried(session.server) == []
    said = session("gpt-5.5", "And again", stream=True)
    assert _notes(said) == ["[left out encrypted reasoning items gpt-5.5 cannot read: 3 of gpt-5.6]"], said
    assert len(_carried(session.server)) == 1, "its own item from the call before goes back"
    said = session("gpt-5.4", "A last time", stream=True)
    assert _notes(said) == ["[left out encrypted reasoning items gpt-5.4 cannot read: 2 of gpt-5.5, 3 of gpt-5.6]"]
    assert session.server.rejected == []


def test_an_export_after_a_switch_names_what_the_model_cannot_read_not_the_format(
    session: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    session("gpt-5.6", "Please read the notes")
    session("gpt-5.5", "Once more, please")
    session("gpt-5.5", "And again")  # the body asks for this answer: it holds the one before, gpt-5.5's

    def export(fmt: str) -> tuple[dict[str, Any], list[str]]:
        capsys.readouterr()
        assert main(["sessions", "export", session.sid[:12], "--format", fmt, "--store", str(session.store)]) == 0
        out = capsys.readouterr()
        return json.loads(out.out), out.err.splitlines()

    body, err = export("responses")
    assert err == ["tiny-agent: the body leaves out encrypted reasoning items gpt-5.5 cannot read: 3 of gpt-5.6"]
    assert [x["type"] for x in body["input"]].count("reasoning") == 1, "gpt-5.5's own item is in the body"
    body, err = export("openai")
    assert err == ["tiny-agent: the body leaves out 4 reasoning items (openai's own; the openai format takes none)"]
    assert "reasoning" not in json.dumps(body["messages"])
