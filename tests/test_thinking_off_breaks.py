"""A change of the thinking settings takes the earlier turns' reasoning with it (Claude's thinking
blocks stripped when thinking goes off, DeepSeek's reasoning_content no longer sent): ``lint`` and
the view name that as the settings' change alone, not as a message dropped or edited besides, whose
advice ("never drop earlier messages") would send the user after a bug that is not there. An edit of
its own in the same request is still named."""

from __future__ import annotations

from typing import Any

from tiny_agent.providers.cache_breaks import prefix_breaks

TASK = {"role": "user", "content": [{"type": "text", "text": "read the files " * 300}]}
CALL = {"type": "tool_use", "id": "t1", "name": "read_file", "input": {"path": "a.txt"}}
RESULT = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "alpha " * 200}]}


def anthropic(thinking: dict[str, Any], turn: list[dict[str, Any]], task: dict[str, Any] = TASK) -> dict[str, Any]:
    messages = [task, {"role": "assistant", "content": turn}, RESULT]
    return {"model": "claude-sonnet-4-6", "max_tokens": 4096, "thinking": thinking, "messages": messages}


def test_claudes_blocks_stripped_with_thinking_off_are_the_switchs_doing() -> None:
    block = {"type": "thinking", "thinking": "I should read a.txt first.", "signature": "sig"}
    on = anthropic({"type": "adaptive"}, [block, CALL])
    off = anthropic({"type": "disabled"}, [CALL])
    assert [b.rule for b in prefix_breaks(on, off, "anthropic")] == ["thinking-changed"]
    redacted = anthropic({"type": "adaptive"}, [{"type": "redacted_thinking", "data": "opaque"}, CALL])
    assert [b.rule for b in prefix_breaks(redacted, off, "anthropic")] == ["thinking-changed"]


def test_deepseeks_reasoning_content_left_out_with_thinking_off_is_the_switchs_doing() -> None:
    call = {"id": "t1", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "a.txt"}'}}
    turn = {"role": "assistant", "content": None, "reasoning_content": "Read a.txt first.", "tool_calls": [call]}
    task = {"role": "user", "content": "read the files " * 300}
    result = {"role": "tool", "tool_call_id": "t1", "content": "alpha " * 200}
    on = {"model": "deepseek-v4-flash", "messages": [task, turn, result]}
    plain = {k: v for k, v in turn.items() if k != "reasoning_content"}
    off = {"model": "deepseek-v4-flash", "thinking": {"type": "disabled"}, "messages": [task, plain, result]}
    assert [b.rule for b in prefix_breaks(on, off, "openai")] == ["thinking-changed"]


def test_an_edit_of_its_own_beside_the_switch_is_still_named() -> None:
    block = {"type": "thinking", "thinking": "I should read a.txt first.", "signature": "sig"}
    on = anthropic({"type": "adaptive"}, [block, CALL])
    edited = {"role": "user", "content": [{"type": "text", "text": "read the other files " * 300}]}
    off = anthropic({"type": "disabled"}, [CALL], task=edited)
    assert [b.rule for b in prefix_breaks(on, off, "anthropic")] == ["thinking-changed", "message-edited"]
