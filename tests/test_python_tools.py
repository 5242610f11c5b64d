"""Python functions as tools: the schema from the signature and the docstring (pydantic), input checked by
jsonschema in the toolbox, typed values from pydantic, sync and async, an exception as an error
result, and a run that offers them beside the workspace's tools."""

from __future__ import annotations

import asyncio
import datetime
from pathlib import Path
from typing import Annotated, Literal

import pytest
from pydantic import BaseModel, Field

from tests.recorded import ENV, MODELS
from tiny_agent import Run, RunSettings, Toolbox, Workspace, tool
from tiny_agent.errors import ConfigError
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.testing import BillingFake, Task
from tiny_agent.tools.toolbox import ToolFailure
from tiny_agent.types import ToolUseBlock


class Place(BaseModel):
    city: str
    country: str = "FR"


@tool
def forecast(
    place: Place,
    day: datetime.date,
    unit: Literal["C", "F"] = "C",
    hours: Annotated[int, Field(ge=1, le=48, description="How many hours ahead, 1 to 48.")] = 24,
) -> dict[str, object]:
    """The weather forecast for a place.

    Uses the national service's model.

    Args:
        place: where to forecast.
        day: the first day of the forecast.
        unit: degrees Celsius or Fahrenheit.
        hours: this description loses to the Field's.
    """
    if place.city == "Atlantis":
        raise ValueError("no station there")
    if place.city == "Nowhere":
        raise ToolFailure("Nowhere has no weather; ask about a real city")
    return {"city": place.city, "day": day.isoformat(), "weekday": day.strftime("%A"), "unit": unit, "hours": hours}


@tool(name="slow_sum", description="Add two numbers, slowly.")
async def add(a: int, b: int) -> str:
    await asyncio.sleep(0.01)
    return str(a + b)


def call(toolbox: Toolbox, name: str, **arguments: object) -> tuple[bool, str]:
    result = toolbox.run(ToolUseBlock("t1", name, arguments))
    return result.is_error, result.content


def test_the_schema_comes_from_the_signature_and_the_docstring() -> None:
    assert forecast.name == "forecast"
    assert forecast.description == "The weather forecast for a place.\n\nUses the national service's model."
    schema = forecast.input_schema
    assert schema["required"] == ["place", "day"] and schema["additionalProperties"] is False
    properties = schema["properties"]
    assert properties["place"]["description"] == "where to forecast."
    assert properties["day"] == {"description": "the first day of the forecast.", "format": "date", "type": "string"}
    assert properties["unit"]["enum"] == ["C", "F"] and properties["unit"]["default"] == "C"
    assert properties["hours"]["description"] == "How many hours ahead, 1 to 48."
    assert properties["hours"]["maximum"] == 48
    assert "title" not in schema and all("title" not in p for p in properties.values())
    assert add.name == "slow_sum" and add.description == "Add two numbers, slowly."


def test_a_numpy_docstring_describes_the_parameters_too() -> None:
    @tool
    def area(width: float, height: float = 1.0) -> float:
        """Area of a rectangle.

        Parameters
        ----------
        width : float
            The width, in metres.
        height : float
            The height, in metres.
        """
        return width * height

    assert area.input_schema["properties"]["width"]["description"] == "The width, in metres."
    assert area(2.0, 3.0) == 6.0, "the decorated function is still the function"


def test_calls_are_validated_converted_and_their_errors_go_to_the_model(tmp_path: Path) -> None:
    toolbox = Toolbox([*Workspace(tmp_path).tools(), forecast, add])
    assert toolbox.names == ("read_file", "write_file", "list_dir", "edit_file", "search", "forecast", "slow_sum")
    assert call(toolbox, "forecast", place={"city": "Lyon"}, day="2026-12-04") == (
        False,
        '{"city":"Lyon","day":"2026-12-04","weekday":"Friday","unit":"C","hours":24}',
    )
    error, text = call(toolbox, "forecast", place={"city": "Lyon"}, day="2026-12-04", hours=99)
    assert error and text.startswith("invalid arguments for forecast:\n  hours: 99 is greater than the maximum of 48")
    error, text = call(toolbox, "forecast", place={"city": "Lyon"}, day="next friday")
    assert error and text.startswith("invalid arguments for forecast: day: Input should be a valid date")
    assert call(toolbox, "forecast", place={"city": "Atlantis"}, day="2026-12-04") == (
        True,
        "forecast failed: ValueError: no station there",
    )
    assert call(toolbox, "forecast", place={"city": "Nowhere"}, day="2026-12-04") == (
        True,
        "Nowhere has no weather; ask about a real city",
    )
    assert call(toolbox, "slow_sum", a=2, b=40) == (False, "42")


def test_an_async_tool_runs_from_inside_a_running_event_loop() -> None:
    async def inside() -> str:
        return add.fn({"a": 1, "b": 2})

    assert asyncio.run(inside()) == "3"


def test_a_function_the_model_could_not_call_is_refused_when_it_becomes_a_tool() -> None:
    with pytest.raises(TypeError, match="parameter 'rest' is variadic positional"):

        @tool
        def join(*rest: str) -> str:
            return "".join(rest)

    with pytest.raises(TypeError, match="not 'a tool'"):
        tool(name="a tool")(lambda: "x")


def test_a_run_offers_python_tools_beside_the_workspaces(tmp_path: Path) -> None:
    task = Task("weather in Lyon", [[("forecast", {"place": {"city": "Lyon"}, "day": "2026-12-04"})]], "Mild.")
    with BillingFake([task]) as fake, SQLiteStore(tmp_path / "s.db") as store:
        url = fake.url("r", "anthropic")
        settings = RunSettings(provider="anthropic", model=MODELS["anthropic"], base_url=url, workspace=str(tmp_path))
        with Run.open(store, settings=settings, env=ENV, tools=[forecast]) as run:
            result = run.run("weather in Lyon")
            sid = run.session.id if run.session else ""
        assert result.answer == "Mild."
        sent = fake.bills("r")[-1].body
        assert [t["name"] for t in sent["tools"]] == [
            "read_file",
            "write_file",
            "list_dir",
            "edit_file",
            "search",
            "forecast",
        ]
        results = [b for m in sent["messages"] for b in m["content"] if b.get("type") == "tool_result"]
        assert "Friday" in str(results[0]["content"])
        stored = [e.body for e in store.entries(sid) if e.kind == "tool_result"]
        assert "Friday" in stored[0]["block"]["content"]
        with pytest.raises(ConfigError, match="duplicate tool name: 'read_file'"):
            Run.open(store, settings=settings, env=ENV, tools=[tool(name="read_file")(lambda path: path)])


@tool
def dump(n: int) -> str:
    """Return n characters."""
    return "y" * n


def test_a_python_tools_huge_result_is_cut_to_what_a_tool_result_may_take(tmp_path: Path) -> None:
    """Like the workspace's tools, a Python tool (or an MCP server) cannot overflow the window."""
    task = Task("dump", [[("dump", {"n": 1_000_000})]], "Dumped.")
    with BillingFake([task]) as fake, SQLiteStore(tmp_path / "s.db") as store:
        url = fake.url("r", "anthropic")
        model = MODELS["anthropic"]
        settings = RunSettings(
            provider="anthropic", model=model, base_url=url, workspace=str(tmp_path), max_output_chars=5000
        )
        with Run.open(store, settings=settings, env=ENV, tools=[dump]) as run:
            assert run.run("dump a lot").answer == "Dumped."
        sent = fake.bills("r")[-1].body
        (result,) = [b for m in sent["messages"] for b in m["content"] if b.get("type") == "tool_result"]
        text = str(result["content"])
        assert text.startswith("y" * 5000 + "\n[cut: dump returned 1,000,000 characters"), text[4990:5100]
        assert len(text) < 5300
