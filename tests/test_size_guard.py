"""The size guard: a task or a tool result over the window never reaches the provider (the billing fake
counts what it is sent), the line says how to go on; the sanity limits of the window, the output cap
and the compaction threshold; and the budget hint names a budget the next call fits in."""

from __future__ import annotations

import json
import shlex
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.mcp_servers import kit
from tests.mcp_servers.kit import Cli
from tests.recorded import ENV, MODELS
from tiny_agent import Run, RunSettings, tool
from tiny_agent.agent.budget import STOP_SHARE, Budget
from tiny_agent.context.engine import Context
from tiny_agent.context.render import Renderer
from tiny_agent.context.size_guard import check
from tiny_agent.errors import RequestTooLarge
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.testing import BillingFake, Task
from tiny_agent.testing.scripted import ScriptedProvider

PARALLEL = 8
TASKS = [
    Task("review", [], "Reviewed."),
    Task("read them all at once", [[("read_file", {"path": f"big{i}.txt"}) for i in range(PARALLEL)]], "Read."),
    Task("dump the table", [[("dump", {})]], "Dumped."),
    Task("write the plan", [[("write_file", {"path": "plan.txt", "content": "x"})]], "Tried."),
]
LOUD_REFUSAL = "import sys; sys.stdin.read(); sys.stderr.write('no! ' * 500_000); sys.exit(2)"


@pytest.fixture
def fake() -> Iterator[BillingFake]:
    with BillingFake(TASKS) as server:
        yield server


cli = kit.cli


def sessions(cli: Cli) -> int:
    if not cli.store.exists():
        return 0
    with sqlite3.connect(cli.store) as db:
        return int(db.execute("SELECT count(*) FROM sessions").fetchone()[0])


def test_an_over_window_task_on_stdin_is_never_sent(
    cli: Cli, fake: BillingFake, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The finding: 10 MB on stdin went out as 2.6 million tokens into a 1-million-token window."""
    piped = tmp_path / "big.log"
    piped.write_text("a line of a very long log file\n" * 200_000)  # 6.2 MB
    with piped.open() as stdin:
        monkeypatch.setattr(sys, "stdin", stdin)
        ran = cli("--json", "review")
    assert fake.bills("r") == [], "nothing reached the model"
    assert ran.code == 2 and "Traceback" not in ran.err
    payload = json.loads(ran.out)
    assert payload["stop"] == "too_large" and payload["session"] is None and payload["calls"] == 0
    line = ran.err.splitlines()[-1]
    assert "more than fits in the 1,000,000-token window of claude-sonnet-4-6" in line
    assert "(counted)" in line, "Anthropic's free counter decided, near the limit"
    assert "shorten the task: pipe in only the part that matters" in line
    assert sessions(cli) == 0, "no session with nothing in it"


def test_a_turn_whose_tool_results_overflow_the_window_is_not_sent(cli: Cli, fake: BillingFake) -> None:
    """Each result is cut to what one may take (a quarter of the window); eight at once still do not
    fit, nothing older can be compacted, so the next request is refused rather than sent."""
    for i in range(PARALLEL):
        (cli.workspace / f"big{i}.txt").write_text(f"file {i} has many words in it\n" * 2_000)
    ran = cli("--json", "--context-window", "4000", "--max-tokens", "256", "read them all at once")
    payload = json.loads(ran.out)
    assert payload["stop"] == "too_large" and payload["exit_code"] == 2
    bills = fake.bills("r")
    assert len(bills) == 1, "the first turn went out; the overflowing one did not"
    assert all(bill.call.input_tokens < 4000 for bill in bills)
    assert "the conversation no longer fits: start a new session" in ran.err
    with SQLiteStore(cli.store) as store:
        (info,) = store.sessions()
        results = [e for e in store.entries(info.id) if e.kind == "tool_result"]
    assert len(results) == PARALLEL and all("[... cut:" in str(e.body) for e in results)


def test_a_huge_python_tool_result_is_cut_to_its_share_of_the_window(fake: BillingFake, tmp_path: Path) -> None:
    @tool
    def dump() -> str:
        """The whole table."""
        return "row of the table\n" * 1_000_000  # 17 MB

    settings = RunSettings(provider="anthropic", model=MODELS["anthropic"], base_url=fake.url("py", "anthropic"))
    with (
        SQLiteStore(tmp_path / "s.db") as store,
        Run.open(store, settings=settings, config={"context_window": 8_000}, env=ENV, tools=[dump]) as run,
    ):
        result = run.run("dump the table")
    assert result.stop == "done"
    bills = fake.bills("py")
    assert len(bills) == 2 and all(bill.call.input_tokens < 8_000 for bill in bills)
    assert "[cut: dump returned 17,000,000 characters" in json.dumps(bills[-1].body)


def test_a_hook_refusal_is_cut_like_any_tool_result(cli: Cli, fake: BillingFake) -> None:
    """The refusal a PreToolUse hook gives goes to the model without running the tool: bounded too."""
    hook = f"PreToolUse={shlex.join([sys.executable, '-c', LOUD_REFUSAL])}"
    ran = cli("--json", "--context-window", "8000", "--max-tokens", "256", "--hook", hook, "write the plan")
    assert json.loads(ran.out)["stop"] == "done"
    bills = fake.bills("r")
    assert all(bill.call.input_tokens < 8000 for bill in bills)
    assert "more than a tool result may take in this window (6,000)" in json.dumps(bills[-1].body)


@pytest.mark.parametrize(
    ("flags", "fragment"),
    [
        (["--context-window", "10"], "context_window must be between 1,024 and 20,000,000 tokens, not 10"),
        (["--context-window", "999999999"], "between 1,024 and 20,000,000 tokens, not 999,999,999"),
        (["--context-window", "4096", "--max-tokens", "5000"], "--max-tokens 5,000 leaves no room"),
        (["--context-window", "2000"], "--max-tokens 4,096 (the default) leaves no room"),
        (["--compact-at", "100"], "compact_at as a token count must be between 512 and 20,000,000, not 100"),
        (["--compact-at", "2000000"], "--compact-at 2,000,000 is past the 1,000,000-token window"),
    ],
)
def test_sanity_limits(cli: Cli, fake: BillingFake, flags: list[str], fragment: str) -> None:
    ran = cli(*flags, "review")
    assert ran.code == 2 and len(ran.lines) == 1 and fragment in ran.err, ran.err
    assert fake.bills("r") == [] and sessions(cli) == 0


def test_the_guard_counts_only_near_the_limit() -> None:
    """Far below the room, the estimate decides and the counter is not asked (a round trip saved)."""

    class Counting(ScriptedProvider):
        asked = 0

        def count_tokens(self, prompt: object) -> int | None:
            Counting.asked += 1
            return 50_000

    provider = Counting([], context_window=10_000, free_count=True)
    context = Context("system", ())
    context.add_user("hello")
    rendered = Renderer().render(context.prompt(), provider)
    check(provider, rendered, window=10_000, estimate=100)
    assert Counting.asked == 0
    with pytest.raises(RequestTooLarge, match=r"50,000 tokens \(counted\)"):
        check(provider, rendered, window=10_000, estimate=9_000)
    assert Counting.asked == 1


def test_the_budget_hint_covers_the_next_call() -> None:
    """A budget far below one call: the hint is what the next call needs, not twice the old budget."""
    provider = ScriptedProvider([], model="claude-sonnet-4-6", pricing_id="anthropic", context_window=1_000_000)
    context = Context("system", ())
    context.add_user("x " * 400_000)
    budget = Budget(0.01, provider)
    upcoming = budget.next_call(context)
    assert upcoming > 0.5, "a 200,000-token request at Sonnet prices"
    assert budget.suggested(context) >= upcoming / STOP_SHARE > 2 * budget.usd
