"""The parameter types of the flags: each takes a value or says exactly what to fix, in click's
one line (``--compact-at 1.5: give a fraction of the window in (0, 1] ...``)."""

from __future__ import annotations

import math
from typing import Any

import click

from tiny_agent.context.shrink.registry import policy_named, policy_names
from tiny_agent.errors import ConfigError

__all__ = ["CompactAt", "NonNegative", "PolicyName", "Positive"]


class CompactAt(click.ParamType[float]):
    name = "X"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        try:
            number = float(value)
        except (TypeError, ValueError):
            self.fail(f"expected a fraction like 0.8 or a token count like 12000, not {value!r}", param, ctx)
        if not math.isfinite(number) or number <= 0 or (number > 1 and not number.is_integer()):
            self.fail(
                f"{value!r}: give a fraction of the window in (0, 1] like 0.8, or a whole token count like 12000",
                param,
                ctx,
            )
        return number


class Positive(click.ParamType[float]):
    """A number above zero: ``Positive(int)`` for counts, ``Positive(float)`` for seconds and dollars."""

    def __init__(self, kind: type[int] | type[float], unit: str = "") -> None:
        self.kind = kind
        self.unit = unit
        self.name = "N" if kind is int else "X"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int | float:
        if isinstance(value, self.kind) and not isinstance(value, bool):
            number: int | float = value
        else:
            try:
                number = self.kind(str(value).strip())
            except ValueError:
                what = "a whole number" if self.kind is int else "a number"
                self.fail(f"expected {what}{self.unit}, not {value!r}", param, ctx)
        if self.kind is int and number < 1:
            self.fail(f"must be at least 1, not {value}", param, ctx)
        if not math.isfinite(number) or number <= 0:
            self.fail(f"must be more than 0{self.unit}, not {value}", param, ctx)
        return number


class PolicyName(click.ParamType[str]):
    """A compaction policy's name, looked up in the registry when given (one of your own included)."""

    name = "NAME"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        try:
            return policy_named(str(value).strip()).name
        except ConfigError as exc:
            self.fail(str(exc), param, ctx)

    def shell_complete(self, ctx: click.Context, param: click.Parameter, incomplete: str) -> list[Any]:
        from click.shell_completion import CompletionItem

        return [CompletionItem(name) for name in policy_names() if name.startswith(incomplete)]


class NonNegative(click.ParamType[int]):
    name = "N"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        try:
            number = int(str(value).strip())
        except ValueError:
            self.fail(f"expected a whole number, not {value!r}", param, ctx)
        if number < 0:
            self.fail(f"must be 0 or more, not {number}", param, ctx)
        return number
