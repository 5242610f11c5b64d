"""The whole loop through each real SDK over a mock transport: tool calls run, results reach the next request."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tiny_agent.agent.loop import Agent, AgentConfig, ToolEvent, TurnEvent
from tiny_agent.providers.anthropic.adapter import AnthropicProvider
from tiny_agent.providers.openai.adapter import OpenAICompatProvider
from tiny_agent.testing import ScriptedProvider, tool_call
from tiny_agent.tools.toolbox import Toolbox
from tiny_agent.tools.workspace import Workspace
from tiny_agent.types import Message, ModelResponse, ToolUseBlock, Usage


def anthropic_reply(content: list[dict[str, Any]], stop: str, usage: dict[str, int]) -> dict[str, Any]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-6",
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": usage,
    }


def openai_reply(message: dict[str, Any], finish: str, usage: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-4o-mini",
        "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}],
        "usage": usage,
    }


class Server:
    """Answers each POST with the next scripted JSON body and keeps what it was sent."""

    def __init__(self, replies: list[dict[str, Any]]) -> None:
        self.replies = replies
        self.seen: list[dict[str, Any]] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.seen.append(json.loads(request.content))
        return httpx2.Response(200, json=self.replies.pop(0))

    def client(self) -> httpx2.Client:
        return httpx2.Client(transport=httpx2.MockTransport(self))


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    (tmp_path / "README.md").write_text("tiny-agent makes context visible.\n")
    return Workspace(tmp_path)


def test_loop_through_the_anthropic_sdk(workspace: Workspace) -> None:
    server = Server(
        [
            anthropic_reply(
                [{"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "README.md"}}],
                "tool_use",
                {
                    "input_tokens": 900,
                    "output_tokens": 20,
                    "cache_read_input_tokens": 0,
                    "cache_creation_input_tokens": 0,
                },
            ),
            anthropic_reply(
                [{"type": "text", "text": "It is about context."}],
                "end_turn",
                {
                    "input_tokens": 60,
                    "output_tokens": 8,
                    "cache_read_input_tokens": 900,
                    "cache_creation_input_tokens": 0,
                },
            ),
        ]
    )
    provider = AnthropicProvider(model="claude-sonnet-4-6", api_key="k", http_client=server.client(), max_retries=0)
    events: list[object] = []
    result = Agent(provider, Toolbox(workspace.tools()), on_event=events.append).run("what is README.md about?")
    assert (result.stop, result.answer) == ("done", "It is about context.")
    second = server.seen[1]["messages"]
    assert second[1]["content"][0]["type"] == "tool_use"
    tool_result = second[2]["content"][0]
    assert tool_result["tool_use_id"] == "toolu_1"
    assert "tiny-agent makes context visible." in tool_result["content"]
    turns = [e for e in events if isinstance(e, TurnEvent)]
    assert turns[1].call.usage.input_tokens == 960, "Anthropic input excludes cache reads: added back"
    assert [e.call.name for e in events if isinstance(e, ToolEvent)] == ["read_file"]


def test_loop_through_the_openai_sdk(workspace: Workspace) -> None:
    call = {"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "README.md"}'}}
    server = Server(
        [
            openai_reply(
                {"content": None, "tool_calls": [call]},
                "tool_calls",
                {"prompt_tokens": 900, "completion_tokens": 20, "total_tokens": 920},
            ),
            openai_reply(
                {"content": "It is about context."},
                "stop",
                {
                    "prompt_tokens": 960,
                    "completion_tokens": 8,
                    "total_tokens": 968,
                    "prompt_tokens_details": {"cached_tokens": 896},
                },
            ),
        ]
    )
    provider = OpenAICompatProvider(model="gpt-4o-mini", api_key="k", http_client=server.client(), max_retries=0)
    events: list[object] = []
    result = Agent(provider, Toolbox(workspace.tools()), on_event=events.append).run("what is README.md about?")
    assert (result.stop, result.answer) == ("done", "It is about context.")
    second = server.seen[1]["messages"]
    tool_msg = next(m for m in second if m["role"] == "tool")
    assert tool_msg["tool_call_id"] == "call_1"
    assert "tiny-agent makes context visible." in tool_msg["content"]
    turns = [e for e in events if isinstance(e, TurnEvent)]
    assert (turns[1].call.usage.input_tokens, turns[1].call.usage.cache_read_tokens) == (960, 896)


def test_the_dev_mjs_story_ends_in_code(tmp_path: Path) -> None:
    """The seed's pit: the model rewrites a file it was told not to touch. The pin is in every
    request and the protected path is refused whatever the model says."""
    target = tmp_path / "apps" / "service-a" / "scripts" / "dev.mjs"
    target.parent.mkdir(parents=True)
    target.write_text("// entry point\n")
    provider = ScriptedProvider(
        [
            tool_call("write_file", "w1", path="apps/service-a/scripts/dev.mjs", content="rewritten"),
            Message.assistant("I could not edit it; I changed the config instead."),
        ]
    )
    workspace = Workspace(tmp_path, protect=["dev.mjs"])
    agent = Agent(provider, Toolbox(workspace.tools()), pins=["don't edit dev.mjs"])
    result = agent.run("make the dev server use port 4000")
    assert result.stop == "done"
    assert target.read_text() == "// entry point\n"
    refusal = provider.requests[1]["messages"][2]["content"][0]
    assert refusal["is_error"] and "protected" in refusal["content"]
    assert all("don't edit dev.mjs" in json.dumps(body["system"]) for body in provider.requests)


def test_step_limit_stops_with_a_clear_message(workspace: Workspace) -> None:
    provider = ScriptedProvider([tool_call("list_dir", f"c{i}", path=".") for i in range(3)])
    result = Agent(provider, Toolbox(workspace.tools()), config=AgentConfig(max_steps=3)).run("loop forever")
    assert result.stop == "step_limit" and result.steps == 3
    assert "--max-steps" in result.message


def test_provider_error_stops_the_run_and_keeps_history(workspace: Workspace) -> None:
    from tiny_agent.errors import AuthenticationError

    provider = ScriptedProvider([AuthenticationError("anthropic: 401 invalid x-api-key", status_code=401)])
    agent = Agent(provider, Toolbox(workspace.tools()))
    result = agent.run("hello")
    assert result.stop == "provider_error"
    assert "401" in result.message
    assert agent.context.messages[-1].text == "hello"


def test_a_bad_tool_call_goes_back_to_the_model(workspace: Workspace) -> None:
    provider = ScriptedProvider([tool_call("read_file", "c1", path=5), Message.assistant("sorry")])
    result = Agent(provider, Toolbox(workspace.tools())).run("read")
    assert result.stop == "done"
    error = provider.requests[1]["messages"][2]["content"][0]
    assert error["is_error"] and "not of type 'string'" in error["content"]


def test_the_same_failing_call_three_times_stops_the_run(workspace: Workspace) -> None:
    replies = [tool_call("read_file", f"c{i}", path="missing.txt") for i in range(5)]
    result = Agent(ScriptedProvider(replies), Toolbox(workspace.tools())).run("read it")
    assert (result.stop, result.steps) == ("repeating", 3)
    assert "repeating the same failing call" in result.message


def test_a_different_or_successful_call_resets_the_streak(workspace: Workspace) -> None:
    replies = [
        tool_call("read_file", "a", path="missing.txt"),
        tool_call("read_file", "b", path="missing.txt"),
        tool_call("read_file", "c", path="README.md"),
        tool_call("read_file", "d", path="missing.txt"),
        tool_call("read_file", "e", path="missing.txt"),
        Message.assistant("gave up"),
    ]
    result = Agent(ScriptedProvider(replies), Toolbox(workspace.tools())).run("read it")
    assert result.stop == "done"


def test_a_cut_write_file_leaves_the_file_byte_identical(tmp_path: Path) -> None:
    """The data-loss case: a write_file whose content was cut by max_tokens must never run."""
    config = tmp_path / "config.json"
    original = b'{"name": "demo", "port": 4000}\n'
    config.write_bytes(original)
    cut = ModelResponse(
        tool_call("write_file", "w1", path="config.json", content='{"name": "de'), Usage(), "max_tokens", "m"
    )
    again = ModelResponse(tool_call("write_file", "w2", path="config.json", content='{"na'), Usage(), "max_tokens", "m")
    provider = ScriptedProvider([cut, again])
    events: list[object] = []
    result = Agent(provider, Toolbox(Workspace(tmp_path).tools()), on_event=events.append).run("rename it")
    assert config.read_bytes() == original
    assert result.stop == "max_tokens"
    refusal = provider.requests[1]["messages"][-1]["content"][0]
    assert refusal["is_error"] and "cut off at the output limit" in refusal["content"]
    assert [e.result.is_error for e in events if isinstance(e, ToolEvent)] == [True, True]


def test_one_cut_call_lets_the_model_try_again(tmp_path: Path) -> None:
    cut = ModelResponse(tool_call("write_file", "w1", path="a.txt", content="par"), Usage(), "max_tokens", "m")
    provider = ScriptedProvider(
        [cut, tool_call("write_file", "w2", path="a.txt", content="short"), Message.assistant("ok")]
    )
    result = Agent(provider, Toolbox(Workspace(tmp_path).tools())).run("write a")
    assert result.stop == "done" and (tmp_path / "a.txt").read_text() == "short"


@pytest.mark.parametrize(
    ("reply", "stop"),
    [
        (ModelResponse(Message.assistant("I can't help with that."), Usage(), "refusal", "m"), "refused"),
        (ModelResponse(Message("assistant", ()), Usage(), "end_turn", "m"), "empty"),
        (ModelResponse(Message.assistant("half an ans"), Usage(), "max_tokens", "m"), "max_tokens"),
    ],
)
def test_no_answer_is_not_a_done_run(workspace: Workspace, reply: ModelResponse, stop: str) -> None:
    result = Agent(ScriptedProvider([reply]), Toolbox(workspace.tools())).run("hi")
    assert result.stop == stop


def test_ctrl_c_during_a_tool_keeps_the_context_legal(workspace: Workspace) -> None:
    from tiny_agent.context.legality import check_messages
    from tiny_agent.tools.toolbox import Tool

    def interrupt(args: dict[str, object]) -> str:
        raise KeyboardInterrupt

    toolbox = Toolbox([*workspace.tools(), Tool("slow", "slow", {"type": "object"}, interrupt)])
    calls = Message("assistant", (ToolUseBlock("a", "read_file", {"path": "README.md"}), ToolUseBlock("b", "slow", {}),
                                  ToolUseBlock("c", "read_file", {"path": "README.md"})))  # fmt: skip
    agent = Agent(ScriptedProvider([calls]), toolbox)
    result = agent.run("go")
    assert result.stop == "interrupted" and "2 tool call(s) not run" in result.message
    agent.context.add_user("next")
    assert check_messages(agent.context.window()) == []
    results = {b.tool_use_id: b for b in agent.context.messages[-1].tool_results}
    assert not results["a"].is_error and results["b"].is_error and results["c"].is_error
