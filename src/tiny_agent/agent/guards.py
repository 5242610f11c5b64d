"""What the file tools refuse inside the workspace: the user's protected paths for writes.

Rules are globs with .gitignore-like anchoring (see ``PathRule``), matched without regard to case:
on macOS and Windows ``DEV.mjs`` is ``dev.mjs``, and over-protecting on Linux costs nothing. They
live in code, not in the conversation, because a rule that lives only in the conversation can drop
out of it (the ``dev.mjs`` story in the seed).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath

from tiny_agent.errors import ConfigError

__all__ = ["Guards", "PathRule"]


@dataclass(frozen=True)
class PathRule:
    """One glob with .gitignore-like anchoring, matched on lower-cased relative POSIX paths."""

    text: str
    """As given, for messages."""
    glob: str
    """Normalised and lower-cased."""
    anchored: bool
    """True if the glob has a "/" before its end: match the whole relative path, else any name."""
    reason: str = ""
    """Why a default rule exists; empty for the user's own rules."""
    unless: tuple[str, ...] = ()
    """Names (lower-case globs) the rule leaves alone even when the glob matches them."""

    @staticmethod
    def parse(text: str, root: Path, *, flag: str, reason: str = "", unless: tuple[str, ...] = ()) -> PathRule:
        """Raises ConfigError for a blank glob or an absolute one outside ``root``."""
        glob = text.strip()
        if not glob:
            raise ConfigError(
                f"{flag} {text!r} is empty: it would match every path. Give a glob relative to the "
                f"workspace, such as {flag} 'dev.mjs' or {flag} 'src/'; to match the whole workspace "
                f"write {flag} '**'"
            )
        if glob.startswith("/"):
            if not Path(glob).is_relative_to(root):
                raise ConfigError(f"{flag} {text!r} is outside the workspace ({root}); use a pattern relative to it")
            glob = Path(glob).relative_to(root).as_posix()
            anchored = True
        else:
            anchored = "/" in glob.rstrip("/")
        while glob.startswith("./"):
            glob = glob[2:]
        glob = glob.removesuffix("/**").rstrip("/")
        if glob in ("", "."):
            glob, anchored = "*", False
        return PathRule(text, glob.lower(), anchored, reason, unless)

    def matches(self, rel: PurePosixPath) -> bool:
        """True if ``rel`` or one of its parent directories matches."""
        lowered = PurePosixPath(str(rel).lower())
        return any(self._matches_one(candidate) for candidate in (lowered, *lowered.parents[:-1]))

    def _matches_one(self, candidate: PurePosixPath) -> bool:
        if any(fnmatchcase(candidate.name, name) for name in self.unless):
            return False
        if not self.anchored:
            return fnmatchcase(candidate.name, self.glob)
        path = str(candidate)
        return fnmatchcase(path, self.glob) or (self.glob.startswith("**/") and fnmatchcase(path, self.glob[3:]))


@dataclass(frozen=True)
class Refusal:
    """Which rule refused which path (the relative path the rule matched)."""

    rule: PathRule
    path: PurePosixPath


class Guards:
    """The rules of one workspace: ``protect`` (user globs)."""

    def __init__(self, root: Path, *, protect: Sequence[str] = ()) -> None:
        self.user_rules = tuple(PathRule.parse(p, root, flag="--protect") for p in protect)

    @property
    def write_rules(self) -> tuple[PathRule, ...]:
        return self.user_rules

    def protected(self, candidates: Iterable[PurePosixPath]) -> Refusal | None:
        """The first write rule matching any of ``candidates`` (a path as written and as resolved)."""
        paths = tuple(candidates)
        for rule in self.write_rules:
            for path in paths:
                if rule.matches(path):
                    return Refusal(rule, path)
        return None


def protected_message(shown: str, refusal: Refusal) -> str:
    return f"refused: {shown} is protected (--protect {refusal.rule.text}); change something else"
