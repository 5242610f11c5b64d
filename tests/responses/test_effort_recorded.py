"""The reasoning effort on the Responses API is a recorded thinking setting, as on the other wires: a
session resumed with another effort misses with the effort named in the line (the server's reason
agrees), ``lint --session`` finds that one change and no other, and a replay under the session's own
policy is the recording, call by call."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.providers.test_openai_cache_render import conversation
from tiny_agent.agent.events import TurnEvent
from tiny_agent.agent.run import Run
from tiny_agent.agent.settings import RunSettings
from tiny_agent.context.tokens import CallRecord
from tiny_agent.observe.call_lines import format_event
from tiny_agent.observe.lint import lint_session
from tiny_agent.providers.registry import resolve_provider
from tiny_agent.providers.thinking import parse_thinking
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.testing import Task
from tiny_agent.testing.responses_server import ResponsesServer
from tiny_agent.types import Usage
from tiny_agent.whatif.figures import CallFigures
from tiny_agent.whatif.replay import replay

ENV = {"OPENAI_API_KEY": "sk-test-effort"}
COMPACTING = {"policy": "fraction", "compact_at": 6000, "keep_turns": 2}


def row(c: CallFigures) -> tuple[object, ...]:
    return (c.purpose, c.input_tokens, c.cache_read_tokens, c.cache_write_tokens, c.output_tokens)


@pytest.fixture
def session(tmp_path: Path) -> Iterator[Any]:
    ws = tmp_path / "ws"
    ws.mkdir()
    for i in range(12):
        (ws / f"f{i}.txt").write_text(f"file {i} holds a long line of words " * 60)
    (ws / "a.txt").write_text("alpha " * 40)
    many = Task("read many", [[("read_file", {"path": f"f{i}.txt"})] for i in range(12)], "Read them all.")
    one = Task("read a", [[("read_file", {"path": "a.txt"})]], "Read a: it says alpha.")
    with SQLiteStore(tmp_path / "s.db") as store, ResponsesServer([many, one]) as server:

        def record(route: str, first: str, then: str) -> tuple[str, list[str]]:
            base = {"provider": "openai", "api": "responses", "model": "gpt-5.6", "base_url": server.url(route),
                    "workspace": str(ws)}  # fmt: skip
            said: list[str] = []
            with Run.open(store, settings=RunSettings.of({**base, "effort": first}), env=ENV, config=COMPACTING,
                          on_event=lambda e: said.append(format_event(e))) as run:  # fmt: skip
                assert run.agent.run("please read many").stop == "done"
                assert run.session is not None
                sid = run.session.id
            with Run.open(store, settings=RunSettings.of({**base, "effort": then}), env=ENV, resume=sid,
                          config=COMPACTING, on_event=lambda e: said.append(format_event(e))) as run:  # fmt: skip
                assert run.agent.run("please read a").stop == "done"
            assert server.rejected == []
            return sid, [line for line in said if line.startswith("[turn")]

        record.store = store  # type: ignore[attr-defined]
        record.server = server  # type: ignore[attr-defined]
        yield record


def test_the_effort_is_the_profiles_thinking_and_in_the_calls_fingerprint() -> None:
    provider = resolve_provider(
        "openai", api="responses", model="gpt-5.6", env=ENV, thinking=parse_thinking(None, None, "low")
    )
    assert provider.profile.thinking.effort == "low"
    ctx = conversation()
    rendered = ctx.legal(ctx.prompt(), provider, sending=False)
    assert rendered.body["reasoning"] == {"effort": "low"} and rendered.fingerprint["thinking"] == "default//low"
    off = resolve_provider("openai", api="responses", model="gpt-5.6", env=ENV, thinking=parse_thinking("off"))
    assert off.profile.thinking.mode == "off" and ctx.render(off)["reasoning"] == {"effort": "none"}


def test_an_effort_change_on_resume_is_named_in_the_line_and_found_once_by_lint(session: Any) -> None:
    sid, lines = session("change", "low", "high")
    bills = session.server.bills("change")
    assert [b.body["reasoning"]["effort"] for b in bills][-2:] == ["high", "high"]
    changed = next(i for i, b in enumerate(bills) if b.body["reasoning"]["effort"] == "high")
    assert bills[changed].reply["prompt_cache_diagnostics"]["reason"] == "reasoning_effort_changed"
    resumed = lines[-2]
    assert "cache miss: effort changed" in resumed and "unexplained" not in resumed, resumed
    assert "server:" not in resumed, "the server's reason and ours name the same layer"
    efforts = [f for f in lint_session(session.store, sid) if f.rule == "effort-changed"]
    assert len(efforts) == 1, [(f.path, f.message) for f in efforts]
    assert '"low"' in efforts[0].excerpt and '"high"' in efforts[0].excerpt, efforts[0]


@pytest.mark.parametrize("then", ["low", "high"])
def test_a_replay_under_the_sessions_own_policy_is_the_recording(session: Any, then: str) -> None:
    sid, _ = session(f"replay-{then}", "low", then)
    result = replay(session.store.entries(sid))
    assert [row(c) for c in result.replayed.per_call] == [row(c) for c in result.recorded.per_call]
    assert result.replayed.cost_usd == pytest.approx(result.recorded.cost_usd, rel=1e-6)


@pytest.mark.parametrize(
    ("ours", "server"),
    [
        ("unexplained: read 0 of the 4,311 tokens the previous request sent", "reasoning_effort_changed"),
        (None, "service_tier_changed"),
        ("message #3 changed: now ..., was ...", "prompt_cache_key_changed"),
    ],
)
def test_a_server_reason_ours_does_not_name_is_shown_beside_ours(ours: str | None, server: str) -> None:
    line = call_line(ours, server)
    assert f"cache miss: server: {server}; ours: {ours or 'none'}" in line, line


@pytest.mark.parametrize(
    ("ours", "server"),
    [
        ('effort changed: "low" -> "high" [effort-changed at reasoning.effort]', "reasoning_effort_changed"),
        ("cache key changed: ... [cache-key-changed at prompt_cache_key]", "prompt_cache_key_changed"),
        ("a compaction replaced the conversation (expected: ...)", "context_compacted"),
        ("unexplained: read 0 of the 4,311 tokens", "comparison_response_not_found"),
    ],
)
def test_a_server_reason_that_names_our_layer_leaves_the_line_as_ours(ours: str, server: str) -> None:
    line = call_line(ours, server)
    assert f"cache miss: {ours}" in line and "server:" not in line, line


def call_line(ours: str | None, server: str) -> str:
    usage = Usage(input_tokens=100, output_tokens=10, cache_read_tokens=0, cache_write_tokens=0)
    call = CallRecord(usage, 0.01, 0.1, "gpt-5.6", miss=ours, provider_miss=server)
    return format_event(TurnEvent(1, call, 0, "end_turn"))
