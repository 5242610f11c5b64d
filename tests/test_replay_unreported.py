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
