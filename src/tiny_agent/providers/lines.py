"""Text split into lines where its format splits it: event streams at CR, LF and CR LF; JSON lines
at LF. Never ``str.splitlines``, which also splits at U+2028, U+2029, U+0085 and the C0 separators:
JSON leaves the first three raw inside a string, so a line holding one would be cut in two."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

__all__ = ["iter_sse", "jsonl_lines", "sse_lines"]

_NEWLINE = re.compile(r"\r\n|\r|\n")


def sse_lines(texts: Iterable[str]) -> Iterator[str]:
    """The lines of an event stream arriving in pieces (httpx's ``iter_lines`` uses ``splitlines``).
    A line not ended when the stream ends is given last."""
    rest = ""
    for text in texts:
        rest += text
        held = "\r" if rest.endswith("\r") else ""  # may be the first half of a CR LF
        *lines, rest = _NEWLINE.split(rest[: len(rest) - len(held)])
        rest += held
        yield from lines
    if rest:
        yield from _NEWLINE.split(rest.removesuffix("\r"))


def jsonl_lines(text: str) -> list[str]:
    """The lines of a JSON-lines text (one written with ``ensure_ascii=False`` too)."""
    return [line.removesuffix("\r") for line in text.split("\n")]


def iter_sse(lines: Iterable[str]) -> Iterator[tuple[str | None, str]]:
    """Server-sent events as ``(event name, data)``. An event not closed by a blank line when the
    stream ends is dropped, as the SSE standard says: it may be a cut piece."""
    event: str | None = None
    data: list[str] = []
    for line in lines:
        if not line:
            if data:
                yield event, "\n".join(data)
            event, data = None, []
        elif not line.startswith(":"):  # ":" starts a comment (a keep-alive)
            field, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if field == "event":
                event = value
            elif field == "data":
                data.append(value)
