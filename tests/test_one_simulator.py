"""One simulator: the per-call diagnosis, ``lint --session`` and the view name the same break on every
call of a recorded session (rule, path and character), and nothing on a clean call.

The session runs on the billing fake through the official SDK, with a break of every class between
clean turns: a tool added, a tool description reworded, the system prompt edited, tool_choice
changed (and back), the thinking settings changed (and back), a breakpoint past the 20-block
lookback, an earlier message edited (a tool result cleared), the model changed, the effort changed."""

from __future__ import annotations

import dataclasses
import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tiny_agent.agent.loop import DEFAULT_SYSTEM, Agent
from tiny_agent.context.byte_cause import leading_break
from tiny_agent.context.diagnosis import Before, diagnose
from tiny_agent.context.engine import Context, ContextConfig
from tiny_agent.context.entries import Clearing
from tiny_agent.context.render import Renderer
from tiny_agent.context.session import Session
from tiny_agent.observe.causes import miss_cause
from tiny_agent.observe.lint import lint_session
from tiny_agent.observe.lint_breaks import BREAK_FIXES
from tiny_agent.observe.view import serve
from tiny_agent.observe.view.data import diagnosed_break
from tiny_agent.providers.base import Provider
from tiny_agent.providers.cache_breaks import Break
from tiny_agent.providers.registry import resolve_provider
from tiny_agent.providers.thinking import parse_thinking
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.testing import BillingFake, ScriptedProvider, Task
from tiny_agent.tools.toolbox import Toolbox
from tiny_agent.tools.workspace import Workspace
from tiny_agent.types import Message, Prompt, TextBlock, ToolResultBlock, ToolSpec, Usage

from .recorded import ENV, tour

MODEL, OTHER_MODEL = "claude-sonnet-4-6", "claude-opus-4-6"
SYSTEM = DEFAULT_SYSTEM + "\nProject notes: keep every answer short, exact and kind. " * 120
EVERY_CLASS = {  # each class of break, and the category its miss line comes to (``stats`` groups by it)
    "tool-added": "tools changed",
    "tool-description-changed": "tools changed",
    "system-changed": "system prompt changed",
    "tool-choice-changed": "tool_choice changed",
    "thinking-changed": "thinking settings changed",
    "breakpoint-lookback": "lookback",
    "message-edited": "clearing old tool output changed the conversation",  # expected, and still placed
    "model-changed": "model changed",
    "effort-changed": "effort changed",
}


def _record(root: Path, store: SQLiteStore, fake: BillingFake) -> str:
    url = fake.url("r", "anthropic")

    def provider(model: str = MODEL, **settings: Any) -> Provider:
        return resolve_provider("anthropic", model=model, base_url=url, env=ENV, **settings)

    plain = provider()
    toolbox = Toolbox(Workspace(root, code_tools=False).tools())
    session = Session.start(
        store,
        workspace=str(root),
        tools=toolbox.specs,
        system=SYSTEM,
        config=ContextConfig(policy="fraction", clear_after=None),
        settings={"provider": plain.name, "model": plain.model},
    )
    ctx = session.context
    agent = Agent(plain, toolbox, context=ctx)
    agent.run("tour the alpha files")  # calls 0-2: clean after the first
    ctx.tools = (*ctx.tools, ToolSpec("note", "Write a note", {"type": "object", "properties": {}}))
    agent.run("tour the beta files")  # 3: tool added; 4: clean
    reword(ctx, " Say why.")
    agent.run("answer one")  # 5: a description reworded
    ctx.system = SYSTEM.replace("short, exact", "short, plain", 1)
    agent.run("tour the gamma files")  # 6: the system prompt edited; 7: clean
    ctx.add_user("answer with no tool")
    ctx.call(plain, ctx.prompt(tool_choice="none"), "turn")  # 8: tool_choice changed
    # Going back to the earlier setting alone reads the older entry still cached (no miss, though lint
    # warns): each way back comes with a change of an earlier level, which the line names.
    ctx.system = SYSTEM
    agent.run("tour the delta files")  # 9: the system prompt edited (tool_choice back); 10: clean
    Agent(provider(thinking=parse_thinking("2048")), toolbox, context=ctx).run("answer two")  # 11: thinking on
    reword(ctx, " Say how.")
    agent.run("tour the eps files")  # 12: a description reworded (thinking back); 13: clean
    ctx.add(Message("user", tuple(TextBlock(f"aside {i}") for i in range(25))))
    ctx.add(Message.assistant("Noted."))
    agent.run("answer three")  # 14: the newest breakpoints are far past the previous entry
    first_result = next(b for m in ctx.window() for b in m.content if isinstance(b, ToolResultBlock))
    ctx.append([Clearing({first_result.tool_use_id: "[cleared: read it again]"})])
    agent.run("tour the zeta files")  # 15: an earlier message edited; 16: clean
    Agent(provider(OTHER_MODEL), toolbox, context=ctx).run("answer four")  # 17: the model changed
    low = provider(OTHER_MODEL, thinking=parse_thinking(None, effort="low"))
    Agent(low, toolbox, context=ctx).run("answer five")  # 18: the effort changed
    session.close()
    return session.id


def reword(ctx: Context, words: str) -> None:
    """The second tool's description, with ``words`` added."""
    second = ctx.tools[1]
    ctx.tools = (ctx.tools[0], dataclasses.replace(second, description=second.description + words), *ctx.tools[2:])


def _tasks(root: Path) -> list[Task]:
    tours = [
        tour(root, name, 2 if name == "alpha" else 1) for name in ("alpha", "beta", "gamma", "delta", "eps", "zeta")
    ]
    answers = [Task(f"answer {n}", [], f"Answer {n}.") for n in ("one", "two", "three", "four", "five", "with no tool")]
    return [*tours, *answers]


def _api(port: int, token: str, path: str) -> Any:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}?token={token}", timeout=30) as answer:
        return json.loads(answer.read())


def test_diagnosis_lint_and_the_view_name_the_same_break_on_every_call(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "s.db") as store, BillingFake(_tasks(tmp_path)) as fake:
        sid = _record(tmp_path, store, fake)
        findings = [f for f in lint_session(store, sid) if f.rule in BREAK_FIXES]
        with serve(store, sid, open_browser=False) as server:
            calls = _api(server.port, server.token, f"/api/session/{sid}")["calls"]
            views = [_api(server.port, server.token, f"/api/session/{sid}/call/{c['index']}") for c in calls]
    assert len(calls) == 19 and all(c["purpose"] == "turn" for c in calls)
    named, clean = set(), 0
    for call, view in zip(calls[1:], views[1:], strict=True):
        index, miss = call["index"], call["miss"]
        linted = [f for f in findings if f.source is not None and f.source.endswith(f" call {index}")]
        breaks = view["breaks"]
        assert sorted((f.rule, f.path) for f in linted) == sorted((b["rule"], b["path"]) for b in breaks), index
        if not breaks:
            assert miss is None, (index, miss)
            clean += 1
            continue
        lead = leading_break([Break(**b) for b in breaks], "anthropic")
        assert lead is not None
        assert diagnosed_break(miss) == (lead.rule, lead.path, lead.character), (index, miss)
        finding = next(f for f in linted if (f.rule, f.path) == (lead.rule, lead.path))
        assert lead.character is None or f"character {lead.character}" in finding.message, (index, finding)
        assert view["ours"] == miss and view["cause"] == miss_cause(miss) == EVERY_CLASS[lead.rule], (index, miss)
        named.add(lead.rule)
    assert named == set(EVERY_CLASS)
    assert clean >= 6


def test_the_families_of_words_and_the_position_suffix() -> None:
    """A rewritten message and a tool_choice change, straight through ``diagnose``: each line says its
    family, then the simulator's position; the category never includes the position."""
    provider = ScriptedProvider([], model=MODEL)
    renderer = Renderer()
    read = ToolSpec("read_file", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}})
    old = Prompt((SYSTEM,), (read,), (Message.user("hello there " * 400), Message.assistant("hi"), Message.user("go")))
    new = dataclasses.replace(old, messages=(Message.user("hello where " * 400), *old.messages[1:]))
    first = renderer.render(old, provider)
    before = Before(0.0, MODEL, first.fingerprint, 9_000, old, body=first.body, wire="anthropic")
    usage = Usage(9_000, 5, 1_000, 0)
    miss = diagnose(before, Renderer().render(new, provider), provider.profile, usage, 1.0)
    assert miss is not None and miss.startswith('message #1 changed: now "hello where')
    assert miss.endswith("[message-edited at messages[0].content[0], character 6]")
    assert diagnosed_break(miss) == ("message-edited", "messages[0].content[0]", 6)
    assert miss_cause(miss) == "a message changed"
    choice = diagnose(
        before, Renderer().render(dataclasses.replace(old, tool_choice="none"), provider), provider.profile, usage, 1.0
    )
    assert choice is not None and choice.startswith("tool_choice changed: null -> ")
    assert choice.endswith(" [tool-choice-changed at tool_choice]")
    assert miss_cause(choice) == "tool_choice changed"


@pytest.mark.parametrize("line", ["the cache entry expired: 400s since the previous request (lifetime 300s)", None])
def test_a_line_without_a_position_reads_as_none(line: str | None) -> None:
    assert diagnosed_break(line) is None


def test_after_a_resume_the_previous_body_is_the_one_that_was_sent(tmp_path: Path) -> None:
    from tiny_agent.context.calling import previous_request
    from tiny_agent.testing import tool_call

    with SQLiteStore(tmp_path / "s.db") as store:
        session = Session.start(
            store,
            workspace=str(tmp_path),
            system=SYSTEM,
            tools=Toolbox(Workspace(tmp_path, code_tools=False).tools()).specs,
        )
        session.context.add_user("go")
        sent = ScriptedProvider([tool_call("read_file", "c0", path="a"), Message.assistant("done")], model=MODEL)
        session.context.complete(sent)
        session.context.add_tool_result(ToolResultBlock("c0", "contents " * 50))
        session.context.pin("Answer in one line.")
        session.context.complete(sent)
        session.close()
        again = Session.resume(store, session.id)
        before = previous_request(again.context, ScriptedProvider([], model=MODEL))
        assert before is not None and before.wire == "anthropic"
        assert before.body == sent.requests[-1]
        again.close()


def test_a_compacting_session_agrees_on_every_call_the_summary_calls_too(tmp_path: Path) -> None:
    """A summary call's request is kept in its log entry, so lint and the view compare each request with
    the one sent just before it, as the miss line does: the summary call, and the turn after it."""
    from .test_view import recorded

    where, sid = recorded(tmp_path)
    with SQLiteStore(Path(where)) as store, serve(store, sid, open_browser=False) as server:
        findings = [f for f in lint_session(store, sid) if f.rule in BREAK_FIXES or f.rule == "cache-expired"]
        calls = _api(server.port, server.token, f"/api/session/{sid}")["calls"]
        views = [_api(server.port, server.token, f"/api/session/{sid}/call/{c['index']}") for c in calls]
    purposes = [c["purpose"] for c in calls]
    assert "compaction" in purposes and purposes.index("compaction") < len(purposes) - 1
    for call, view in zip(calls[1:], views[1:], strict=True):
        index = call["index"]
        assert view["previous"] == index - 1, (index, view["previous"])
        linted = [(f.rule, f.path) for f in findings if f.source is not None and f.source.endswith(f" call {index}")]
        assert sorted(linted) == sorted((b["rule"], b["path"]) for b in view["breaks"]), index
        lead = leading_break([Break(**b) for b in view["breaks"]], "anthropic")
        said = diagnosed_break(call["miss"])
        assert said == ((lead.rule, lead.path, lead.character) if lead else None), (index, call["miss"])


BIG = "Project notes: keep every answer short, exact and kind. " * 150
ASKED = "Read the files and report what each one says, one line a file. " * 150
SAMPLES = {  # a body of each wire whose system prompt and first message are each long enough to cache
    "anthropic": {
        "model": MODEL,
        "tools": [{"name": "read_file", "description": "Read a file", "input_schema": {"type": "object"}}],
        "system": [{"type": "text", "text": BIG, "cache_control": {"type": "ephemeral"}}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": ASKED, "cache_control": {"type": "ephemeral"}}]}
        ],
    },
    "openai": {
        "model": "gpt-4o",
        "tools": [{"type": "function", "function": {"name": "read_file", "description": "Read a file"}}],
        "messages": [{"role": "system", "content": BIG}, {"role": "user", "content": ASKED}],
    },
    "responses": {
        "model": "gpt-4o",
        "tools": [{"type": "function", "name": "read_file", "description": "Read a file"}],
        "input": [{"role": "developer", "content": BIG}, {"role": "user", "content": ASKED}],
    },
}


def _set(body: dict[str, Any], dotted: str, value: object) -> dict[str, Any]:
    out = json.loads(json.dumps(body))
    *parents, last = dotted.split(".")
    place = out
    for key in parents:
        place = place.setdefault(key, {})
    place[last] = value
    return out


@pytest.mark.parametrize(
    ("wire", "profile"),
    [("anthropic", "anthropic"), ("openai", "openai"), ("responses", "responses"), ("openai", "local")],
)
def test_the_simulator_misses_on_every_setting_lint_names_from_the_level_it_names(wire: str, profile: str) -> None:
    """Each setting of the wire's table of breaks (``providers/<wire>/breaks.py``) changed alone: the
    simulator (the billing fake's, replay's, the miss line's) reads nothing from a tools-level change
    and the tools and system prompt only from a messages-level one; a setting the endpoint's cache does
    not key on (llama.cpp's response_format) reads it all, as lint finds nothing there."""
    from tiny_agent.providers.cache_breaks import prefix_breaks, wire_breaks
    from tiny_agent.providers.cache_sim import Simulator
    from tiny_agent.providers.wire import rules_of

    sample = SAMPLES[wire]
    rules = rules_of(profile, str(sample["model"]), wire)
    for setting in wire_breaks(wire).settings:
        before, after = _set(sample, setting.path, "one"), _set(sample, setting.path, "two")
        sim = Simulator(wire, str(sample["model"]), rules=rules, pricer=lambda call: 0.0)
        first, second = sim.send(0.0, before), sim.send(1.0, after)
        assert first.cache_read == 0 and second.input_tokens == first.input_tokens
        named = [b.rule for b in prefix_breaks(before, after, wire, rules)]
        if setting.path in rules.unkeyed_settings:
            assert (named, second.cache_read, second.miss) == ([], second.input_tokens, None), setting
        elif setting.level == "tools":
            assert (named, second.cache_read) == ([setting.rule], 0), setting
        else:
            assert named == [setting.rule] and 0 < second.cache_read < second.input_tokens, (setting, second)
            assert second.miss == "changed:settings", setting
