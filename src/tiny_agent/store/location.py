"""Which store a location names: a SQLite file path, or a ``postgresql://`` URL of a database that
several hosts share. Any other URL is refused in one line before anything is created (a URL taken
for a path would become a folder named after it, password and all). ``tiny_agent.store.open_store``
opens what a location names.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit

import platformdirs

from tiny_agent.errors import ConfigError
from tiny_agent.redaction import display_url

__all__ = [
    "POSTGRES_SCHEMES",
    "STORE_ENV",
    "default_location",
    "is_postgres",
    "shown_location",
    "unencoded_userinfo",
]

STORE_ENV = "TINY_AGENT_STORE"
"""Environment variable naming the store (a file path or a postgresql:// URL); ``--store`` overrides it."""
POSTGRES_SCHEMES = ("postgresql", "postgres")
"""The URL schemes libpq reads, both served by the PostgreSQL backend."""

_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


def default_location(env: Mapping[str, str] = os.environ) -> str:
    """``$TINY_AGENT_STORE``, else ``sessions.db`` in the user data folder (platformdirs)."""
    explicit = env.get(STORE_ENV)
    if explicit:
        return explicit
    return str(Path(platformdirs.user_data_dir("tiny-agent")) / "sessions.db")


def is_postgres(location: str) -> bool:
    """Whether ``location`` is a PostgreSQL URL; any other URL is a ``ConfigError``, a path is False."""
    found = _URL.match(location.strip())
    if found is None:
        return False
    scheme = found.group(1)
    if scheme.lower() in POSTGRES_SCHEMES:
        return True
    raise ConfigError(
        f"session store {shown_location(location)} is a {scheme} URL, and tiny-agent keeps sessions in a SQLite "
        f"file or a PostgreSQL database: give a file path or a postgresql:// URL with --store or {STORE_ENV}"
    )


def shown_location(location: str) -> str:
    """The location as messages show it: a URL without its user, password and query (read from the
    last ``@``, so that a password holding one is not taken for the host), and where it names no
    host, where libpq will go instead ($PGHOST, else the local socket)."""
    text = location.strip()
    found = _URL.match(text)
    if found is None:
        return location
    scheme, rest = found.group(1), text[found.end() :].rpartition("@")[2]
    try:
        shown = display_url(f"{scheme}://{rest}")
    except ValueError:  # a port that is not a number
        return f"{scheme}://{rest.split('/')[0].split(':')[0]}:(port?)"
    parts = urlsplit(f"{scheme}://{rest}")
    if parts.hostname:
        return shown
    return f"{scheme}://{os.environ.get('PGHOST') or '(local socket)'}{parts.path}"


def unencoded_userinfo(location: str) -> str | None:
    """The character of a URL's user or password that libpq would misread unless percent-encoded
    (a space, ``@``, ``/``, ``#``, ``?``), if there is one: libpq then quotes the password back in
    its error, or takes part of it for the host."""
    text = location.strip()
    found = _URL.match(text)
    if found is None or "@" not in text[found.end() :]:
        return None
    userinfo = text[found.end() :].rpartition("@")[0]
    return next((c for c in " @/#?" if c in userinfo), None)
