"""The words of a request and of the workspace, compared the way a person reads them.

"the soup recipe" names ``recipes/soup.md``; "recipie" is "recipe" misspelt; "configured" points at
``config.json``; "Mondays" is the "Monday" of a file. A word is reduced to its stem (the Snowball
English stemmer: plurals, -ing, -ed), and two stems are near when they are equal, one letter apart
in words of five letters or more (Levenshtein distance, from rapidfuzz), or, for a name, when one
is the start of the other ("config" and "configured"). Words that carry no subject (articles,
question words, "file", "show") are left out: they would match every file.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from functools import lru_cache

import snowballstemmer
from rapidfuzz.distance import Levenshtein

__all__ = ["STOP", "near", "stem", "terms", "tokens"]

_WORD = re.compile(r"[^\W_]+")
"""Letters and digits: "apple-tart.md" is apple, tart, md; "what's" is what, s."""
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")
"""Where "shoppingList" splits."""
_STEMMER = snowballstemmer.stemmer("english")
TYPO_MIN = 5
"""Words this long may be one letter off ("recipie"); shorter ones must be spelt right (tart, tarts)."""
PREFIX_MIN = 4
"""A name this long may stand for a longer word it starts ("config" for "configured")."""

_STOP_WORDS = """
    a an the and or but if of to in on at by for with from into onto about as than then so too very just
    is are was were be been being am do does did doing done have has had having will would shall should
    can could may might must need i me my mine myself you your yours we our ours us it its this that these
    those there here he she they them his her their what whats which who whos whom whose when where why
    how not no yes please tell give show let lets get got some any all each every much many more most
    other same also only now up out over again ok okay hi hello hey thanks thank u ur im ive id
    file files folder folders directory directories dir workspace look see find read open opened list
    listed lists say says said contain contains contained containing content contents inside whole
    full entire everything anything something thing things one ones like want know use used using
"""
STOP = frozenset(_STOP_WORDS.split())
"""Words that name no subject of their own; stems of these never match a file."""
_STOP_STEMS = frozenset(_STEMMER.stemWords(sorted(STOP)))
_KEEP = frozenset({"open"})
"""Stop words that still match content: "are you open on mondays" is about the opening hours."""


def tokens(text: str) -> list[str]:
    """The words of ``text``, lower case; "shoppingList" is two words; single letters are dropped."""
    out: list[str] = []
    for word in _WORD.findall(_CAMEL.sub(" ", text)):
        if len(word) > 1 or word.isdigit():
            out.append(word.lower())
    return out


@lru_cache(maxsize=65_536)
def stem(word: str) -> str:
    """The Snowball stem of a lower-case word."""
    return str(_STEMMER.stemWord(word))


def terms(text: str, *, keep: Iterable[str] = ()) -> Counter[str]:
    """Stems of the subject words of ``text``, counted; ``keep`` names stop words to keep."""
    kept = _KEEP | set(keep)
    found: Counter[str] = Counter()
    for word in tokens(text):
        if word in STOP and word not in kept:
            continue
        root = stem(word)
        if root in _STOP_STEMS and word not in kept:
            continue
        found[root] += 1
    return found


def near(a: str, b: str, *, prefix: bool = False) -> bool:
    """Whether stems ``a`` and ``b`` are one word: equal, a typo apart, or (``prefix``) one the
    start of the other."""
    if a == b:
        return True
    if a.isdigit() or b.isdigit():
        return False
    typo_long = min(len(a), len(b)) >= TYPO_MIN - 1 and max(len(a), len(b)) >= TYPO_MIN
    if typo_long and Levenshtein.distance(a, b, score_cutoff=1) <= 1:
        return True
    if prefix:
        short, long = sorted((a, b), key=len)
        return len(short) >= PREFIX_MIN and long.startswith(short)
    return False
