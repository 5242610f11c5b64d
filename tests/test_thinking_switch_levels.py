"""What a change of DeepSeek's thinking settings costs, said as the simulator bills it.

``--thinking off`` over a session with an effort drops the effort, which the cache keys with the
tools: the miss line, lint and the resume note name the switch but give the tools' consequence and
loss (the whole prefix), as the billing fake reads nothing. And a missing switch means what the
model does unasked: DeepSeek thinks, over its Anthropic-format endpoint too, so ``--thinking
adaptive`` over its default is no change to lint, the simulator, the miss line or the resume."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from tiny_agent.agent.parts import thinking_change
from tiny_agent.agent.run import Run
from tiny_agent.agent.settings import RunSettings
from tiny_agent.context.byte_cause import Side, cause_words, leading_break, position
from tiny_agent.context.entries import CallDone
from tiny_agent.context.entry_codec import read
from tiny_agent.context.render import Renderer
from tiny_agent.observe.lint import lint_bodies, lint_session
from tiny_agent.providers.cache_breaks import prefix_breaks
from tiny_agent.providers.cache_sim import Simulator
from tiny_agent.providers.registry import offline_profile
from tiny_agent.providers.thinking import parse_thinking
from tiny_agent.providers.wire import cache_rules, rules_of
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.testing import BillingFake, Task
from tiny_agent.testing.billing import Bill
from tiny_agent.testing.thinking_server import ThinkingRules

CASE = Path(__file__).parent / "data" / "lint_cases" / "thinking-off-drops-the-effort-deepseek.json"
WHOLE = "the whole prefix is written again"
MESSAGES = "the cache misses from the first message on"


def bodies() -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = json.loads(CASE.read_text())["bodies"]
    return found


def billed(wire: str, provider: str, *sent: dict[str, Any]) -> list[Any]:
    model = str(sent[0]["model"])
    sim = Simulator(wire, model, rules=rules_of(provider, model, wire), pricer=lambda call: 0.0)  # type: ignore[arg-type]
    return [sim.send(float(i), body) for i, body in enumerate(sent)]


def line(before: dict[str, Any], after: dict[str, Any], keys: tuple[str, str]) -> str:
    rules = rules_of("deepseek", "deepseek-v4-flash", "openai")
    lead = leading_break(prefix_breaks(before, after, "openai", rules), "openai")
    assert lead is not None
    sides = [Side(b, None, {"thinking": key}) for b, key in zip((before, after), keys, strict=True)]
    return cause_words(lead, sides[0], sides[1], "openai") + position(lead)


def test_off_dropping_the_effort_is_named_as_the_switch_with_the_tools_loss() -> None:
    before, after = bodies()
    first, second = billed("openai", "deepseek", before, after)
    assert second.cache_read == 0, "the effort is keyed with the tools: nothing is read"
    assert line(before, after, ("default//low", "off")) == (
        f"thinking settings changed: default//low -> off ({WHOLE}) [thinking-changed at thinking]"
    )
    rules = rules_of("deepseek", "deepseek-v4-flash", "openai")
    lead = leading_break(prefix_breaks(before, after, "openai", rules), "openai")
    assert lead is not None and lead.tokens_lost == first.input_tokens


def test_off_keeping_the_effort_still_reads_the_tools_and_system_prompt() -> None:
    before, after = bodies()
    kept = {**after, "reasoning_effort": "low"}
    first, second = billed("openai", "deepseek", before, kept)
    assert 0 < second.cache_read < first.input_tokens
    said = line(before, kept, ("default//low", "off//low"))
    assert said.startswith(f"thinking settings changed: default//low -> off//low ({MESSAGES})"), said


def test_lint_gives_the_switch_the_tools_consequence() -> None:
    findings = [f for f in lint_bodies(bodies(), "openai") if f.rule == "thinking-changed"]
    assert len(findings) == 1 and findings[0].message.endswith(WHOLE), findings[0].message


def test_the_resume_note_gives_the_consequence_of_the_effort_dropped_with_the_switch() -> None:
    profile = offline_profile("deepseek", "deepseek-v4-flash")
    off = dataclasses.replace(profile, thinking=parse_thinking("off"))
    note = thinking_change(parse_thinking(None, effort="low"), off)
    assert note == (
        f"the thinking settings differ from the session's (default//low -> off): at the next request {WHOLE}"
    )
    assert thinking_change(parse_thinking(None), off) == (
        f"the thinking settings differ from the session's (default -> off): at the next request {MESSAGES}"
    )


def test_the_fingerprints_alone_give_the_same_consequence() -> None:
    from tiny_agent.context.diagnosis import Before, diagnose
    from tiny_agent.context.engine import Context
    from tiny_agent.providers.registry import resolve_provider
    from tiny_agent.types import Message, ToolSpec, Usage

    ctx = Context("s", (ToolSpec("read_file", "Read a file", {"type": "object"}),))
    ctx.add(Message.user("hello " * 400))
    env = {"DEEPSEEK_API_KEY": "sk-test"}
    first = resolve_provider("deepseek", model="deepseek-v4-flash", thinking=parse_thinking(None, None, "low"), env=env)
    second = resolve_provider("deepseek", model="deepseek-v4-flash", thinking=parse_thinking("off"), env=env)
    before = ctx.renderer.render(ctx.prompt(), first)
    after = Renderer(ctx.state.ledger.texts).render(ctx.prompt(), second)
    prior = Before(0.0, "deepseek-v4-flash", before.fingerprint, 4000, before.prompt, (), "", before.chain)
    cause = diagnose(prior, after, second.profile, Usage(4000, 10, 0, 4000), 1.0)
    assert cause == f"thinking settings changed: default//low -> off ({WHOLE})"


def reads(ws: Path, first: int, count: int) -> Task:
    for i in range(first, first + count):
        (ws / f"p{i}.txt").write_text(f"words of file {i} " * 200)
    return Task("read", [[("read_file", {"path": f"p{i}.txt"})] for i in range(first, first + count)], "Done.")


@dataclasses.dataclass(frozen=True)
class Resumed:
    notes: list[str]
    """The resume's notes on the thinking settings."""
    last: Bill
    """The fake's bill of the session's last request before the resume."""
    bill: Bill
    """The fake's bill of the resume's first request."""
    miss: str | None
    """That call's miss line."""
    lint: list[str]
    """``lint --session``'s rules."""


def resumed(tmp_path: Path, base: dict[str, Any], first: dict[str, Any], then: dict[str, Any]) -> Resumed:
    ws = tmp_path / "ws"
    ws.mkdir()
    rules = ThinkingRules()
    with (
        BillingFake([reads(ws, 0, 2), reads(ws, 2, 2)], thinking=rules) as fake,
        SQLiteStore(tmp_path / "s.db") as store,
    ):
        env = {"ANTHROPIC_API_KEY": "sk-ant-3", "DEEPSEEK_API_KEY": "sk-2"}
        route = {**base, "base_url": fake.url("r", base.pop("wire"), provider=base.pop("bills"))}
        settings = RunSettings.of({**route, **first, "workspace": str(ws), "code_tools": False})
        with Run.open(store, settings=settings, env=env) as run:
            assert run.agent.run("Please read the first files").stop == "done"
            assert run.session is not None
            sid = run.session.id
            made = len(run.session.context.ledger.calls)
        with Run.open(store, settings=RunSettings.of({**route, **then}), resume=sid, env=env) as run:
            notes = [n for n in run.notes if "thinking settings" in n]
            assert run.agent.run("Now read the next files").stop == "done"
        done = [v.record for e in store.entries(sid) for v in read(e) if isinstance(v, CallDone)]
        found = [f.rule for f in lint_session(store, sid)]
    assert rules.rejected == []
    bills = fake.bills("r")
    return Resumed(notes, bills[made - 1], bills[made], done[made].miss, found)


def test_a_resume_off_over_an_effort_bills_and_says_the_whole_prefix(tmp_path: Path) -> None:
    base = {"provider": "deepseek", "wire": "openai", "bills": "deepseek"}
    got = resumed(tmp_path, base, {"effort": "low"}, {"thinking": "off"})
    assert got.notes == [
        f"the thinking settings differ from the session's (default//low -> off): at the next request {WHOLE}"
    ]
    assert got.last.body["reasoning_effort"] == "low" and "reasoning_effort" not in got.bill.body
    assert got.bill.body["thinking"] == {"type": "disabled"} and got.bill.call.cache_read == 0
    assert got.miss is not None and got.miss.startswith(f"thinking settings changed: default//low -> off ({WHOLE})")
    assert "thinking-changed" in got.lint


def test_deepseek_over_the_messages_wire_without_its_switch_thinks() -> None:
    text = [{"type": "text", "text": "hello " * 800, "cache_control": {"type": "ephemeral"}}]
    body = {"model": "deepseek-v4-flash", "max_tokens": 1024, "messages": [{"role": "user", "content": text}]}
    on = {**body, "thinking": {"type": "enabled"}}
    off = {**body, "thinking": {"type": "disabled"}}
    rules = cache_rules("deepseek-v4-flash", "anthropic")
    assert prefix_breaks(body, on, "anthropic", rules) == []
    assert [f for f in lint_bodies([body, on], "anthropic") if f.rule == "thinking-changed"] == []
    first, second = billed("anthropic", "anthropic", body, on)
    assert (second.cache_read, second.miss) == (first.input_tokens, None)
    assert [b.rule for b in prefix_breaks(body, off, "anthropic", rules)] == ["thinking-changed"]
    claude = {**body, "model": "claude-sonnet-5"}
    claude_on = {**claude, "thinking": {"type": "adaptive"}}
    claude_rules = cache_rules("claude-sonnet-5", "anthropic")
    assert [b.rule for b in prefix_breaks(claude, claude_on, "anthropic", claude_rules)] == ["thinking-changed"], (
        "Claude does not think unasked: its default is no switch of its own"
    )


def test_a_resume_adaptive_over_deepseeks_default_on_the_messages_wire_is_no_change(tmp_path: Path) -> None:
    base = {"provider": "anthropic", "model": "deepseek-v4-flash", "wire": "anthropic", "bills": "anthropic"}
    got = resumed(tmp_path, base, {}, {"thinking": "adaptive"})
    assert "thinking" not in got.last.body and got.bill.body["thinking"] == {"type": "enabled"}
    assert got.notes == []
    assert got.bill.call.cache_read > 0 and got.bill.call.miss is None
    assert got.miss is None
    assert "thinking-changed" not in got.lint
