"""The regular expression of a path ``write_file`` may create: any path but those a rule refuses,
folded the way the file system folds case, as one trie of alternatives a grammar can hold."""

from __future__ import annotations

from collections.abc import Iterable

from tiny_agent.tools.guards import PathRule

__all__ = ["new_path_pattern"]


# The pattern for new paths. Characters a path may never hold: "/" separates, and '"', "\" and
# control characters would need escaping in JSON, which llama.cpp's pattern grammar does not do.
_BAD = '/\\\\"\\x00-\\x1f\\x7f'


_ANY = f"[^{_BAD}]"


_SPACE = " \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000"
"""What ``str.isspace`` calls white space, beyond the control characters ``_BAD`` holds: no component
starts with it, so no path is white space alone (the workspace refuses those as empty)."""


_MAX_NESTING = 60
"""llama.cpp gives up on patterns nested deeper than 100 groups and then accepts any string."""


_FOLDS_TO = {"i": "\u0131", "k": "\u212a", "s": "\u017f"}
"""The non-ASCII characters ``guards.fold`` maps to an ASCII letter."""


def new_path_pattern(rules: Iterable[PathRule], stop_names: Iterable[str]) -> str | None:
    """An anchored regex (Python and llama.cpp alike) for relative paths that no rule protects and that
    pass through no ``stop_names``; None when a rule cannot be expressed soundly."""
    anywhere = _Trie()
    first = _Trie()
    for stop in stop_names:
        if not stop.startswith("."):
            anywhere.add(stop, prefix=False)
            first.add(stop, prefix=False)
    for rule in rules:
        excluded = _exclusion(rule)
        if excluded is None:
            return None
        name, is_prefix, only_first = excluded
        if name is None:
            continue  # starts with ".": no component of a new path does
        first.add(name, prefix=is_prefix)
        if not only_first:
            anywhere.add(name, prefix=is_prefix)
    if not (anywhere.ascii and first.ascii):
        return None
    head = first.regex()
    if head is None:
        return None
    tail = anywhere.regex()
    pattern = f"^{head}$" if tail is None else f"^{head}(?:/{tail})*$"
    depth = nesting = 0
    for ch in pattern:
        nesting += (ch == "(") - (ch == ")")
        depth = max(depth, nesting)
    return pattern if depth <= _MAX_NESTING else None


def _exclusion(rule: PathRule) -> tuple[str | None, bool, bool] | None:
    """(name, is a prefix, first component only) that keeps every path ``rule`` matches out of the
    pattern; name None when the dot rule already does; None when no such exclusion is known."""
    glob = rule.glob
    if rule.anchored and glob.startswith("**/"):
        head, only_first = glob[3:].split("/")[0], False
    elif rule.anchored:
        head, only_first = glob.split("/")[0], True
    else:
        head, only_first = glob, False
    if head.startswith("."):
        return None, False, only_first
    if not any(ch in head for ch in "*?["):
        return head, False, only_first
    stem = head[:-1]
    if head.endswith("*") and stem and not any(ch in stem for ch in "*?["):
        return stem, True, only_first
    return None


class _Trie:
    """Names a path component must not be (``prefix=False``) or start with (``prefix=True``)."""

    def __init__(self) -> None:
        self.children: dict[str, _Trie] = {}
        self.exact = False
        self.dead = False
        self.ascii = True

    def add(self, name: str, *, prefix: bool) -> None:
        self.ascii = self.ascii and name.isascii()
        node = self
        for ch in name:
            node = node.children.setdefault(ch, _Trie())
        if prefix:
            node.dead = True
        else:
            node.exact = True

    def regex(self, root: bool = True) -> str | None:
        """Components allowed from this node on; None if none is."""
        if self.dead:
            return None
        branches: list[str] = []
        taken = ""
        for ch, child in sorted(self.children.items()):
            taken += _variants(ch)
            rest = child.regex(root=False)
            if rest is not None:
                branches.append(_one_of(ch) + rest)
        branches.append(f"[^{_BAD}{'.' + _SPACE if root else ''}{taken}]{_ANY}*")
        body = branches[0] if len(branches) == 1 and root else f"(?:{'|'.join(branches)})"
        return body if root or self.exact else f"{body}?"


def _variants(ch: str) -> str:
    """``ch`` and every character that folds to it, escaped for a character class."""
    chars = ch + ch.upper() + _FOLDS_TO.get(ch, "") if ch.isalpha() else ch
    return "".join(dict.fromkeys(_escape(c) for c in chars))


def _one_of(ch: str) -> str:
    variants = _variants(ch)
    return f"[{variants}]" if ch.isalpha() else variants


def _escape(ch: str) -> str:
    if ch.isascii() and (ch.isalnum() or ch in "_ "):
        return ch
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
