"""PostgreSQL connections for the shared store: URLs, the SQLite-dialect adapter, errors.

    is_url, redact          connection strings (tools/store/pg_url.py, re-exported here)
    connect(url)            an autocommit psycopg connection (transactions are explicit)
    PgConnection(conn)      runs the store's statements (written for SQLite, tools/store/sql.py) on it
    unavailable(url)        psycopg's errors as StoreUnavailableError / StoreStateError / DiskError

The store's rules are written once, in SQLite's dialect. PostgreSQL differs in little that they
use: placeholders (``?`` and ``:name`` become ``%s`` and ``%(name)s``), ``INSERT OR IGNORE``
(``ON CONFLICT DO NOTHING``), and the SQLite-only upkeep of the vectors and sources tables (the
migrations create them, tools/store/pg_schema.py). Anything else is the same SQL, and a statement
this module does not translate fails loudly in the tests that run every rule on both databases.

psycopg is imported here only: a store in a folder never needs it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from evidence_loop.tools.errors import DiskError, StoreStateError, StoreUnavailableError
from evidence_loop.tools.store import origins, vectors
from evidence_loop.tools.store.pg_url import is_url as is_url
from evidence_loop.tools.store.pg_url import redact as redact
from evidence_loop.tools.store.sql import Rows

if TYPE_CHECKING:
    import psycopg

# Seconds to wait for a server that does not answer before saying it is unreachable.
CONNECT_TIMEOUT_S = 5

# Statements of SQLite-only upkeep and what PostgreSQL runs instead (None: nothing).
_SQLITE_ONLY: dict[str, str | None] = {
    vectors.DDL: None,
    vectors.TABLE_SQL: "SELECT 1",
    origins.DDL: None,
    origins.INDEX_DDL: None,
}
_NAMED = re.compile(r"(?<![:\w]):([A-Za-z_]\w*)")
_OR_IGNORE = re.compile(r"^\s*INSERT OR IGNORE INTO", re.IGNORECASE)


@lru_cache(maxsize=512)
def translate(sql: str) -> str | None:
    """A statement of the store's SQLite dialect in PostgreSQL's (None: nothing to run there)."""
    if sql in _SQLITE_ONLY:
        return _SQLITE_ONLY[sql]
    out = sql.replace("%", "%%").replace("?", "%s")
    out = _NAMED.sub(r"%(\1)s", out)
    if _OR_IGNORE.match(out):
        out = _OR_IGNORE.sub("INSERT INTO", out, count=1) + " ON CONFLICT DO NOTHING"
    return out


class _NoRows:
    """The result of a statement that PostgreSQL has no need to run."""

    def fetchone(self) -> Any:
        return None

    def fetchall(self) -> list[Any]:
        return []

    def __iter__(self) -> Iterator[Any]:
        return iter(())


class PgConnection:
    """A :class:`tools.store.sql.Db` over one psycopg connection (the caller holds its transaction)."""

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self.raw = conn

    def execute(self, sql: str, parameters: Any = None, /) -> Rows:
        statement = translate(sql)
        if statement is None:
            return _NoRows()
        return self.raw.execute(statement, parameters)

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> object:
        statement = translate(sql)
        if statement is not None:
            with self.raw.cursor() as cursor:
                cursor.executemany(statement, list(parameters))
        return None


def connect(url: str) -> psycopg.Connection[Any]:
    """A new autocommit connection; StoreUnavailableError when the server cannot be reached."""
    import psycopg

    with unavailable(url):
        return psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S)


@contextmanager
def unavailable(url: str) -> Iterator[None]:
    """psycopg's errors as ours: a lost or refused connection is StoreUnavailableError (a 503 that
    passes), any other database error a StoreStateError naming the store."""
    import psycopg

    try:
        yield
    except psycopg.errors.DiskFull as exc:
        raise DiskError(
            f"the database server of {redact(url)}", full=True, doing="writing", cause=_first_line(exc)
        ) from exc
    except psycopg.OperationalError as exc:
        raise StoreUnavailableError(
            f"the store at {redact(url)} cannot be reached ({_first_line(exc)})"
        ) from exc
    except psycopg.DatabaseError as exc:
        raise StoreStateError(f"the store at {redact(url)} failed: {_first_line(exc)}") from exc


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
