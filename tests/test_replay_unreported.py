"""A figure the provider did not report is "?" in a replay, as in the run's lines, ``sessions show``
and ``stats``: a DeepSeek session's recorded cache writes (its API reports none) are never a 0, nor
are the writes of a replay on a cache whose API reports none."""

from __future__ import annotations

from pathlib import Path

from tiny_agent.agent.run import Run
from tiny_agent.agent.settings import RunSettings
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.testing import BillingFake, Task
from tiny_agent.whatif.figures import replay_lines
from tiny_agent.whatif.replay import replay

ENV = {"DEEPSEEK_API_KEY": "sk-test-2"}


def test_recorded_cache_writes_deepseek_did_not_report_are_unknown(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    for i in range(3):
        (ws / f"p{i}.txt").write_text(f"words of file {i} " * 200)
    task = Task("read", [[("read_file", {"path": f"p{i}.txt"})] for i in range(3)], "Done.")
    with BillingFake([task]) as fake, SQLiteStore(tmp_path / "s.db") as store:
        url = fake.url("r", "openai", provider="deepseek")
        settings = RunSettings(provider="deepseek", base_url=url, workspace=str(ws), code_tools=False)
        with Run.open(store, settings=settings, env=ENV) as run:
            assert run.agent.run("Please read the files").stop == "done"
            assert run.session is not None
            assert all(c.usage.cache_write_tokens is None for c in run.context.ledger.calls)
            entries = store.entries(run.session.id)
    result = replay(entries)
    assert result.recorded.total("cache_write_tokens") is None
    assert result.recorded.to_dict()["cache_write_tokens"] is None
    lines = replay_lines(result)
    recorded = next(line for line in lines if line.startswith("recorded: "))
    assert "write=?)" in recorded and "write=0" not in recorded
    rows = [line for line in lines if " turn " in line]
    assert rows and all(row.count("/?/") == 2 for row in rows), "recorded and replayed alike"
    assert "replayed: 3 calls" not in lines and any(
        "write=?)" in line for line in lines if line.startswith("replayed: ")
    )


def test_a_session_that_switched_to_deepseek_partway_totals_no_cache_writes(tmp_path: Path) -> None:
    """Claude's calls report their writes, DeepSeek's none: a sum of Claude's alone would read as the
    session's whole, so the total is unknown, as the run span's is (``observe.telemetry``)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    for i in range(2):
        (ws / f"p{i}.txt").write_text(f"words of file {i} " * 200)
    tasks = [Task(f"read p{i}", [[("read_file", {"path": f"p{i}.txt"})]], "Done.") for i in range(2)]
    env = {**ENV, "ANTHROPIC_API_KEY": "sk-test-1"}
    with BillingFake(tasks) as fake, SQLiteStore(tmp_path / "s.db") as store:
        claude = RunSettings(provider="anthropic", base_url=fake.url("a", "anthropic"), workspace=str(ws))
        with Run.open(store, settings=claude, env=env) as run:
            assert run.agent.run("Please read p0").stop == "done"
            assert run.session is not None
            sid = run.session.id
        url = fake.url("d", "openai", provider="deepseek")
        deepseek = RunSettings(provider="deepseek", model="deepseek-v4-flash", base_url=url)
        with Run.open(store, settings=deepseek, resume=sid, env=env) as run:
            assert run.agent.run("Please read p1").stop == "done"
            writes = [c.usage.cache_write_tokens for c in run.context.ledger.calls]
        entries = store.entries(sid)
    assert any(w is not None for w in writes) and any(w is None for w in writes)
    recorded = replay(entries).recorded
    assert recorded.total("cache_write_tokens") is None and recorded.to_dict()["cache_write_tokens"] is None
    assert recorded.total("input_tokens") == sum(c.input_tokens for c in recorded.per_call), "reported by every call"
    line = next(line for line in replay_lines(replay(entries)) if line.startswith("recorded: "))
    assert "write=?)" in line
