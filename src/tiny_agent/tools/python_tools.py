"""Tools from typed Python functions: the signature and the docstring are the tool's definition.

    from tiny_agent import tool

    @tool
    def weather(city: str, unit: Literal["C", "F"] = "C") -> str:
        '''The weather in a city now.

        Args:
            city: the city's name, e.g. "Lyon".
            unit: degrees Celsius or Fahrenheit.
        '''

pydantic builds the JSON schema from the signature (as pydantic-ai does): each parameter a property,
those without a default required, ``Annotated[int, Field(ge=1, description=...)]`` honoured, and
each parameter's description taken from the docstring (Google, NumPy, reST or Epydoc style, read by
``docstring_parser``) unless ``Field`` already gives one. The toolbox checks the model's input
against that schema with jsonschema, like the file tools'; pydantic then turns it into the typed
values the function takes (a ``datetime.date``, a model). An async function runs on an event loop
of its own, in a worker thread, so a caller inside a running loop (a notebook) can use it too.
What the function returns goes to the model as text: a ``str`` as it is, anything else as JSON.
Whatever it raises becomes an error result the model reads (``Toolbox.run``).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, get_type_hints, overload

import docstring_parser
import pydantic
import pydantic_core
from pydantic.json_schema import GenerateJsonSchema

from tiny_agent.tools.toolbox import Tool, ToolFailure

__all__ = ["TOOL_NAME", "FunctionTool", "tool"]

TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""A tool name Anthropic's and OpenAI's APIs both accept."""


@dataclass(frozen=True)
class FunctionTool(Tool):
    """A ``Tool`` made from a Python function, which it still is: calling it calls the function."""

    function: Callable[..., Any] = field(kw_only=True, repr=False)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.function(*args, **kwargs)


@overload
def tool(function: Callable[..., Any], /) -> FunctionTool: ...


@overload
def tool(
    *, name: str | None = None, description: str | None = None
) -> Callable[[Callable[..., Any]], FunctionTool]: ...


def tool(
    function: Callable[..., Any] | None = None, /, *, name: str | None = None, description: str | None = None
) -> FunctionTool | Callable[[Callable[..., Any]], FunctionTool]:
    """A tool from a typed function: ``@tool``, ``@tool(name=..., description=...)`` or ``tool(fn)``.

    ``name`` defaults to the function's name, ``description`` to its docstring without the
    parameters' part. Raises TypeError for a function the model could not call with one JSON object
    (``*args``, ``**kwargs``, positional-only parameters) or a parameter type pydantic cannot describe.
    """

    def make(fn: Callable[..., Any]) -> FunctionTool:
        return _function_tool(fn, name, description)

    return make if function is None else make(function)


class _NoTitles(GenerateJsonSchema):
    """Schemas without the ``title`` pydantic gives every field: tokens in every request, nothing for the model."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False


def _function_tool(fn: Callable[..., Any], name: str | None, description: str | None) -> FunctionTool:
    tool_name = str(name or getattr(fn, "__name__", ""))
    if not TOOL_NAME.fullmatch(tool_name):
        raise TypeError(f"a tool's name is 1 to 64 letters, digits, '_' or '-' (as the APIs take), not {tool_name!r}")
    doc = docstring_parser.parse(inspect.getdoc(fn) or "")
    model = _arguments_model(fn, tool_name, {p.arg_name: p.description or "" for p in doc.params})
    schema = model.model_json_schema(schema_generator=_NoTitles)
    schema.pop("title", None)
    text = description if description is not None else _description(doc)
    is_async = inspect.iscoroutinefunction(fn)

    def run(arguments: dict[str, Any]) -> str:
        try:
            values = model.model_validate(arguments)
        except pydantic.ValidationError as exc:
            problems = "; ".join(f"{'/'.join(map(str, e['loc'])) or '(arguments)'}: {e['msg']}" for e in exc.errors())
            raise ToolFailure(f"invalid arguments for {tool_name}: {problems}") from exc
        kwargs = {key: getattr(values, key) for key in type(values).model_fields}
        result = _run_async(fn, kwargs) if is_async else fn(**kwargs)
        return result if isinstance(result, str) else pydantic_core.to_json(result).decode()

    return FunctionTool(tool_name, text, schema, run, function=fn)


def _arguments_model(fn: Callable[..., Any], name: str, documented: Mapping[str, str]) -> type[pydantic.BaseModel]:
    """A pydantic model whose fields are the function's parameters (validation apart from the call,
    so an error raised by the function is never taken for a bad argument)."""
    try:
        signature = inspect.signature(fn)
        hints = get_type_hints(fn, include_extras=True)
    except (TypeError, ValueError, NameError) as exc:
        raise TypeError(f"tool {name}: cannot read the function's signature: {exc}") from exc
    fields: dict[str, Any] = {}
    for param in signature.parameters.values():
        if param.kind not in (param.POSITIONAL_OR_KEYWORD, param.KEYWORD_ONLY):
            raise TypeError(
                f"tool {name}: parameter {param.name!r} is {param.kind.description}; a tool takes named parameters"
            )
        fields[param.name] = (hints.get(param.name, Any), ... if param.default is param.empty else param.default)
    try:
        config = pydantic.ConfigDict(extra="forbid")
        model: type[pydantic.BaseModel] = pydantic.create_model(f"{name}_arguments", __config__=config, **fields)
        described = False
        for key, info in model.model_fields.items():
            if info.description is None and documented.get(key):  # a Field's own description comes first
                info.description, described = documented[key], True
        if described:
            model.model_rebuild(force=True)
    except (pydantic.PydanticSchemaGenerationError, pydantic.PydanticUserError, TypeError) as exc:
        raise TypeError(f"tool {name}: {exc}") from exc
    return model


def _description(doc: docstring_parser.Docstring) -> str:
    parts = [doc.short_description or "", doc.long_description or ""]
    return "\n\n".join(p.strip() for p in parts if p and p.strip())


def _run_async(fn: Callable[..., Any], kwargs: Mapping[str, Any]) -> Any:
    """The coroutine function's result, from a loop in a worker thread (a running loop here would refuse one)."""
    pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="tiny-agent-tool")
    try:
        return pool.submit(asyncio.run, fn(**kwargs)).result()
    finally:
        pool.shutdown(wait=False)  # after a Ctrl-C the run goes on at once; the thread ends with the coroutine
