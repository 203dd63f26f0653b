"""Opening an index folder's database: the write connection and the read source, or, on a disk that
takes no writes (full, or failing), a read-only source and the reason, so that reading commands keep
working and writes are refused with the disk's own error (tools.disk)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

from evidence_loop.tools.disk import disk_error
from evidence_loop.tools.errors import DiskError
from evidence_loop.tools.store.schema import (
    DB_NAME,
    check_schema,
    connect,
    connect_read_only,
    create_schema,
    database_errors,
    is_blank,
)

if TYPE_CHECKING:
    from evidence_loop.tools.store.views import DbSource


def open_writer(folder: Path, rewrites: bool) -> tuple[sqlite3.Connection | None, DiskError | None]:
    """The write connection of the folder's database, or, on a disk that takes no writes, None and
    why (raised instead when there is no database yet to read, or the caller means to rewrite it)."""
    db_path = folder / DB_NAME
    try:
        folder.mkdir(parents=True, exist_ok=True)
        return connect(db_path), None
    except (OSError, DiskError) as exc:
        disk = disk_error(exc, folder, "opening the store")
        if disk is None:
            raise
        if not db_path.is_file() or rewrites:
            raise disk from exc
        return None, disk


def connections(
    folder: Path, create: bool, rewrites: bool
) -> tuple[sqlite3.Connection | None, DbSource, DiskError | None]:
    """The write connection, the read source, and (on a disk that takes no writes) why there is
    no write connection: the store is then read without writing, and refuses writes."""
    from evidence_loop.tools.store.views import DbSource

    db_path = folder / DB_NAME
    writer, disk = open_writer(folder, rewrites)
    if writer is None:
        assert disk is not None
        return None, DbSource(connect_read_only(db_path, disk), folder), disk
    try:
        with database_errors(folder):
            if create and is_blank(writer):
                _create(folder, writer)
            check_schema(writer, folder)
        return writer, DbSource(connect(db_path), folder), None
    except BaseException:
        writer.close()
        raise


def _create(folder: Path, writer: sqlite3.Connection) -> None:
    """An empty store: generation 0's (empty) index folder, then the schema."""
    from evidence_loop.tools.search.index import RecallIndex
    from evidence_loop.tools.search.snapshot import fingerprint
    from evidence_loop.tools.store import generation as gen

    empty = RecallIndex.build([])
    meta = {"generation": 0, "fingerprint": fingerprint(())}
    gen.save(gen.fresh_dir(gen.gen_dir(folder, 0)), (empty, empty, None), meta)
    create_schema(writer)
