"""Replays of the sessions that are not a plain run of turns: a summary call answered with a tool
call and asked again, a compaction the user asked for, a turn call that failed; and what a replay,
a look back or a run says to input it cannot take."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tiny_agent.agent.run import Run
from tiny_agent.agent.settings import RunSettings
from tiny_agent.cli import main
from tiny_agent.context.config import ContextConfig
from tiny_agent.context.session import Session
from tiny_agent.errors import CompactionError, ConfigError, ProviderConnectionError
from tiny_agent.store.base import CallQuery
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.testing import ScriptedProvider, tool_call
from tiny_agent.types import Message, ToolResultBlock, ToolSpec
from tiny_agent.whatif.replay import Policy, replay

READ = ToolSpec("read_file", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}})
MODEL = "claude-sonnet-4-6"


def provider(replies: list[object]) -> ScriptedProvider:
    return ScriptedProvider(replies, name="anthropic", model=MODEL, pricing_id="anthropic")  # type: ignore[arg-type]


def session_with(store: SQLiteStore, replies: list[object], steps: object) -> str:
    session = Session.start(store, tools=[READ], system="s " * 300, config=ContextConfig(clear_after=None))
    session.context.record_run(provider="anthropic", model=MODEL)
    steps(session.context, provider(replies))  # type: ignore[operator]
    session.close()
    return session.id


def fingerprints(store: SQLiteStore, sid: str) -> tuple[list[object], list[object]]:
    result = replay(store.entries(sid))
    return [c.fingerprint for c in result.recorded.per_call], [c.fingerprint for c in result.replayed.per_call]


def turns(ctx: object, p: ScriptedProvider, count: int, start: int = 0) -> None:
    for i in range(start, start + count):
        ctx.complete(p)  # type: ignore[attr-defined]
        ctx.add_tool_result(ToolResultBlock(f"c{i}", "data " * 400))  # type: ignore[attr-defined]


def test_a_summary_that_was_asked_again_is_replayed_call_for_call(tmp_path: Path) -> None:
    replies: list[object] = [tool_call("read_file", f"c{i}", path=f"{i}.txt") for i in range(6)]
    replies += [tool_call("read_file", "nope", path="x"), Message.assistant("the summary"), Message.assistant("ok")]

    def steps(ctx: object, p: ScriptedProvider) -> None:
        ctx.add_user("go")  # type: ignore[attr-defined]
        turns(ctx, p, 6)
        assert ctx.compact(provider=p, keep_turns=2) is not None  # type: ignore[attr-defined]
        ctx.complete(p)  # type: ignore[attr-defined]

    with SQLiteStore(tmp_path / "s.db") as store:
        sid = session_with(store, replies, steps)
        purposes = [r.purpose for r in store.calls(CallQuery(sessions=(sid,)))]
        assert purposes.count("compaction") == 2, "the first summary answer was a tool call: asked again"
        recorded, replayed = fingerprints(store, sid)
    assert replayed == recorded


def test_a_compaction_the_user_asked_for_is_done_again_where_it_was(tmp_path: Path) -> None:
    replies: list[object] = [tool_call("read_file", f"c{i}", path=f"{i}.txt") for i in range(8)]
    replies += [Message.assistant("a summary from the transcript")]
    replies += [tool_call("read_file", f"c{i}", path=f"{i}.txt") for i in range(8, 10)]

    def steps(ctx: object, p: ScriptedProvider) -> None:
        ctx.add_user("go")  # type: ignore[attr-defined]
        turns(ctx, p, 8)
        assert ctx.compact(ctx.summarizer(p), keep_turns=3) is not None  # type: ignore[attr-defined]
        turns(ctx, p, 2, start=8)

    with SQLiteStore(tmp_path / "s.db") as store:
        sid = session_with(store, replies, steps)
        marks = [e.body for e in store.entries(sid) if e.kind == "compaction"]
        assert marks[0]["manual"] and marks[0]["summarizer"] == "transcript" and marks[0]["keep_turns"] == 3
        result = replay(store.entries(sid))
    assert result.replayed.compactions == result.recorded.compactions == 1
    assert [c.fingerprint for c in result.replayed.per_call] == [c.fingerprint for c in result.recorded.per_call]


def test_a_turn_call_that_failed_is_decided_on_like_the_rest(tmp_path: Path) -> None:
    replies: list[object] = [tool_call("read_file", f"c{i}", path=f"{i}.txt") for i in range(5)]
    replies += [ProviderConnectionError("connection reset"), tool_call("read_file", "c5", path="5.txt")]

    def steps(ctx: object, p: ScriptedProvider) -> None:
        ctx.add_user("go")  # type: ignore[attr-defined]
        turns(ctx, p, 5)
        with pytest.raises(ProviderConnectionError):
            ctx.complete(p)  # type: ignore[attr-defined]
        ctx.complete(p)  # type: ignore[attr-defined]

    with SQLiteStore(tmp_path / "s.db") as store:
        sid = session_with(store, replies, steps)
        recorded, replayed = fingerprints(store, sid)
        rows = store.calls(CallQuery(sessions=(sid,)))
    assert replayed == recorded and len(recorded) == 6
    retry = rows[-1]
    assert rows[-2].status == "failed" and "messages" not in retry.changed, "compared with the last answer"


def test_replay_of_an_unreadable_entry_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "s.db"
    replies: list[object] = [tool_call("read_file", "c0", path="0.txt"), Message.assistant("done")]

    def steps(ctx: object, p: ScriptedProvider) -> None:
        ctx.add_user("go")  # type: ignore[attr-defined]
        turns(ctx, p, 1)
        ctx.complete(p)  # type: ignore[attr-defined]

    with SQLiteStore(db) as store:
        sid = session_with(store, replies, steps)
    with sqlite3.connect(db) as raw:
        raw.execute('UPDATE entries SET body = \'{"v": 1, "content": [{"type": "image"}]}\' WHERE kind = \'user\'')
    assert main(["replay", sid, "--store", str(db)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cannot be read" in err[0] and sid[:12] in err[0] and str(db) in err[0], err


def test_replay_and_stats_never_create_a_store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    typo = tmp_path / "typo.db"
    assert main(["replay", "abc", "--store", str(typo)]) == 2
    assert main(["stats", "--store", str(typo)]) == 2
    assert not typo.exists()
    assert capsys.readouterr().err.count("no session store at") == 2


def test_a_typo_in_the_thresholds_is_one_line_before_anything_starts(tmp_path: Path) -> None:
    started: list[object] = []

    def resolve(*args: object, **kwargs: object) -> ScriptedProvider:
        started.append(args)
        return ScriptedProvider([])

    import tiny_agent.agent.parts as run_module

    original = run_module.resolve_provider
    run_module.resolve_provider = resolve  # type: ignore[assignment]
    try:
        with SQLiteStore(tmp_path / "s.db") as store:
            for config, fragment in (
                ({"keep_turn": 3}, "unknown context setting 'keep_turn'"),
                ({"keep_turns": "3"}, "keep_turns must be int, not '3'"),
                ({"compact_at": True}, "compact_at must be int or float, not True"),
            ):
                with pytest.raises(ConfigError, match=fragment):
                    Run.open(store, settings=RunSettings(workspace=str(tmp_path)), config=config)
    finally:
        run_module.resolve_provider = original
    assert started == [], "the provider (a server, maybe) is not built for a run that cannot start"
    with pytest.raises(ConfigError, match="not a setting of the engine"):
        Session.start(SQLiteStore(tmp_path / "t.db")).context.configure(keep_turn=2)


def test_a_plot_that_cannot_be_written_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "s.db"
    replies: list[object] = [Message.assistant("done")]

    def steps(ctx: object, p: ScriptedProvider) -> None:
        ctx.add_user("go")  # type: ignore[attr-defined]
        ctx.complete(p)  # type: ignore[attr-defined]

    with SQLiteStore(db) as store:
        sid = session_with(store, replies, steps)
    assert main(["stats", sid, "--store", str(db), "--plot", str(tmp_path / "missing" / "p.png")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "does not exist" in err[0] and "Traceback" not in err[0], err


def test_every_setting_has_its_type_checked() -> None:
    from dataclasses import fields

    from tiny_agent.context import config

    assert set(config._KINDS) == config.CONFIG_KEYS
    for field in fields(ContextConfig):
        with pytest.raises(ConfigError, match=f"^{field.name} must be "):
            ContextConfig.of({field.name: ["a list"]})


def test_a_manual_compaction_that_failed_is_billed_where_it_was_and_takes_no_summary(tmp_path: Path) -> None:
    replies: list[object] = [tool_call("read_file", f"c{i}", path=f"{i}.txt") for i in range(8)]
    replies += [Message.assistant("huge " * 20000)]  # the user's /compact: a summary too big, refused
    replies += [Message.assistant("a short policy summary")]  # then the policy's compaction
    replies += [tool_call("read_file", f"c{i}", path=f"{i}.txt") for i in range(8, 10)]
    config = ContextConfig(clear_after=None, policy="fraction", compact_at=3500, keep_turns=2)
    with SQLiteStore(tmp_path / "s.db") as store:
        session = Session.start(store, tools=[READ], system="s " * 300, config=config)
        session.context.record_run(provider="anthropic", model=MODEL)
        ctx, p = session.context, provider(replies)
        ctx.add_user("go")
        turns(ctx, p, 8)
        with pytest.raises(CompactionError, match="not smaller"):
            ctx.compact(ctx.summarizer(p), keep_turns=3)
        for i in range(8, 10):
            ctx.maybe_clear(p)
            ctx.maybe_compact(p)
            turns(ctx, p, 1, start=i)
        session.close()
        result = replay(store.entries(session.id))
    recorded, replayed = result.recorded.per_call, result.replayed.per_call
    assert [c.purpose for c in recorded].count("compaction") == 2 and result.recorded.compactions == 1
    assert [c.purpose for c in replayed] == [c.purpose for c in recorded]
    assert [c.fingerprint for c in replayed] == [c.fingerprint for c in recorded]
    assert sum(c.cost_usd or 0 for c in replayed) == pytest.approx(sum(c.cost_usd or 0 for c in recorded))


def test_a_window_override_on_resume_is_not_the_models_window(tmp_path: Path) -> None:
    replies: list[object] = [tool_call("read_file", f"c{i}", path=f"{i}.txt") for i in range(10)]
    replies += [Message.assistant("done")]
    config = ContextConfig(clear_after=None, policy="fraction")
    with SQLiteStore(tmp_path / "s.db") as store:
        session = Session.start(store, tools=[READ], system="s " * 300, config=config)
        session.context.record_run(provider="anthropic", model=MODEL)
        ctx, p = session.context, provider(replies)
        ctx.add_user("go")
        for i in range(10):
            ctx.maybe_clear(p)
            ctx.maybe_compact(p)
            turns(ctx, p, 1, start=i)
        # As `--resume ID --context-window 12000 --compact-at 0.4` records it: past the threshold, and
        # still room for the request and its 4,096-token reply (the size guard sends nothing larger).
        ctx.configure(context_window=12_000, compact_at=0.4)
        ctx.complete(p)
        session.close()
        result = replay(store.entries(session.id))
    assert result.recorded.compactions == result.replayed.compactions == 0
    assert [c.fingerprint for c in result.replayed.per_call] == [c.fingerprint for c in result.recorded.per_call]


def test_a_session_that_names_no_provider_replays_on_the_one_given(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "s.db") as store:
        session = Session.start(store, tools=[READ], system="s")
        session.context.add_user("go")
        session.context.complete(ScriptedProvider([Message.assistant("done")], name="", model=MODEL))
        session.close()
        entries = store.entries(session.id)
    with pytest.raises(ConfigError, match="give --provider"):
        replay(entries)
    result = replay(entries, Policy(provider="anthropic"))
    assert len(result.replayed.per_call) == len(result.recorded.per_call) == 1
    assert result.replayed.per_call[0].cost_usd


def test_a_setting_given_as_none_is_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tiny_agent.agent.parts as run_module

    monkeypatch.setattr(run_module, "resolve_provider", lambda *a, **k: ScriptedProvider([]))
    with SQLiteStore(tmp_path / "s.db") as store:
        settings = RunSettings(workspace=str(tmp_path))
        with Run.open(store, settings=settings, config={"clear_after": None, "keep_turns": 2}) as run:
            config = run.agent.context.config
            sid = run.session.id if run.session else ""
        assert config.clear_after is None and config.keep_turns == 2, "None means never clear, not the default"
        with Run.open(store, settings=settings, resume=sid) as run:
            assert run.agent.context.config.clear_after is None, "and the session remembers it"
