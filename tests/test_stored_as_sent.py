"""What the model read and thought is stored as the window held it, so a resume sends the prefix the
last request sent: a credential of a known shape in a file the model read, or in its signed thinking,
is not rewritten on its way to the store (that broke the thinking blocks' signatures, and missed the
cache). Keys (registered secrets) are hidden before the model ever reads them, so none is stored."""

from __future__ import annotations

from pathlib import Path

import pytest

from tiny_agent.agent.run import Run
from tiny_agent.agent.settings import RunSettings
from tiny_agent.redaction import register_secret
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.testing import BillingFake, Task
from tiny_agent.testing.thinking_server import ThinkingRules

ENV = {"ANTHROPIC_API_KEY": "sk-test-stored-as-sent"}
URL = "postgres://app:s3cretpw9@db.internal/prod"
KEY = "sk-live-never-stored-0123456789"


def reads(ws: Path, first: int, count: int) -> Task:
    for i in range(first, first + count):
        (ws / f"p{i}.txt").write_text(f"DATABASE_URL={URL}\nTOKEN={KEY}\n" + f"words of file {i} " * 150)
    return Task("read", [[("read_file", {"path": f"p{i}.txt"})] for i in range(first, first + count)], "Done.")


@pytest.mark.parametrize(
    ("model", "thinking"),
    [("claude-sonnet-5", "adaptive"), ("claude-sonnet-4-6", "2048")],  # Claude 5 takes no budget
    ids=["claude-sonnet-5", "claude-sonnet-4-6"],
)
def test_a_resume_sends_the_prefix_the_last_request_sent(tmp_path: Path, model: str, thinking: str) -> None:
    register_secret(KEY)
    ws = tmp_path / "ws"
    ws.mkdir()
    rules = ThinkingRules(extra=f" The service connects with {URL}.", redact_every=3)
    tasks = [reads(ws, 0, 3), reads(ws, 3, 2)]
    with BillingFake(tasks, thinking=rules) as fake, SQLiteStore(tmp_path / "s.db") as store:
        base = {"provider": "anthropic", "model": model, "base_url": fake.url("r", "anthropic"), "thinking": thinking}
        first_run = RunSettings.of({**base, "workspace": str(ws), "code_tools": False})
        with Run.open(store, settings=first_run, env=ENV, pins=[f"The token {KEY} is never printed."]) as run:
            assert run.agent.run("Please read the first files").stop == "done"
            assert run.session is not None
            sid = run.session.id
        first = len(fake.bills("r"))
        with Run.open(store, settings=RunSettings.of(base), resume=sid, env=ENV) as run:
            result = run.agent.run("Now read the next files")
            assert result.stop == "done", result.error
        bills = fake.bills("r")
    assert rules.rejected == []
    last, resumed = bills[first - 1], bills[first]
    assert resumed.call.cache_read >= last.call.cache_read + last.call.cache_write - 50, "the resume read the cache"
    assert URL in str(last.body) and URL in str(resumed.body)
    assert not [b for b in bills if KEY in str(b.body)], "the model never reads a key, in a pin or a tool result"
    stored = (tmp_path / "s.db").read_bytes()
    assert KEY.encode() not in stored and URL.encode() in stored
