"""What a request asks of the workspace, read from its phrasing: nothing (a greeting, thanks, a joke),
a whole file or listing ("show me X", "what does X say", "open X", "what's in X"), what a folder
holds ("which recipes are there"), the root folder ("here", "this folder"), or something said
before ("and the host?", "say that again").

Each is a class of phrasing, not a sentence: a greeting is what is left empty once the greeting,
thanks and farewell phrases are taken out; a request refers back when it starts as a continuation
("and ...", "what about ...") or points at something said ("that", "again", "the other one").
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from tiny_agent.guide.words import STOP, terms, tokens

__all__ = ["Request", "read_request", "subject"]

_GREETING = (
    r"hi+|hello+|hey+|hiya|howdy|yo|greetings|good\s+(?:morning|afternoon|evening|day)"
    r"|how\s+(?:are|r)\s+(?:you|u|things)(?:\s+doing)?(?:\s+today)?|how'?s\s+it\s+going|how\s+is\s+it\s+going"
    r"|what'?s\s+up|sup|nice\s+to\s+meet\s+you|who\s+are\s+you|what\s+are\s+you|what'?s\s+your\s+name"
    r"|what\s+is\s+your\s+name|what\s+can\s+you\s+do|are\s+you\s+(?:a\s+bot|an\s+ai|human)"
)
_THANKS = (
    r"thanks|thank\s+(?:you|u)|thx|ty|cheers|much\s+appreciated|appreciate\s+it|great|awesome|perfect|cool|nice"
    r"|ok|okay|alright|all\s+right|sure|got\s+it|lovely|brilliant|wonderful|excellent|fantastic|amazing"
    r"|good\s+job|well\s+done|lol|haha+"
)
_FAREWELL = (
    r"that'?s\s+(?:all|it|everything)|that\s+is\s+(?:all|it)|bye|goodbye|good\s+bye|good\s+night"
    r"|see\s+(?:you|ya)(?:\s+later)?|later|take\s+care|have\s+a\s+(?:nice|good|great)\s+(?:day|one|evening|night)"
)
_SOCIAL = re.compile(rf"\b(?:{_GREETING}|{_THANKS}|{_FAREWELL})\b", re.IGNORECASE)
"""Greetings, thanks, farewells, small talk: none of it asks anything of the workspace."""
_OPENINGS = (
    (re.compile(rf"\b(?:{_FAREWELL})\b", re.IGNORECASE), "Goodbye!"),
    (re.compile(rf"\b(?:{_THANKS})\b", re.IGNORECASE), "You're welcome!"),
    (re.compile(rf"\b(?:{_GREETING})\b", re.IGNORECASE), "Hello!"),
)
"""How a reply to small talk opens: a farewell with a farewell, thanks with "you're welcome", a
greeting with a greeting (the first that matches)."""
_FILLER = frozenset(
    [
        "a",
        "lot",
        "so",
        "much",
        "very",
        "all",
        "for",
        "everything",
        "help",
        "your",
        "the",
        "today",
        "there",
        "again",
        "man",
        "mate",
        "friend",
        "bot",
        "helpful",
        "useful",
        "kind",
        "good",
        "really",
    ]
)
"""Words that may stand around a greeting or thanks ("thanks a lot", "that was helpful"); after a
greeting or thanks, the words that name no subject (``words.STOP``) may too, unless they ask to see
or list something ("ok, list the files")."""
_CREATIVE = re.compile(
    r"\b(?:joke|jokes|pun|puns|riddle|riddles|poem|poems|story|stories|limerick|haiku|song|fun\s+fact"
    r"|something\s+(?:funny|fun|interesting))\b",
    re.IGNORECASE,
)
"""Something to make up, not to look up ("tell me a joke about bread")."""
_WHOLE = re.compile(
    r"\b(?:show|display|print|cat|dump|open|view|read(?!\s+(?:me\s+)?(?:the\s+)?(?:line|part)))\b"
    r"|\bwhat\s+(?:does|do|did)\b.*\b(?:say|says|list|lists|contain|contains|hold|holds|have|has|include|includes)\b"
    r"|\bwhat(?:'?s|\s+is|\s+are|\s+was)\s+(?:in|inside|on|under)\b"
    r"|\b(?:contents?\s+of|everything\s+in|the\s+(?:whole|full|entire|complete)|all\s+of)\b"
    r"|\blist\b",
    re.IGNORECASE,
)
"""Phrasings that ask for a whole file or listing, not one fact of it."""
_LISTING = re.compile(
    r"\b(?:folders?|director(?:y|ies)|dir|files|list)\b"
    r"|\bwhich\s+(?:\w+\s+){1,2}(?:are|is)\s+(?:there|here|in|available)\b"
    r"|\bwhat\s+(?:\w+\s+){1,2}(?:are\s+there|do\s+(?:you|we|i)\s+have|have\s+(?:you|we|i)\s+got)\b"
    r"|\bwhat(?:'?s|\s+is)\s+in\s+(?:here|this)\b",
    re.IGNORECASE,
)
"""Phrasings about what a folder holds."""
_ROOT = re.compile(
    r"\b(?:here|this\s+(?:folder|directory|dir|workspace|project|place)|the\s+(?:workspace|project)"
    r"|current\s+(?:folder|directory))\b",
    re.IGNORECASE,
)
"""The workspace root."""
_PATH_LIKE = re.compile(r"[\w.-]*(?:/[\w.-]+)+/?|[\w-]+(?:\.[A-Za-z]\w{0,4})+\b")
"""A word written as a path: with a slash, or a name with an extension."""
_CONTINUES = re.compile(r"^\s*(?:and|also|plus|or|then|what\s+about|how\s+about|same\s+for)\b", re.IGNORECASE)
_POINTS_BACK = re.compile(
    r"\b(?:again|that|it|those|them|the\s+other|the\s+rest|previous|earlier|before|the\s+last\s+one|you\s+said"
    r"|above|same)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Request:
    """What one request asks for."""

    text: str
    terms: Counter[str]
    """Its subject words, stemmed (``words.terms``)."""
    chat: bool
    """It asks nothing of the workspace: a greeting, thanks, a joke."""
    whole: bool
    """It asks for a whole file or listing, not one line of it."""
    listing: bool
    """It asks what a folder holds."""
    root: bool
    """It names the workspace root ("here", "this folder")."""
    refers_back: bool
    """It goes on from a request before ("and the host?", "say that again")."""
    opening: str | None = None
    """How a reply to it opens, for small talk ("Hello!", "You're welcome!", "Goodbye!")."""


def subject(text: str) -> Counter[str]:
    """The subject words of ``text`` (``words.terms``), leaving out the paths it writes out: a path
    names itself ("notes.txt"), and "txt" is no subject."""
    return terms(_PATH_LIKE.sub(" ", text))


def read_request(text: str) -> Request:
    rest = _SOCIAL.sub(" ", text)
    left = [w for w in tokens(rest) if w not in _FILLER]
    if rest != text and not (_WHOLE.search(rest) or _LISTING.search(rest) or _ROOT.search(rest)):
        left = [w for w in left if w not in STOP]  # "thank you, that was helpful"
    chat = not left or bool(_CREATIVE.search(text))
    return Request(
        text=text,
        terms=subject(text),
        chat=chat,
        whole=bool(_WHOLE.search(text)),
        listing=bool(_LISTING.search(text)),
        root=bool(_ROOT.search(text)),
        refers_back=bool(_CONTINUES.search(text) or _POINTS_BACK.search(_SOCIAL.sub(" ", text))),
        opening=next((reply for pattern, reply in _OPENINGS if pattern.search(text)), None) if chat else None,
    )
