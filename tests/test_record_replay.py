"""``replay`` on a session ``tiny-agent record`` made: the program's bodies priced again under another
cache lifetime, tiny-agent's own breakpoints or none; each prediction held against what the billing
fake bills for the same bodies so changed, sent for real. Compaction is refused in one line, and the
view's what-if table replays a recorded session too."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import anthropic
import pytest

from tiny_agent.cli.app import main
from tiny_agent.errors import ConfigError
from tiny_agent.observe.record import Recorder
from tiny_agent.observe.view import serve
from tiny_agent.providers.cache_rules import TTLS
from tiny_agent.providers.registry import offline_profile
from tiny_agent.providers.remark import planned, unmarked, with_ttl
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.testing import BillingFake, Task
from tiny_agent.types import CachePlan
from tiny_agent.whatif.bodies import REFUSED, replay_bodies
from tiny_agent.whatif.figures import Figures, Policy
from tiny_agent.whatif.replay import Recording, replay

MODEL = "claude-sonnet-4-6"
MANUAL = "You analyse legal agreements. " + "The Licensee shall not sublicense the rights. " * 120
CLAUSE = "Each clause binds the Licensee for the term of the agreement and after it. " * 80
TASK = Task("summarise the agreement", [], "It grants a licence.")


def _conversation(client: anthropic.Anthropic) -> None:
    """Four calls of a growing conversation; the program marks only its system prompt, so its
    messages are never cached."""
    history: list[dict[str, Any]] = [{"role": "user", "content": f"summarise the agreement\n{CLAUSE}"}]
    system = [{"type": "text", "text": MANUAL, "cache_control": {"type": "ephemeral"}}]
    for n in range(4):
        answer = client.messages.create(model=MODEL, max_tokens=100, system=system, messages=history)
        text = answer.content[0].text if answer.content[0].type == "text" else ""
        history = [*history, {"role": "assistant", "content": text}, {"role": "user", "content": f"{n}\n{CLAUSE}"}]


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, list[Mapping[str, Any]]]:
    """The store, the recorded session's id, and the bodies the program sent."""
    db = tmp_path_factory.mktemp("recorded") / "s.db"
    with BillingFake([TASK]) as fake:
        with Recorder(str(db), {"anthropic": fake.url("rec", "anthropic")}) as recorder:
            _conversation(anthropic.Anthropic(api_key="sk-test-replay", base_url=recorder.base_url("anthropic")))
        bodies = [b.body for b in fake.bills("rec")]
    return db, recorder.session_id, bodies


def _recording(db: Path, sid: str) -> Recording:
    with SQLiteStore(db) as store:
        return Recording.of(store.entries(sid))


def _billed(bodies: list[Mapping[str, Any]], change: Callable[[Mapping[str, Any]], dict[str, Any]]) -> list[Any]:
    """What the fake bills for ``bodies``, each changed by ``change``, sent in order to a fresh cache."""
    with BillingFake([TASK]) as fake:
        client = anthropic.Anthropic(api_key="sk-test-replay", base_url=fake.url("again", "anthropic"))
        for body in bodies:
            client.messages.create(**change(body))
        return [b.call for b in fake.bills("again")]


def test_as_recorded_the_replay_is_the_recording(session: tuple[Path, str, list[Mapping[str, Any]]]) -> None:
    db, sid, _ = session
    result = replay(_recording(db, sid))
    assert len(result.recorded.per_call) == 4
    assert result.replayed.per_call == result.recorded.per_call
    assert not result.replayed.estimated and result.recorded.cost_usd


def _plan(body: Mapping[str, Any]) -> CachePlan:
    """The engine's plan for four messages or more: the tools, the system, the newest message and the
    one before the newest assistant message (``context.cache.plan_cache``)."""
    last = len(body["messages"]) - 1
    return CachePlan(message_indices=(last - 2, last) if last >= 2 else (last,))


CHANGES: dict[str, tuple[Policy, Callable[[Mapping[str, Any]], dict[str, Any]]]] = {
    "cache-ttl=1h": (Policy(cache_ttl="1h"), lambda body: with_ttl(body, "anthropic", "1h")),
    "cache-marks=none": (Policy(cache_marks="none"), lambda body: unmarked(body, "anthropic")),
    "cache-marks=own": (
        Policy(cache_marks="own"),
        lambda body: planned(body, "anthropic", _plan(body), offline_profile("anthropic", MODEL).cache, TTLS[0]),
    ),
}


@pytest.mark.parametrize("name", list(CHANGES))
def test_a_what_if_predicts_what_the_changed_bodies_are_billed(
    session: tuple[Path, str, list[Mapping[str, Any]]], name: str
) -> None:
    db, sid, bodies = session
    policy, change = CHANGES[name]
    result = replay(_recording(db, sid), policy)
    billed = _billed(bodies, change)
    predicted = [(c.input_tokens, c.cache_read_tokens, c.cache_write_tokens) for c in result.replayed.per_call]
    assert predicted == [(b.input_tokens, b.cache_read, b.cache_write) for b in billed]
    assert sum(c.cost_usd or 0 for c in result.replayed.per_call) == pytest.approx(sum(b.usd for b in billed))
    assert result.replayed.estimated and result.policy.describe() == name


def test_the_what_ifs_differ_as_the_cache_rules_say(session: tuple[Path, str, list[Mapping[str, Any]]]) -> None:
    db, sid, _ = session
    recording = _recording(db, sid)
    recorded = recording.figures
    own = replay(recording, Policy(cache_marks="own")).replayed
    none = replay(recording, Policy(cache_marks="none")).replayed
    hour = replay(recording, Policy(cache_ttl="1h")).replayed
    assert own.total("cache_read_tokens") > recorded.total("cache_read_tokens"), "the messages are cached too"
    assert none.total("cache_read_tokens") == none.total("cache_write_tokens") == 0
    assert hour.total("cache_write_tokens") == recorded.total("cache_write_tokens")
    assert (hour.cost_usd or 0) > (recorded.cost_usd or 0), "an hour's write costs twice, not 1.25x"
    five = replay(recording, Policy(cache_ttl="5m")).replayed
    assert _bills(five) == _bills(recorded) and not five.estimated, "the program's marks were 5m already"


def _bills(figures: Figures) -> list[tuple[int, int, int, int, float | None]]:
    return [
        (c.input_tokens, c.cache_read_tokens, c.cache_write_tokens, c.output_tokens, c.cost_usd)
        for c in figures.per_call
    ]


def test_what_a_recording_cannot_be_replayed_under_says_so(session: tuple[Path, str, list[Mapping[str, Any]]]) -> None:
    db, sid, _ = session
    recording = _recording(db, sid)
    with pytest.raises(ConfigError, match="not compaction or clearing"):
        replay(recording, Policy({"compact_at": 0.5}))
    with pytest.raises(ConfigError, match="anthropic wire: its body cannot be priced on deepseek"):
        replay(recording, Policy(provider="deepseek"))
    with pytest.raises(ConfigError, match="cache marks 'some'"):
        replay_bodies(recording.bodies, recording.figures, Policy(cache_marks="some"))


def test_the_cli_replays_a_recorded_session(
    session: tuple[Path, str, list[Mapping[str, Any]]], capsys: pytest.CaptureFixture[str]
) -> None:
    db, sid, _ = session
    assert main(["replay", sid, "--store", str(db), "--cache-marks", "own"]) == 0
    out = capsys.readouterr().out
    assert "replay under the recorded bodies (changed: cache-marks=own)" in out
    assert "replayed: 4 calls" in out and "(estimated)" in out
    assert main(["replay", sid, "--store", str(db), "--sweep", "cache-ttl=5m,1h", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["sweep"]
    assert [r["policy"] for r in rows] == ["cache-ttl=5m", "cache-ttl=1h"] and rows[0]["cheapest"]
    assert main(["replay", sid, "--store", str(db), "--compact-at", "0.5"]) == 2
    err = capsys.readouterr().err
    assert REFUSED in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert main(["stats", sid, "--store", str(db), "--json"]) == 0


def test_the_views_what_ifs_replay_a_recorded_session(session: tuple[Path, str, list[Mapping[str, Any]]]) -> None:
    db, sid, _ = session
    with SQLiteStore(db) as store, serve(store, sid, open_browser=False) as server:
        rows = server.view.what_ifs()
    assert [r["policy"] for r in rows] == [
        "as recorded",
        "cache-ttl=1h",
        "cache-ttl=5m",
        "cache-marks=own",
        "cache-marks=none",
    ]
    assert not any("error" in r for r in rows)
    assert rows[0]["calls"] == 4 and not rows[0]["estimated"] and rows[3]["estimated"]
