"""What the file tools refuse inside the workspace: protected paths for writes, secrets for reads.

Rules are globs with .gitignore-like anchoring (see ``PathRule``), matched without regard to case
(``fold``): on macOS and Windows ``.GIT/config`` is ``.git/config``, and over-protecting ``.GIT`` on
Linux costs nothing. They live in code, not in the conversation, because a rule that lives only in the
conversation can drop out of it (the ``dev.mjs`` story in the seed).

Writes. Besides the user's ``protect=`` globs, a few paths are protected by default: those where a
change runs code by itself on an ordinary action (the next commit, ``git status``, ``cd``, opening
the editor) or rewrites history, usually where ``git diff`` does not show it. ``default_protect=False``
lifts them. Deliberately not in the list: CI workflows and build files (a change there shows in the
diff and runs only when the user pushes or builds).

Reads. Files that look like secrets need the user's consent (``allow_read=``), for every provider,
the local one included: what a tool returns is kept in the session store on disk (and, with a remote
model, sent to its provider), and one rule is easier to trust than a rule that changes with the
provider. Templates meant to be committed (``.env.example``, ``.env.sample``, ``.env.template``,
``.env.dist``) are readable: they show the names of the settings, not their values.
"""

from __future__ import annotations

import fnmatch
import functools
import posixpath
import re
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Protocol

from tiny_agent.errors import ConfigError
from tiny_agent.tools.guard_lists import DEFAULT_PROTECT, SECRET_TEMPLATES, SECRETS

__all__ = [
    "ALLOW_READ_FLAG",
    "ALLOW_WRITE_DEFAULTS_FLAG",
    "DEFAULT_PROTECT",
    "SECRETS",
    "SECRET_TEMPLATES",
    "Confined",
    "Guards",
    "PathRule",
    "Refusal",
    "fold",
    "protected_message",
    "secret_message",
]

ALLOW_READ_FLAG = "--allow-read"
"""The CLI flag a secret refusal tells the user about."""
ALLOW_WRITE_DEFAULTS_FLAG = "--allow-write-defaults"
"""The CLI flag a default-protection refusal tells the user about."""


@dataclass(frozen=True)
class PathRule:
    """One glob with .gitignore-like anchoring, matched on case-folded relative POSIX paths."""

    text: str
    """As given, for messages."""
    glob: str
    """Normalised and case-folded."""
    anchored: bool
    """True if the glob has a "/" before its end: match the whole relative path, else any name."""
    reason: str = ""
    """Why a default rule exists; empty for the user's own rules."""
    unless: tuple[str, ...] = ()
    """Names (case-folded globs) the rule leaves alone even when the glob matches them."""

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
        return PathRule(text, fold(glob), anchored, reason, unless)

    def matches(self, rel: PurePosixPath) -> bool:
        """True if ``rel`` or one of its parent directories matches."""
        return self.matches_subject(_subject(rel))

    def matches_subject(self, subject: _Subject) -> bool:
        for path, name in zip(*subject, strict=True):
            if any(_regex(exempt).match(name) for exempt in self.unless):
                continue
            if self.anchored:
                if any(_regex(glob).match(path) for glob in self.path_globs):
                    return True
            elif _regex(self.glob).match(name):
                return True
        return False

    @property
    def path_globs(self) -> tuple[str, ...]:
        """For an anchored rule, the globs a whole relative path is matched against."""
        return (self.glob, self.glob[3:]) if self.glob.startswith("**/") else (self.glob,)


_Subject = tuple[tuple[str, ...], tuple[str, ...]]
"""A relative path folded, as (itself and its parents as paths, the name of each), outermost first."""


def _subject(rel: PurePosixPath) -> _Subject:
    parts = fold(str(rel)).split("/")
    return tuple("/".join(parts[: i + 1]) for i in range(len(parts))), tuple(parts)


@functools.lru_cache(maxsize=1024)
def _regex(glob: str) -> re.Pattern[str]:
    return re.compile(fnmatch.translate(glob))


class _RuleSet:
    """Rules in order, with one combined regex per kind to rule out most paths in a single match."""

    def __init__(self, rules: tuple[PathRule, ...]) -> None:
        self.rules = rules
        names = [fnmatch.translate(r.glob) for r in rules if not r.anchored]
        paths = [fnmatch.translate(g) for r in rules if r.anchored for g in r.path_globs]
        self._names = re.compile("|".join(names)) if names else None
        self._paths = re.compile("|".join(paths)) if paths else None

    def first(self, subject: _Subject) -> PathRule | None:
        paths, names = subject
        names_hit = self._names is not None and any(self._names.match(n) for n in names)
        if not names_hit and not (self._paths is not None and any(self._paths.match(p) for p in paths)):
            return None
        return next((rule for rule in self.rules if rule.matches_subject(subject)), None)


@dataclass(frozen=True)
class Refusal:
    """Which rule refused which path (the relative path the rule matched)."""

    rule: PathRule
    path: PurePosixPath


class Guards:
    """The rules of one workspace: ``protect`` (user globs) plus the defaults, and ``allow_read``."""

    def __init__(
        self,
        root: Path,
        *,
        protect: Sequence[str] = (),
        default_protect: bool = True,
        allow_read: Sequence[str] = (),
    ) -> None:
        self.user_rules = tuple(PathRule.parse(p, root, flag="--protect") for p in protect)
        defaults = tuple(PathRule.parse(g, root, flag="--protect", reason=why) for g, why in DEFAULT_PROTECT)
        self.default_rules = defaults if default_protect else ()
        self.secret_rules = tuple(
            PathRule.parse(g, root, flag="--allow-read", reason=why, unless=_unless(g)) for g, why in SECRETS
        )
        self.allow_rules = tuple(PathRule.parse(a, root, flag=ALLOW_READ_FLAG) for a in allow_read)
        self._write = _RuleSet(self.write_rules)
        self._secrets = _RuleSet(self.secret_rules)
        self._allowed = _RuleSet(self.allow_rules)

    @property
    def write_rules(self) -> tuple[PathRule, ...]:
        """The user's rules first, so a refusal names the rule the user wrote."""
        return self.user_rules + self.default_rules

    def protected(self, candidates: Iterable[PurePosixPath]) -> Refusal | None:
        """The first write rule matching any of ``candidates`` (a path as written and as resolved)."""
        subjects = [(path, _subject(path)) for path in candidates]
        found = [(rule, path) for path, subject in subjects if (rule := self._write.first(subject)) is not None]
        if not found:
            return None
        rule, path = min(found, key=lambda hit: self.write_rules.index(hit[0]))  # the user's rules come first
        return Refusal(rule, path)

    def secret(self, candidates: Iterable[PurePosixPath]) -> Refusal | None:
        """The first secret rule matching a candidate the user has not allowed. Each candidate is
        judged on its own: allowing ``notes.txt`` does not allow ``.env`` behind a symlink named so."""
        for path in candidates:
            subject = _subject(path)
            rule = self._secrets.first(subject)
            if rule is not None and self._allowed.first(subject) is None:
                return Refusal(rule, path)
        return None


class Confined(Protocol):
    """What a tool confined to a workspace uses of it (``workspace.Workspace`` is one)."""

    root: Path
    guards: Guards
    max_output_chars: int

    def resolve(self, path: str) -> Path: ...

    def candidates(self, path: str, resolved: Path) -> list[PurePosixPath]: ...


def protected_message(shown: str, refusal: Refusal) -> str:
    rule = refusal.rule
    if not rule.reason:
        return f"refused: {shown} is protected (--protect {rule.text}); change something else"
    return (
        f"refused: {shown} is protected by default (rule {rule.text}, lifted only by the user's "
        f"{ALLOW_WRITE_DEFAULTS_FLAG}); change something else\n"
        f"Why: {rule.reason}."
    )


def secret_message(shown: str, refusal: Refusal) -> str:
    """First line for the user's per-turn output (what and how to allow it), then why, for the model."""
    path = str(refusal.path)
    via = "" if path == posixpath.normpath(shown) else f" (it leads to {path})"
    return (
        f"refused: {shown} looks like a secret{via}; the user can allow it with {ALLOW_READ_FLAG} {shlex.quote(path)}\n"
        f"Why: {refusal.rule.text}: {refusal.rule.reason}. Reading a secret needs the user's consent, because "
        "what a tool returns is kept in the session store and, with a remote model, sent to its provider. "
        "Do not retry it or reach it by another path; carry on without it, or ask the user."
    )


def fold(text: str) -> str:
    """``text`` with each character mapped to one case-insensitive representative, one character to
    one: ``K``, the Kelvin sign and ``k`` are all ``k``; the long s (U+017F) is ``s`` and the dotless i
    (U+0131) is ``i`` (their upper case is ASCII, which is how NTFS compares names). Characters whose
    folding would take several (``ß``, ``İ``) stay as they are, so the grammar can mirror this one
    character at a time."""
    if text.isascii():
        return text.lower()
    return "".join(_fold_char(ch) for ch in text)


@functools.lru_cache(maxsize=4096)
def _fold_char(ch: str) -> str:
    for candidate in (ch.upper().lower(), ch.casefold()):
        if len(candidate) == 1:
            return candidate
    return ch


def _unless(glob: str) -> tuple[str, ...]:
    return SECRET_TEMPLATES if glob == ".env.*" else ()
