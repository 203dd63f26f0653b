"""Opening an index folder's database: the write connection and the read source, or, on a disk that
takes no writes (full, or failing), a read-only source and the reason, so that reading commands keep
working and writes are refused with the disk's own error (tools.disk)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from evidence_loop.tools.disk import disk_error
from evidence_loop.tools.errors import DiskError
from evidence_loop.tools.search.index import RecallIndex
from evidence_loop.tools.search.snapshot import fingerprint
from evidence_loop.tools.store import generation as gen
from evidence_loop.tools.store.generation import gen_dir
from evidence_loop.tools.store.schema import (
    DB_NAME,
    check_schema,
    connect,
    connect_read_only,
    create_schema,
    database_errors,
    is_blank,
)
from evidence_loop.tools.store.views import DbSource


def connections(
    folder: Path, create: bool, rewrites: bool
) -> tuple[sqlite3.Connection | None, DbSource, DiskError | None]:
    """The write connection, the read source, and (on a disk that takes no writes) why there is
    no write connection: the store is then read without writing, and refuses writes."""
    db_path = folder / DB_NAME
    try:
        folder.mkdir(parents=True, exist_ok=True)
        writer = connect(db_path)
    except (OSError, DiskError) as exc:
        disk = disk_error(exc, folder, "opening the store")
        if disk is None:
            raise
        if not db_path.is_file() or rewrites:
            raise disk from exc
        return None, DbSource(connect_read_only(db_path, disk), folder), disk
    try:
        with database_errors(folder):
            if create and is_blank(writer):
                empty = RecallIndex.build([])
                meta = {"generation": 0, "fingerprint": fingerprint(())}
                gen.save(gen.fresh_dir(gen_dir(folder, 0)), (empty, empty, None), meta)
                create_schema(writer)
            check_schema(writer, folder)
        return writer, DbSource(connect(db_path), folder), None
    except BaseException:
        writer.close()
        raise
