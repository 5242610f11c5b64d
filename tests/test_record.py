"""``tiny-agent record -- CMD``: a program using the official SDKs, pointed at the billing fake, has
its calls stored as a session: the bills' usage, the bodies as sent, the layers that changed and
the cause of a miss, and lint, stats and the view read it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from tiny_agent.cli.app import main
from tiny_agent.observe.lint import lint_session
from tiny_agent.observe.view import serve
from tiny_agent.store.base import CallQuery
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.testing import BillingFake, Task

CHILD = textwrap.dedent(
    """
    import anthropic, openai
    manual = "You analyse legal agreements. " + "The Licensee shall not sublicense the rights. " * 200
    client = anthropic.Anthropic(api_key="sk-test-billing-fake-1")
    history = [{"role": "user", "content": "summarise the agreement"}]
    for system in (manual, manual, manual.replace("legal", "legally binding")):
        answer = client.messages.create(
            model="claude-sonnet-4-6", max_tokens=100, messages=history,
            system=[{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}],
        )
        history = [*history, {"role": "assistant", "content": answer.content[0].text},
                   {"role": "user", "content": "and then?"}]
    chat = openai.OpenAI(api_key="sk-test-billing-fake-2")
    stream = chat.chat.completions.create(
        model="gpt-4o-mini", stream=True, stream_options={"include_usage": True},
        messages=[{"role": "system", "content": manual}, {"role": "user", "content": "summarise the agreement"}],
    )
    print("".join(c.choices[0].delta.content or "" for c in stream if c.choices))
    """
)


def test_a_programs_calls_become_a_session(tmp_path: Path, capsys: object) -> None:
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    db = tmp_path / "s.db"
    with BillingFake([Task("summarise the agreement", [], "It grants a licence.")]) as fake:
        env = {"ANTHROPIC_BASE_URL": fake.url("a", "anthropic"), "OPENAI_BASE_URL": fake.url("o", "openai")}
        old = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        try:
            assert main(["record", "--store", str(db), "--", sys.executable, str(script)]) == 0
        finally:
            for key, value in old.items():
                os.environ.pop(key) if value is None else os.environ.__setitem__(key, value)
        bills = fake.bills("a") + fake.bills("o")
    assert len(bills) == 4
    with SQLiteStore(db) as store:
        (info,) = store.sessions()
        rows = store.calls(CallQuery(sessions=(info.id,)))
        assert [r.provider for r in rows] == ["anthropic"] * 3 + ["openai"]
        assert [r.status for r in rows] == ["done"] * 4
        assert [r.cache_read_tokens for r in rows] == [b.call.cache_read for b in bills]
        assert [r.input_tokens for r in rows] == [b.call.input_tokens for b in bills]
        assert all(r.cost_usd for r in rows[:3])
        assert [json.loads(json.dumps(b.body)) for b in bills] == [
            e.body["request"] for e in store.entries(info.id, kinds=("call",))
        ], "the bodies as they were sent"
        assert [r.miss is not None for r in rows] == [False, False, True, False], "the changed system prompt"
        assert "system prompt changed at character 17" in str(rows[2].miss)
        assert str(rows[2].miss).endswith("[system-changed at system[0], character 17]"), "as the diagnosis says it"
        assert [(r.changed, r.shared_messages) for r in rows[:3]] == [((), None), ((), 1), (("system",), 3)]
        findings = lint_session(store, info.id)
        assert [(f.rule, f.path, f.request) for f in findings if f.rule == "system-changed"] == [
            ("system-changed", "system[0]", 2)
        ]
        with serve(store, info.id, open_browser=False) as server:
            detail = server.view.call(2)
            assert detail["request"]["exact"] and detail["divergence"]["path"] == "system[0]"
            assert detail["breaks"][0]["rule"] == "system-changed"
    assert main(["stats", info.id, "--store", str(db), "--json"]) == 0
    looked = json.loads(capsys.readouterr().out)  # type: ignore[attr-defined]
    assert looked["misses"] == 1 and list(looked["miss_causes"]) == ["system prompt changed"]


def test_a_command_that_cannot_start_says_so(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tiny_agent", "record", "--store", str(tmp_path / "s.db"), "--", "no-such-program-x"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")},
    )
    assert done.returncode == 2 and "cannot run no-such-program-x" in done.stderr
    assert json.dumps(done.stderr).count("Traceback") == 0
