"""The reading half of each adapter's mapping boundary: bytes to plain JSON values, checked.

Both adapters read the raw answer themselves (JSON, or server-sent events) instead of the SDKs'
typed objects, so an answer of the wrong shape is found in one place, by these helpers, and becomes
a ``ProviderResponseError`` that names what was wrong. Every string that comes in is cleaned of lone
surrogates (``"\\ud800"``, which printing and SQLite refuse): each becomes U+FFFD, so the answer is
kept rather than lost.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, TypeVar

import httpx2

from tiny_agent.errors import ProviderResponseError
from tiny_agent.providers.http_errors import response_error, transport_error
from tiny_agent.types import INVALID_JSON_KEY, Block, TextBlock, ToolResultBlock, ToolUseBlock

__all__ = [
    "AnswerText",
    "ShapeError",
    "count",
    "expect",
    "is_event_stream",
    "optional",
    "parse_json",
    "reading",
    "scrub",
    "scrub_blocks",
    "shape_error",
    "tool_input",
    "whole_json",
]

T = TypeVar("T")

_SURROGATE = re.compile("[\ud800-\udfff]")


class ShapeError(ValueError):
    """An answer of the wrong shape; the adapter's boundary turns it into ``ProviderResponseError``."""

    def __init__(self, message: str, sample: str | None = None) -> None:
        super().__init__(message)
        self.sample = sample
        """The start of the body, when showing it helps (HTML from a proxy, say)."""


def parse_json(text: str, what: str) -> Any:
    """``text`` as JSON; ``ShapeError`` naming ``what`` when it is not."""
    try:
        return json.loads(text)
    except ValueError:
        raise ShapeError(f"{what} is not JSON") from None


def expect(value: object, kind: type[T], where: str) -> T:
    """``value`` if it is a ``kind``, else ``ShapeError`` naming ``where``."""
    if isinstance(value, kind) and not (kind is int and isinstance(value, bool)):
        return value
    raise ShapeError(f"{where} is {_describe(value)}, not {_KIND_NAMES.get(kind, kind.__name__)}")


def optional(value: object, kind: type[T], where: str) -> T | None:
    """Like ``expect``, but None (or a missing key) is allowed."""
    return None if value is None else expect(value, kind, where)


_KIND_NAMES = {dict: "an object", list: "a list", str: "a string", int: "a whole number"}


def _describe(value: object) -> str:
    if value is None:
        return "missing"
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}
    return names.get(type(value), type(value).__name__)


def scrub(value: Any) -> Any:
    """A copy of a JSON value with every lone surrogate in its strings (keys too) replaced by U+FFFD."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, Mapping):
        return {scrub(k): scrub(v) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub(v) for v in value]
    return value


def scrub_blocks(blocks: Iterable[Block]) -> tuple[Block, ...]:
    """``scrub`` for blocks built from decoded text (the JSON tool mode decodes a second time)."""
    out: list[Block] = []
    for block in blocks:
        if isinstance(block, TextBlock):
            out.append(TextBlock(scrub(block.text)))
        elif isinstance(block, ToolUseBlock):
            out.append(ToolUseBlock(scrub(block.id), scrub(block.name), scrub(dict(block.input))))
        elif isinstance(block, ToolResultBlock):
            out.append(block)
    return tuple(out)


def tool_input(raw: object) -> dict[str, Any]:
    """A tool call's input as an object. Anything else is kept under ``INVALID_JSON_KEY`` so the tool
    layer can tell the model, instead of the run failing: a JSON string is parsed first (OpenAI sends
    the arguments as a string), "" and None mean no arguments."""
    if isinstance(raw, dict):
        return raw
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}
    if isinstance(raw, str):
        try:
            parsed = json.loads(raw)
        except ValueError:
            return {INVALID_JSON_KEY: raw}
        return scrub(parsed) if isinstance(parsed, dict) else {INVALID_JSON_KEY: raw}
    return {INVALID_JSON_KEY: json.dumps(raw)}


def is_event_stream(response: httpx2.Response) -> bool:
    """Whether a 200 answer to a streaming request is a stream; a server may answer whole instead."""
    kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
    return kind not in ("application/json", "text/html", "text/plain")


class AnswerText:
    """The text of ``{"answer": "..."}`` while its JSON arrives piece by piece (the JSON tool mode).

    ``feed`` takes the next raw piece and returns the answer text it completes, decoded; nothing
    when the reply is a tool call or not of that form. An escape sequence split between pieces is
    held back until it is whole, so the pieces joined equal the decoded string."""

    _OPENING = ("{", '"answer"', ":", '"')

    def __init__(self) -> None:
        self._raw = ""
        self._start: int | None = None
        """Index in ``_raw`` of the first answer character not returned yet."""
        self._over = False

    def feed(self, piece: str) -> str:
        self._raw += piece
        if self._over:
            return ""
        if self._start is None:
            self._start = self._opening()
            if self._start is None:
                return ""
        end, closed = self._complete_until(self._start)
        try:
            text = json.loads(f'"{self._raw[self._start : end]}"') if end > self._start else ""
        except ValueError:  # not valid JSON after all (a raw newline, a bad escape): the end will tell
            self._over = True
            return ""
        self._start = end
        self._over = closed
        return scrub(text)  # type: ignore[no-any-return]

    def _opening(self) -> int | None:
        """Index just after ``{"answer": "``; None while undecided or when it cannot come."""
        i, raw = 0, self._raw
        for token in self._OPENING:
            while i < len(raw) and raw[i] in " \t\r\n":
                i += 1
            piece = raw[i : i + len(token)]
            if not token.startswith(piece):
                self._over = True
                return None
            if len(piece) < len(token):
                return None
            i += len(token)
        return i

    def _complete_until(self, i: int) -> tuple[int, bool]:
        """How far from ``i`` the string can be decoded, and whether its closing quote was reached."""
        raw, n = self._raw, len(self._raw)
        while i < n:
            c = raw[i]
            if c == '"':
                return i, True
            if c != "\\":
                i += 1
                continue
            if i + 1 >= n:
                break
            if raw[i + 1] != "u":
                i += 2
                continue
            if i + 6 > n:
                break
            high = raw[i + 2 : i + 4].lower() in ("d8", "d9", "da", "db")
            if high and raw[i + 6 : i + 8] in ("\\u", "\\", "") and i + 12 > n:
                break  # the low half of a surrogate pair may follow
            i += 6
        return i, False


def count(value: object) -> int | None:
    """A token count: a whole number of 0 or more, else None (unknown, never a made-up 0)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def shape_error(provider: str, exc: ShapeError) -> ProviderResponseError:
    """The error for an answer of the wrong shape, with the start of the body when that helps."""
    return response_error(provider, f"the answer cannot be read: {exc}", exc.sample)


@contextmanager
def reading(provider: str) -> Iterator[None]:
    """The last line of the mapping boundary, around the code that reads an answer: a wrong shape,
    or anything the shape checks missed, becomes a ``ProviderResponseError``."""
    try:
        yield
    except ShapeError as exc:
        raise shape_error(provider, exc) from exc
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
        raise response_error(provider, f"the answer cannot be read ({type(exc).__name__}: {exc})") from exc


@contextmanager
def sdk_boundary(
    provider: str,
    timeout: float,
    sdk: tuple[type[Exception], type[Exception], type[Exception]],
    status_error: Callable[[Any], Exception],
) -> Iterator[None]:
    """An adapter's one mapping boundary: the SDK's and ``httpx2``'s exceptions, during the call or
    while a stream is read, as ours. ``sdk`` is the SDK's (status error, connection error, base
    error) classes; ``status_error`` turns the first into our HTTP error."""
    status, connection, base = sdk
    try:
        yield
    except status as exc:
        raise status_error(exc) from exc
    except (connection, httpx2.TransportError) as exc:
        raise transport_error(provider, exc, timeout) from exc
    except ShapeError as exc:  # an event that is not JSON, while a stream is read
        raise shape_error(provider, exc) from exc
    except (httpx2.HTTPError, httpx2.StreamError, base) as exc:
        raise response_error(provider, f"the answer cannot be read ({type(exc).__name__}: {exc})") from exc


def whole_json(response: httpx2.Response) -> dict[str, Any]:
    """The body of a whole (not streamed) answer as a JSON object."""
    kind = response.headers.get("content-type", "no content type").split(";")[0]
    text = response.text
    try:
        data = json.loads(text)
    except ValueError:
        raise ShapeError(f"a {response.status_code} answer ({kind}) that is not JSON", sample=text) from None
    return expect(data, dict, f"the {response.status_code} answer ({kind})")
