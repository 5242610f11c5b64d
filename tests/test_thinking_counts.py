"""A session with thinking, recorded for real through the official SDK against the thinking server:
``sessions show``, replay and the budget guard count its reasoning tokens (billed as output)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tiny_agent.agent.budget import DEFAULT_OUTPUT, Budget
from tiny_agent.agent.run import Run
from tiny_agent.agent.settings import RunSettings
from tiny_agent.cli import main
from tiny_agent.context.engine import Context
from tiny_agent.providers.registry import resolve_provider
from tiny_agent.providers.thinking import parse_thinking
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.testing import BillingFake, Task
from tiny_agent.testing.thinking_server import ThinkingRules
from tiny_agent.types import Usage
from tiny_agent.whatif.replay import replay

ENV = {"ANTHROPIC_API_KEY": "sk-test-1"}
MODEL = "claude-sonnet-5"
BUDGETED = "claude-sonnet-4-6"
"""Claude 4.7 and later take no thinking budget: the budget guard's first call is priced on one that does."""


def reads(root: Path, files: int = 6) -> Task:
    for i in range(files):
        (root / f"part{i}.txt").write_text(f"line {i} of a file with words " * 80)
    return Task("read the files", [[("read_file", {"path": f"part{i}.txt"})] for i in range(files)], "All read.")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    root = tmp_path_factory.mktemp("thinking")
    ws = root / "ws"
    ws.mkdir()
    rules = ThinkingRules(redact_every=3)
    with BillingFake([reads(ws)], thinking=rules) as fake:
        settings = RunSettings(
            provider="anthropic", model=MODEL, base_url=fake.url("r", "anthropic"), workspace=str(ws),
            code_tools=False, thinking="adaptive",
        )  # fmt: skip
        with SQLiteStore(root / "s.db") as store, Run.open(store, settings=settings, env=ENV) as run:
            assert run.agent.run("Please read the files now").stop == "done"
            assert run.session is not None
            session, ledger = run.session.id, run.agent.context.ledger
        bills = fake.bills("r")
    assert rules.rejected == []
    thinking = [b.reply["usage"]["output_tokens_details"]["thinking_tokens"] for b in bills]
    assert all(thinking) and len(thinking) == len(ledger.calls)
    return root / "s.db", session, ledger, thinking


def test_sessions_show_has_each_calls_thinking(recorded, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    path, session, _, thinking = recorded
    assert main(["sessions", "show", session[:12], "--store", str(path)]) == 0
    text = capsys.readouterr().out
    shown = [int(n.replace(",", "")) for n in re.findall(r"\(thinking ([\d,]+)\)", text)]
    assert shown[: len(thinking)] == thinking, "one call line per call, its thinking as billed"
    assert re.search(rf"^output .* tokens \(thinking {sum(thinking):,}\)$", text, re.M), "and the session's sum"
    # And what it thought, one folded line a block: every third reply's came back redacted.
    thoughts = re.findall(r"^#\d+ thinking: (.*)$", text, re.M)
    assert len(thoughts) == len(thinking) and thoughts[2] == "[redacted thinking]"
    assert all(len(t) <= 100 for t in thoughts) and thoughts[0] != "[redacted thinking]"
    assert main(["sessions", "show", session[:12], "--store", str(path), "--json"]) == 0
    shown_json = json.loads(capsys.readouterr().out)
    assert shown_json["stats"]["reasoning_tokens"] == sum(thinking)
    assert [c["reasoning_tokens"] for c in shown_json["calls"]] == thinking


def test_replay_counts_the_thinking(recorded) -> None:  # type: ignore[no-untyped-def]
    path, session, _, thinking = recorded
    with SQLiteStore(path) as store:
        result = replay(store.entries(session))
    assert result.recorded.total("reasoning_tokens") == sum(thinking)
    assert result.replayed.total("reasoning_tokens") == sum(thinking), "the recorded replies are re-sent"
    assert result.recorded.to_dict()["reasoning_tokens"] == sum(thinking)


def test_the_budget_prices_the_thinking_as_output(recorded) -> None:  # type: ignore[no-untyped-def]
    _, _, ledger, thinking = recorded
    assert ledger.total.reasoning_tokens == sum(thinking)
    turns = [c for c in ledger.calls if c.purpose == "turn"]
    assert max(c.usage.output_tokens or 0 for c in turns) >= max(thinking), "output_tokens carries the thinking"
    provider = resolve_provider(
        "anthropic", model=BUDGETED, base_url="http://127.0.0.1:9", env=ENV, thinking=parse_thinking("4096")
    )
    off = resolve_provider("anthropic", model=BUDGETED, base_url="http://127.0.0.1:9", env=ENV)
    fresh = Context("system", ())
    fresh.add_user("a first task")
    with_thinking = Budget(1.0, provider).next_call(fresh)
    without = Budget(1.0, off).next_call(fresh)
    extra = provider.profile.price(Usage(0, 4096 - DEFAULT_OUTPUT, 0, 0)) or 0.0
    assert extra > 0 and with_thinking - without == pytest.approx(extra), "a first call may spend its thinking budget"


def test_cost_shows_the_thinking_inside_the_output() -> None:
    from tiny_agent.context.tokens import CallRecord, TokenLedger
    from tiny_agent.observe.call_lines import format_cost
    from tiny_agent.types import Usage

    ledger = TokenLedger()
    ledger.record(CallRecord(Usage(2_000, 1_240, 0, 0, reasoning_tokens=1_100), 0.01, 1.0, "m"))
    (output,) = [row for row in format_cost(ledger, lambda usage: 0.01) if row.startswith("output")]
    assert output == "output     1,240 tokens (thinking 1,100, billed as output)"
    ledger = TokenLedger()
    ledger.record(CallRecord(Usage(2_000, 40, 0, 0), 0.01, 1.0, "m"))
    assert "thinking" not in " ".join(format_cost(ledger, lambda usage: 0.01))
