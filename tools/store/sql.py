"""The one connection shape the store's SQL is written against, whichever database runs it.

The rules that write and read documents (tools/store/ingest.py, tools/store/views.py, tools/store/vectors.py,
tools/store/calibration.py) are written once, in SQLite's dialect, against :class:`Db`: a
``sqlite3.Connection`` is one, and so is :class:`tools.store.pg.PgConnection`, which runs the same
statements on PostgreSQL (placeholders and ``INSERT OR IGNORE`` translated, see tools/store/pg.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol, TypeVar

from evidence_loop.tools.search.snapshot import VersionSource

T = TypeVar("T")


class Rows(Protocol):
    """The result of one statement: tuples, read once."""

    def fetchone(self) -> Any: ...
    def fetchall(self) -> list[Any]: ...
    def __iter__(self) -> Iterator[Any]: ...


class Db(Protocol):
    """A connection that runs the store's statements inside its caller's transaction."""

    def execute(self, sql: str, parameters: Any = ..., /) -> Rows: ...
    def executemany(self, sql: str, parameters: Iterable[Any], /) -> object: ...


class Source(VersionSource, Protocol):
    """Where a store reads: one read transaction per call, and the versions a snapshot asks for."""

    def read(self, fn: Callable[[Db], T], /) -> T: ...
    def close(self) -> None: ...
