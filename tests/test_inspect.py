"""``/context`` (``inspect_context``): the layers of the next request, between turns, without alarms."""

from __future__ import annotations

import logging

import pytest

from tiny_agent.context.engine import Context
from tiny_agent.observe.inspect import inspect_context
from tiny_agent.testing import ScriptedProvider, tool_call
from tiny_agent.types import Message, ToolResultBlock, ToolSpec

READ = ToolSpec("read_file", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}})


def test_between_turns_the_report_lists_every_layer_and_warns_of_nothing(caplog: pytest.LogCaptureFixture) -> None:
    provider = ScriptedProvider([tool_call("read_file", "c1", path="rota.txt"), Message.assistant("Wednesday: Tom")])
    ctx = Context("You are terse.", (READ,), pins=["Answer in one line."])
    ctx.add_user("Who works on Wednesday?")
    ctx.complete(provider)
    ctx.add_tool_result(ToolResultBlock("c1", "Wednesday: Tom"))
    ctx.complete(provider)
    with caplog.at_level(logging.WARNING):
        report = inspect_context(ctx, provider)
    assert not caplog.records, [r.getMessage() for r in caplog.records]
    names = [layer.name for layer in report.layers]
    assert names == ["tools", "system", "pins", "#1 user", "#2 assistant", "#3 user", "#4 assistant"]
    assert [layer.cached for layer in report.layers][:3] == [True, True, True]
    assert report.total > sum(layer.tokens for layer in report.layers[:3])
