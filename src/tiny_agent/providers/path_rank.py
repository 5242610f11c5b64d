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

from tiny_agent.providers.request_kind import Request
from tiny_agent.providers.words import near, stem, tokens

__all__ = ["best_paths", "rank"]

OWN_NAME = 3.0
"""A word that is the path's own name (its stem, or a part of it: "tart" in apple-tart.md)."""
FOLDER_NAME = 1.0
"""A word that names a folder the path is in."""
LISTING = 1.5
"""Added to folders when the request asks what a folder holds."""
ROOT = 2.5
"""The root's score when the request says "here": a path named by its own name still wins."""
NAMED = 10.0
"""A path written out in the request ("notes.txt", "recipes/bread")."""
K1, B = 1.2, 0.75
"""Okapi BM25's usual constants."""


def rank(
    request: Request,
    files: Iterable[str],
    folders: Iterable[str],
    path_terms: Mapping[str, Mapping[str, int]],
    named: set[str],
) -> dict[str, float]:
    """Paths the request is about, with their scores (only those that qualify)."""
    files, folders = list(files), list(folders)
    words = list(request.terms)
    content = _bm25(words, {f: path_terms[f] for f in files if f in path_terms})
    scores: dict[str, float] = {}
    for path in [*files, *folders]:
        if path in named:
            scores[path] = NAMED
            continue
        if path == ".":
            continue
        own, score = _name_score(words, PurePosixPath(path))
        score += content.get(path, 0.0)
        if own or content.get(path, 0.0) > 0:
            scores[path] = score + (LISTING if request.listing and path in folders else 0.0)
    named_root = request.root and (request.listing or request.whole or not scores)
    if "." in folders and (named_root or (request.listing and not scores)):  # "list everything": the root
        scores["."] = max(scores.get(".", 0.0), ROOT + (LISTING if request.listing else 0.0))
    return scores


def best_paths(scores: Mapping[str, float]) -> list[str]:
    """The paths with the top score, in the order given."""
    if not scores:
        return []
    top = max(scores.values())
    return [p for p, s in scores.items() if s >= top - 1e-9]


def _name_score(words: list[str], path: PurePosixPath) -> tuple[bool, float]:
    """(whether the path's own name is named, its name score)."""
    own_terms = {stem(w) for w in tokens(path.stem)}
    folder_terms = {stem(w) for part in path.parent.parts for w in tokens(part)}
    score = 0.0
    own = False
    for word in words:
        if any(near(word, t, prefix=True) for t in own_terms):
            score += OWN_NAME
            own = True
        elif any(near(word, t, prefix=True) for t in folder_terms):
            score += FOLDER_NAME
    return own, score


def _bm25(words: list[str], docs: Mapping[str, Mapping[str, int]]) -> dict[str, float]:
    """Okapi BM25 of each document for the query ``words``, each matched in its near forms."""
    if not docs or not words:
        return {}
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
                norm = n + K1 * (1 - B + B * lengths[d] / average)
                scores[d] = scores.get(d, 0.0) + idf * n * (K1 + 1) / norm
    return scores
