"""What the SQL of both backends is written against: a connection that takes ``?`` parameters, and
the few spellings in which SQLite and PostgreSQL differ.

The store's statements are written once, with ``?`` placeholders (``sqlite3``'s style); the
PostgreSQL connection translates them to psycopg's ``%s``. Where the two databases spell a thing
differently (a sum that is 0 over no rows, a condition counted as a number, a local date, a column
of 8-byte floats, a row lock), the statement asks its ``Dialect``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

__all__ = ["POSTGRES", "SQLITE", "Cursor", "Db", "Dialect"]


class Cursor(Protocol):
    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class Db(Protocol):
    """A connection inside the store's transaction: ``sqlite3.Connection`` is one as it is."""

    def execute(self, sql: str, parameters: Sequence[Any] = ..., /) -> Cursor: ...


@dataclass(frozen=True)
class Dialect:
    name: str
    real: str
    """The column type of an 8-byte float (PostgreSQL's ``real`` has 4 bytes)."""
    key: str
    """The column type of a session id: compared byte by byte, so an id prefix is a range."""
    begin: str
    """Opens a write transaction that holds its lock from the start (SQLite: ``IMMEDIATE``)."""
    for_update: str
    """Locks the session row an append reads its head from (SQLite's write lock is the whole file)."""
    same: str
    """``a <same> b`` is true when both are NULL too."""
    day_of_at: str
    """The local date (YYYY-MM-DD) of the column ``at`` (unix seconds)."""
    total_of: str
    """A sum that is 0, not NULL, over no rows; ``{}`` is the summed expression."""
    number_of: str
    """A condition as 1 or 0; ``{}`` is the condition."""
    position_of: str
    """Where text ``{1}`` starts in column ``{0}`` (0: not found)."""

    def total(self, expression: str) -> str:
        return self.total_of.format(expression)

    def count_of(self, condition: str) -> str:
        """How many rows meet ``condition``."""
        return self.total(self.number_of.format(condition))

    def has(self, column: str, word: str) -> str:
        """``column`` contains ``word`` (a fixed word of ours, never user input)."""
        return f"{self.position_of.format(column, word)} > 0"


SQLITE = Dialect(
    name="sqlite",
    real="REAL",
    key="TEXT",
    begin="BEGIN IMMEDIATE",
    for_update="",
    same="IS",
    day_of_at="date(at, 'unixepoch', 'localtime')",
    total_of="total({})",
    number_of="({})",
    position_of="instr({0}, '{1}')",
)

POSTGRES = Dialect(
    name="postgresql",
    real="DOUBLE PRECISION",
    key='TEXT COLLATE "C"',
    begin="BEGIN",
    for_update=" FOR UPDATE",
    same="IS NOT DISTINCT FROM",
    day_of_at="to_char(to_timestamp(at), 'YYYY-MM-DD')",  # the connection's TimeZone is set to the local zone
    total_of="coalesce(sum({}), 0)",
    number_of="({})::int",
    position_of="strpos({0}, '{1}')",
)
