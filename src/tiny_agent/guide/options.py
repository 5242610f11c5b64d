"""``GuideOptions``: which of ``json_guide``'s narrowings are on, each a lever of ``benchmarks/tool_choice.py``."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["MAX_CALLS", "MAX_QUOTE", "MAX_QUOTES", "ROOT_WORDS", "UNGUIDED", "WRITE_TOOLS", "GuideOptions"]

WRITE_TOOLS = frozenset({"write_file"})
"""Tools that change the workspace: offered only to a request that asks for a write."""
UNGUIDED = frozenset({"edit_file", "search", "shell"})
"""Tools the guide offers only as the one call a request spells out (``tool_request``): they stay in
the prompt, so the cached prefix holds, but a 135M model that picks them where a read would do
answers worse."""
ROOT_WORDS = frozenset({"workspace"})
"""Words that name the root folder ``.``: the system prompt calls it "the workspace"."""
MAX_CALLS = 2
"""Successful tool calls per request before the model must answer."""
MAX_QUOTE = 1_000
"""Longest quote offered as an answer, in characters (a whole result is cut at a line end)."""
MAX_QUOTES = 100
"""Most quotes offered; beyond it, the newest."""


@dataclass(frozen=True, kw_only=True)
class GuideOptions:
    """Each flag turns one narrowing on (see ``json_guide``'s module doc)."""

    follow_request: bool = True
    """The paths on offer are those the request is about; no write unless it asks for one."""
    required_only: bool = True
    """Optional arguments are left out."""
    look_first: bool = True
    """No answer before this request's first tool result."""
    no_repeat: bool = True
    """A read that already succeeded for this request is not offered again."""
    quote: bool = True
    """The answer quotes what was gathered."""
    max_calls: int | None = MAX_CALLS
    """Successful tool calls per request before the model must answer; None: no limit."""
    root_words: frozenset[str] = ROOT_WORDS
    write_tools: frozenset[str] = WRITE_TOOLS
    match_words: bool = True
    """The paths a word names or a file holds."""
    own_request: bool = True
    """Answers from what this request gathered."""
    phrasing: bool = True
    """What the request's wording asks (a chat, a whole file, a folder)."""
    max_quote: int = MAX_QUOTE
    """Longest quote offered, in characters."""
