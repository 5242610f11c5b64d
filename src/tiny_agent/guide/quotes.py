"""What the embedded model may answer: a quote of what its tools returned for this request.

A request that asks for a whole file or listing ("show me the menu", "what's in docs") gets the
whole result, bounded. A question gets the lines that hold its subject words ("Saturday: Tom and
Lena" for "who works on Saturday?"). A word that only names the file's topic (its name, or its
title line: "apple tart" in apple-tart.md) says which file, not which line: when no other word
of the request is found in a line, the whole result is the answer, since it holds whatever the file
says on the subject.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from tiny_agent.guide.words import near, stem, terms, tokens

__all__ = ["Result", "answers", "lines_holding", "whole"]

TOPIC_WEIGHT = 0.25
"""What a word of the file's name or title counts for in a line (any other word counts 1)."""
TITLE_WORDS = 8
"""A first line this short, with no "key: value" in it, is a title ("Menu", "Release checklist ...")."""


@dataclass(frozen=True)
class Result:
    """One tool result the answer may quote, with the path it came from."""

    path: str
    text: str


def whole(text: str, limit: int) -> str:
    """``text`` stripped, cut after the last whole line that fits ``limit`` characters."""
    text = text.strip()
    if len(text) <= limit:
        return text
    cut = text[:limit]
    return cut[: cut.rfind("\n")].rstrip() if "\n" in cut else cut.rstrip()


def answers(results: Sequence[Result], words: Counter[str], *, whole_only: bool, limit: int) -> list[str]:
    """The quotes on offer for a request with subject ``words``: whole results, or the best lines."""
    lines = [] if whole_only else lines_holding(results, words, limit)
    return lines or list(dict.fromkeys(w for r in results if (w := whole(r.text, limit))))


def lines_holding(results: Sequence[Result], words: Counter[str], limit: int) -> list[str]:
    """The lines that hold the most of ``words`` beyond the topic; empty when none holds any."""
    scored: list[tuple[float, str]] = []
    for result in results:
        topic = _topic(result)
        for line in result.text.splitlines():
            line = line.strip()
            if not line or len(line) > limit:
                continue
            score, specific = _score(line, words, topic)
            if specific:
                scored.append((score, line))
    if not scored:
        return []
    top = max(s for s, _ in scored)
    return list(dict.fromkeys(line for s, line in scored if s >= top - 1e-9))


def _topic(result: Result) -> set[str]:
    """Stems that name what the result is about: its path's words and its title's."""
    path = PurePosixPath(result.path)
    topic = {stem(w) for part in path.parts for w in tokens(PurePosixPath(part).stem)}
    lines = [line.strip() for line in result.text.strip().splitlines() if line.strip()]
    if len(lines) > 1 and _is_title(lines[0]):
        topic |= set(terms(lines[0]))
    return topic


def _is_title(line: str) -> bool:
    return line.startswith("#") or (":" not in line and len(line.split()) <= TITLE_WORDS)


def _score(line: str, words: Counter[str], topic: set[str]) -> tuple[float, bool]:
    """(how much of the request the line holds, whether it holds a word beyond the topic)."""
    found = set(terms(line))
    score = 0.0
    specific = False
    for word in words:
        if any(near(word, t) for t in found):
            if any(near(word, t) for t in topic):
                score += TOPIC_WEIGHT
            else:
                score += 1.0
                specific = True
    return score, specific
