"""Which paths a request is about: by name first ("the soup recipe" is ``recipes/soup.md``), then by
what the files hold ("who works on Friday?" is the rota that says "Friday: Lena").

A path scores for each subject word of the request that names it: its own name counts most, a folder
it is in counts once ("recipe" in ``recipes/soup.md``); a path qualifies only when its own name is
named, or, for a file, when it holds the words. What a file holds is scored with Okapi BM25 over the
head of each file (``Prompt.path_terms``), so a short file that says "Saturday" beats a README that
mentions everything once. A word names a path in another form too ("recipie", "configured",
``words.near``). The request's phrasing adds the rest: a listing question favours folders, "here"
names the root. Written by hand: the ranking libraries build matrices for large corpora; this is a
few hundred short files, with near-forms mapped first.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from pathlib import PurePosixPath

from tiny_agent.guide.request_kind import Request
from tiny_agent.guide.words import near, stem, tokens

__all__ = ["best_paths", "rank"]

OWN_NAME = 3.0
"""A word that is the path's own name (its stem, or a part of it: "tart" in apple-tart.md)."""
FOLDER_NAME = 1.0
"""A word that names a folder the path is in."""
LISTING = 1.5
"""Added to folders when the request asks what a folder holds."""
ROOT = 2.5
"""The root's score when the request says "here": a path that covers a word of the request wins."""
NAMED = 10.0
"""A path written out in the request ("notes.txt", "recipes/bread")."""
COVERAGE = 100.0
"""Per request word the path covers: coverage decides first, the scores above break ties."""
CONTEXT = 10.0
"""Per word of the request referred back to that the path covers."""
K1, B = 1.2, 0.75
"""Okapi BM25's usual constants."""


def rank(
    request: Request,
    files: Iterable[str],
    folders: Iterable[str],
    path_terms: Mapping[str, Mapping[str, int]],
    named: set[str],
    before: Mapping[str, int] | None = None,
) -> dict[str, float]:
    """Paths the request is about, with their scores (only those that qualify). A path that covers
    more of the request's words, by name or by what it holds, ranks first: "how much is the
    sourdough loaf?" is the menu line "Sourdough loaf: 6 euros", not the recipe named sourdough.
    ``before``: the words of a request this one refers back to, which only break ties ("and the
    apple tart?" after the loaf's price is the menu, not the tart's recipe)."""
    files, folders = list(files), list(folders)
    words = list(request.terms)
    docs = {f: path_terms[f] for f in files if f in path_terms}
    content, held = _bm25(words, docs)
    earlier = [w for w in before or {} if w not in request.terms]
    _, held_before = _bm25(earlier, docs)
    scores: dict[str, float] = {}
    for path in [*files, *folders]:
        if path in named:
            scores[path] = NAMED * COVERAGE
            continue
        if path == ".":
            continue
        own, score, named_words = _name_score(words, PurePosixPath(path))
        score += content.get(path, 0.0)
        if own or content.get(path, 0.0) > 0:
            covered = len(named_words | held.get(path, set()))
            covered_before = len(_name_score(earlier, PurePosixPath(path))[2] | held_before.get(path, set()))
            listing = LISTING if request.listing and path in folders else 0.0
            scores[path] = covered * COVERAGE + covered_before * CONTEXT + score + listing
    named_root = request.root and (request.listing or request.whole or not scores)
    if "." in folders and (named_root or (request.listing and not scores)):  # "list everything": the root
        root = ROOT + (LISTING if request.listing else 0.0)
        scores["."] = max(scores.get(".", 0.0), root)
    return scores


def best_paths(scores: Mapping[str, float]) -> list[str]:
    """The paths with the top score, in the order given."""
    if not scores:
        return []
    top = max(scores.values())
    return [p for p, s in scores.items() if s >= top - 1e-9]


def _name_score(words: list[str], path: PurePosixPath) -> tuple[bool, float, set[str]]:
    """(whether the path's own name is named, its name score, the words that name it)."""
    own_terms = {stem(w) for w in tokens(path.stem)}
    folder_terms = {stem(w) for part in path.parent.parts for w in tokens(part)}
    score = 0.0
    own = False
    naming: set[str] = set()
    for word in words:
        if any(near(word, t, prefix=True) for t in own_terms):
            score += OWN_NAME
            own = True
            naming.add(word)
        elif any(near(word, t, prefix=True) for t in folder_terms):
            score += FOLDER_NAME
            naming.add(word)
    return own, score, naming


def _bm25(words: list[str], docs: Mapping[str, Mapping[str, int]]) -> tuple[dict[str, float], dict[str, set[str]]]:
    """Okapi BM25 of each document for the query ``words``, each matched in its near forms; and the
    words each document holds."""
    held: dict[str, set[str]] = {}
    if not docs or not words:
        return {}, held
    lengths = {d: sum(t.values()) or 1 for d, t in docs.items()}
    average = sum(lengths.values()) / len(lengths)
    vocabulary = {t for doc in docs.values() for t in doc}
    scores: dict[str, float] = {}
    for word in words:
        forms = [t for t in vocabulary if near(word, t)]
        counts = {d: sum(doc.get(t, 0) for t in forms) for d, doc in docs.items()}
        df = sum(1 for n in counts.values() if n)
        if not df:
            continue
        idf = math.log(1 + (len(docs) - df + 0.5) / (df + 0.5))
        for d, n in counts.items():
            if n:
                held.setdefault(d, set()).add(word)
                norm = n + K1 * (1 - B + B * lengths[d] / average)
                scores[d] = scores.get(d, 0.0) + idf * n * (K1 + 1) / norm
    return scores, held
