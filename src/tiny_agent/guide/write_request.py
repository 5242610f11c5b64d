"""Whether a request asks for a file to be written, which file, and what it should say.

A write verb where a command stands ("Write a file todo.txt", "can you save it to list.txt", "copy
the port into server.txt") followed by a file name or the word "file" asks for a write; a write
word inside a question ("Which files make up src?", "What should I write?") or a story to tell
does not. What the file should say is often in the request itself ("... saying today's special is
cinnamon rolls", "...: flour, butter, apples"): those words are the content on offer.
"""

from __future__ import annotations

import re

__all__ = ["asks_for_a_write", "content_in_request", "named_paths", "write_targets"]

_PATH_WORD = re.compile(r"(?<![\w/.-])[\w-][\w.-]*(?:/[\w.-]+)*")
"""A word that could be a relative path: ``notes.txt``, ``docs``, ``recipes/bread/rye.md``."""
_FILE_NAME = re.compile(r"\.[A-Za-z]\w{0,4}$")
"""A new file is only recognised by its extension: ``todo.txt`` yes, ``todo`` no."""
_COMMAND_START = (
    r"(?:^\s*|[.!?;:\n]\s*|\b(?:and|then|also|now|please)\s+|\b(?:can|could|would|will)\s+you\s+(?:please\s+)?"
    r"|\blet(?:'s|\s+us)\s+|\b(?:want|need|like)\s+you\s+to\s+)"
)
"""Where a verb is a command: the start of a sentence, after "and", "please", "can you", "let's"...
Elsewhere ("Which files make up src?", "What should I write?") it is part of a question."""
_WRITE_COMMAND = re.compile(
    rf"{_COMMAND_START}(?:please\s+)?(?:write|create|save|make|add|put|append|store|record|copy|note down|jot down)\b"
    r"(?!\s+(?:up|sure|sense)\b)",  # "add up the prices", "make sure": nothing to write
    re.IGNORECASE,
)
_A_FILE = re.compile(r"\bfiles?\b", re.IGNORECASE)
_CONTENT_MARK = re.compile(
    r"(?::|\b(?:saying|says|say|reading|containing|contains|with\s+(?:the\s+)?(?:text|words?|lines?|content)"
    r"|with\s+one\s+line|with\s+a\s+line)\b:?)\s*",
    re.IGNORECASE,
)
"""Where the words to write begin: "...: buy milk", "... saying X", "... with the text X"."""


def named_paths(text: str) -> set[str]:
    """Words of ``text`` that could name a path, a trailing full stop dropped."""
    return {word.rstrip(".") for word in _PATH_WORD.findall(text)} - {""}


def asks_for_a_write(text: str) -> bool:
    """Whether ``text`` asks for a file to be written: a write verb where a command stands, followed
    by a file name or the word "file" ("Write a file todo.txt", "can you save it to list.txt").
    A story to tell ("Write a long story") is an answer, not a file."""
    return write_targets(text) is not None


def write_targets(text: str) -> set[str] | None:
    """The file names after the first write command of ``text``; None when it asks for no write."""
    for command in _WRITE_COMMAND.finditer(text):
        rest = text[command.end() :]
        files = {w for w in named_paths(rest) if _FILE_NAME.search(w) and not w.startswith("/")}
        if files or _A_FILE.search(rest):
            return files
    return None


def content_in_request(text: str, targets: set[str]) -> list[str]:
    """The words the request gives to write, after its last content mark ("saying", ":"), unless
    they are only the file's name; the longest first."""
    found: list[str] = []
    for mark in _CONTENT_MARK.finditer(text):
        tail = text[mark.end() :].strip()
        if tail and tail.rstrip(".") not in targets and len(tail) > 1:
            found.append(tail)
    return found[-1:]
