"""One render per model call, and a render that reuses the last one's work is the render from scratch."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tiny_agent.agent.loop import Agent, TurnEvent
from tiny_agent.context.cache import fingerprint
from tiny_agent.context.config import ContextConfig
from tiny_agent.context.engine import Context
from tiny_agent.context.render import Renderer
from tiny_agent.context.session import Session
from tiny_agent.context.tokens import Serialized, prompt_chars
from tiny_agent.errors import CompactionError
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.testing import ScriptedProvider, tool_call
from tiny_agent.tools.toolbox import Toolbox
from tiny_agent.tools.workspace import Workspace
from tiny_agent.types import Message, ToolResultBlock, ToolSpec

READ = ToolSpec("read_file", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}})
WIRES = [
    ScriptedProvider([], wire="anthropic", model="claude-sonnet-4-6"),
    ScriptedProvider([], wire="openai", model="gpt-4o-mini"),
]


def test_a_turn_renders_its_request_once(tmp_path: Path) -> None:
    for i in range(6):
        (tmp_path / f"f{i}.txt").write_text(f"file {i}\n" * 50)
    replies = [tool_call("read_file", f"c{i}", path=f"f{i}.txt") for i in range(6)] + [Message.assistant("done")]
    toolbox = Toolbox(Workspace(tmp_path).tools())
    with SQLiteStore(tmp_path / "s.db") as store:
        session = Session.start(store, tools=toolbox.specs, system="s", config=ContextConfig(clear_after=None))
        counts: list[int] = []
        ctx = session.context
        seen = [ctx.renderer.renders]

        def on_event(event: object) -> None:
            if isinstance(event, TurnEvent):
                counts.append(ctx.renderer.renders - seen[-1])
                seen.append(ctx.renderer.renders)

        result = Agent(ScriptedProvider(replies), toolbox, context=ctx, on_event=on_event).run("read them all")
        session.close()
    assert result.stop == "done"
    assert counts == [1] * 7


def test_a_turn_serialises_only_what_was_appended() -> None:
    class Counting(Serialized):
        made = 0

        def text(self, message: Message) -> str:
            before = len(self._memo)
            text = super().text(message)
            Counting.made += len(self._memo) - before
            return text

    ctx = Context("s", (READ,), config=ContextConfig(clear_after=None))
    ctx.ledger.texts = ctx.renderer.texts = Counting()
    provider = ScriptedProvider([tool_call("read_file", f"c{i}", path=f"{i}") for i in range(30)])
    ctx.add_user("go")
    for i in range(30):
        ctx.complete(provider)
        ctx.add_tool_result(ToolResultBlock(f"c{i}", "data " * 100))
        if i == 10:
            Counting.made = 0
    # Per later turn: the reply (new) and the user message it merged the result into (new): two.
    assert Counting.made <= 2 * 19 + 2


ops = st.lists(
    st.one_of(
        st.tuples(st.just("turn"), st.integers(0, 3)),
        st.tuples(st.just("user"), st.text("abc ", min_size=1, max_size=8).filter(str.strip)),
        st.tuples(st.just("pin"), st.sampled_from(["never edit x", "be brief"])),
        st.tuples(st.just("system"), st.sampled_from(["s", "t"])),
        st.tuples(st.just("compact"), st.integers(1, 2)),
        st.tuples(st.just("clear"), st.just(0)),
        st.tuples(st.just("summary"), st.just(0)),
    ),
    min_size=1,
    max_size=25,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(script=ops)
def test_a_render_that_reuses_work_is_the_render_from_scratch(script: list[tuple[str, Any]]) -> None:
    for provider in WIRES:
        ctx = Context("s", (READ,), config=ContextConfig(clear_after=1, clear_min_tokens=0))
        ctx.add_user("first")
        counter = 0
        for kind, arg in script:
            last_user = ctx.messages[-1].role == "user"
            if kind == "turn" and last_user:
                calls = [tool_call("read_file", f"i{counter + k}", path=f"{counter + k}") for k in range(arg)]
                counter += arg
                blocks = tuple(b for c in calls for b in c.content)
                ctx.add_assistant(Message("assistant", blocks) if blocks else Message.assistant("ok"))
                for call in calls:
                    ctx.add_tool_result(ToolResultBlock(call.tool_uses[0].id, "x" * 500))
            elif kind == "user" and not last_user:
                ctx.add_user(arg)
            elif kind == "pin":
                ctx.pin(arg)
            elif kind == "system":
                ctx.system = arg
            elif kind == "compact" and last_user:
                # A summary no smaller than what it replaces is refused, the history as it was.
                with contextlib.suppress(CompactionError):
                    ctx.compact(lambda transcript: "short", keep_turns=arg)
            elif kind == "clear":
                ctx.maybe_clear()
            prompt = ctx.prompt()
            if kind == "summary" and len(prompt.messages) > 1:
                last = prompt.messages[-1]
                prompt = ctx.prompt().__class__(
                    prompt.system, prompt.tools, (*prompt.messages[:-1], Message(last.role, (*last.content,)))
                )
            incremental = ctx.renderer.render(prompt, provider)
            fresh = Renderer().render(prompt, provider)
            assert incremental.body == fresh.body == provider.render(prompt)
            assert incremental.problems == fresh.problems
            assert list(incremental.problems) == provider.profile.check(provider.render(prompt))
            assert incremental.chars == prompt_chars(prompt)
            assert incremental.fingerprint == fingerprint(prompt)
            assert json.dumps(incremental.body) == json.dumps(fresh.body)


class _FreshProfile(ScriptedProvider):
    """A provider whose profile is built anew at every access (the local provider's, while the
    server's window is unknown), equal each time; counts the messages it renders for the wire."""

    rendered = 0

    @property
    def profile(self) -> Any:
        import dataclasses

        return dataclasses.replace(self._profile)

    def wire_messages(self, message: Message, names: dict[str, str]) -> list[dict[str, Any]]:
        self.rendered += 1
        return super().wire_messages(message, names)


def test_a_profile_built_anew_each_time_does_not_render_every_message_again() -> None:
    provider = _FreshProfile([tool_call("read_file", f"c{i}", path="x") for i in range(20)])
    ctx = Context("s", (ToolSpec("read_file", "Read", {"type": "object"}),))
    ctx.add_user("go")
    for _ in range(20):
        ctx.complete(provider)
        for use in ctx.pending_calls:
            ctx.add_tool_result(ToolResultBlock(use.id, "x"))
    assert provider.rendered <= 2 * 20 + 2, provider.rendered
