"""Listing the documents of a store (``evloop docs``): what opening the store checks, then one
query, without loading its indexes. A folder's database is read with the sqlite3 module alone, so
the listing imports neither the search stack nor numpy (tests/agent/test_cli_startup.py); a
PostgreSQL store is opened as every command opens it (tools/store/location.py).

The checks are those of ``Store.open`` (tools/store/folder.py) for a reader: a folder without a
database, a database of another schema version and a generation whose index files are missing or
of the wrong size fail with the same errors. Opening the store also removes the index folders of
writers that were killed; a listing leaves them to the next store that opens for writing.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from evidence_loop.tools.store.doc_list import DocumentInfo, read_documents
from evidence_loop.tools.store.folder_open import open_writer
from evidence_loop.tools.store.gen_files import verify_files
from evidence_loop.tools.store.pg_url import is_url
from evidence_loop.tools.store.schema import (
    DB_NAME,
    check_schema,
    connect_read_only,
    database_errors,
    no_index,
    read_generation,
    read_transaction,
)

if TYPE_CHECKING:
    import sqlite3

T = TypeVar("T")


def list_documents(location: str | Path) -> list[DocumentInfo]:
    """Every document with a live version in the store at ``location``, by doc_id."""
    if is_url(location):
        from evidence_loop.tools.store.location import open_store

        with open_store(location) as store:
            return store.documents()
    folder = Path(location)
    conn = _reader(folder)
    try:
        generation = _read(conn, folder, read_generation)
        verify_files(folder, generation, hashes=False)
        return _read(conn, folder, read_documents)
    finally:
        conn.close()


def _reader(folder: Path) -> sqlite3.Connection:
    """The folder's database as ``Store.open`` reaches it: the schema checked on a connection that
    may write, or read-only (unchecked) on a disk that takes no writes (tools/store/folder_open.py)."""
    db_path = folder / DB_NAME
    if not db_path.is_file():
        raise no_index(folder)
    conn, disk = open_writer(folder, rewrites=False)
    if conn is None:
        assert disk is not None
        return connect_read_only(db_path, disk)
    try:
        with database_errors(folder):
            check_schema(conn, folder)
    except BaseException:
        conn.close()
        raise
    return conn


def _read(conn: sqlite3.Connection, folder: Path, fn: Callable[[sqlite3.Connection], T]) -> T:
    """``fn`` inside one read transaction, a damaged database as IndexStateError."""
    with database_errors(folder), read_transaction(conn) as reading:
        return fn(reading)
