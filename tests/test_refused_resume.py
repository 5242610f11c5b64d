"""A resume refused before its first call leaves the session as it was: nothing the refused command
gave (a model, a threshold, a cap) is recorded, so the next plain resume goes on as before."""

from __future__ import annotations

from pathlib import Path

import pytest

from tiny_agent.cli.app import main
from tiny_agent.observe import telemetry
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.testing import BillingFake, Task

REFUSED = [
    (["--compact-at", "9000000"], "compaction would never start"),
    (["--max-tokens", "120000", "--context-window", "100000"], "leaves no room for a request"),
    (["--thinking", "60000", "--max-tokens", "50000", "--context-window", "100000"], "leaves no room for a request"),
    (["--model", "claude-haiku-4-5", "--otel"], "pip install 'tiny-agent[otel]'"),
]


@pytest.mark.parametrize(("flags", "said"), REFUSED, ids=["compact-at", "max-tokens", "thinking", "otel"])
def test_a_refused_resume_records_nothing(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    flags: list[str],
    said: str,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    monkeypatch.setattr(telemetry, "available", lambda: False)
    (tmp_path / "a.txt").write_text("alpha " * 50)
    store = tmp_path / "s.db"
    task = Task("read a", [[("read_file", {"path": "a.txt"})]], "Read.")
    with BillingFake([task, task]) as fake:
        base = ["--provider", "anthropic", "--model", "claude-sonnet-4-6", "--base-url", fake.url("r", "anthropic"),
                "--workspace", str(tmp_path), "--store", str(store)]  # fmt: skip
        assert main([*base, "please read a"]) == 0
        with SQLiteStore(store) as opened:
            (info,) = opened.sessions()
            before = opened.entries(info.id)
        capsys.readouterr()
        sent = len(fake.bills("r"))
        assert main([*base, "--resume", info.id, *flags, "please read a"]) == 2
        assert said in capsys.readouterr().err
        assert len(fake.bills("r")) == sent, "the refused resume called nothing"
        with SQLiteStore(store) as opened:
            assert opened.entries(info.id) == before, "the refused resume recorded nothing"
        assert main([*base, "--resume", info.id, "please read a"]) == 0, capsys.readouterr().err
