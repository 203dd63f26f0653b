"""What is damaged in an index folder: its database, and every file of its committed generation.

The database is asked ``PRAGMA integrity_check`` (every page, every index against its table) and each
current document text is hashed against the sha256 stored with it, which catches the changed byte
inside a row that SQLite's own check cannot see. The current generation's files are compared with
its manifest: presence, size and sha256 (tools/store/manifest.py). Opening a store only compares sizes,
loading its index the hashes (tools/store/folder.py); this module is the whole look, for ``evloop check``.

Nothing here writes to the folder. A full disk or an I/O error is not damage: on a full disk the
database is read without writing (``tools.store.schema.connect_read_only``), and an error it still gives
is raised as the DiskError it is, never listed with a repair.
"""

from __future__ import annotations

import hashlib
import sqlite3
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from evidence_loop.tools.disk import disk_error
from evidence_loop.tools.errors import DiskError, IndexStateError
from evidence_loop.tools.store.folder import BM25_DIR, gen_dir
from evidence_loop.tools.store.manifest import unlisted_files, verify_manifest
from evidence_loop.tools.store.schema import (
    DB_NAME,
    check_schema,
    connect,
    connect_read_only,
    read_generation,
)

__all__ = ["CheckReport", "Damage", "check_index"]

# What mends it: "reindex" rewrites index files from the database; "ingest" means the database
# itself is damaged and only the sources can restore it.
Repair = Literal["reindex", "ingest"]


@dataclass(frozen=True, slots=True)
class Damage:
    """One problem: ``where`` is a path relative to the index folder, '/'-separated."""

    where: str
    problem: str
    repair: Repair


@dataclass(frozen=True, slots=True)
class CheckReport:
    """The committed generation (None when the database cannot say), the files checked, the damage."""

    generation: int | None
    files: int
    damage: tuple[Damage, ...]


def check_index(folder: Path) -> CheckReport:
    """Look at everything in the index ``folder``; an empty ``damage`` means all is well."""
    if not (folder / DB_NAME).is_file():
        raise IndexStateError(f"no index at {folder}; create one with `evloop ingest PATH --index {folder}`")
    generation, damage = _check_database(folder)
    if generation is None:
        return CheckReport(None, 0, tuple(damage))
    files, file_damage = _check_generation(folder, generation)
    return CheckReport(generation, files, (*damage, *file_damage))


def _check_database(folder: Path) -> tuple[int | None, list[Damage]]:
    """The committed generation as the database records it (None if unreadable), and its damage.

    Each step reports its own failure and the next still runs: a malformed page in the units table
    must not hide that the index files are damaged too.
    """
    generation, damage = None, []
    try:
        with closing(_connect(folder)) as conn:
            check_schema(conn, folder)
            generation = read_generation(conn)
    except (sqlite3.DatabaseError, IndexStateError) as exc:
        _raise_if_disk(exc, folder)
        return None, [_db_damage(exc)]
    with closing(_connect(folder)) as conn:
        for step in (_integrity, _changed_texts):
            try:
                damage += step(conn)
            except sqlite3.DatabaseError as exc:
                _raise_if_disk(exc, folder)
                damage.append(_db_damage(exc))
    return generation, damage


def _connect(folder: Path) -> sqlite3.Connection:
    """A connection to the folder's database; on a full disk one that reads without writing."""
    try:
        return connect(folder / DB_NAME)
    except DiskError as full:
        return connect_read_only(folder / DB_NAME, full)


def _raise_if_disk(exc: Exception, folder: Path) -> None:
    """A full disk or an I/O error is no damage: it is raised as what it is, never reported as damage."""
    disk = disk_error(exc, folder, "checking the store")
    if disk is not None:
        raise disk from exc


def _db_damage(exc: Exception) -> Damage:
    return Damage(DB_NAME, " ".join(str(exc).split()), "ingest")


def _integrity(conn: sqlite3.Connection) -> list[Damage]:
    """SQLite's own check of every page and index; it answers "ok" or one row per problem."""
    rows = [row[0] for row in conn.execute("PRAGMA integrity_check")]
    return [Damage(DB_NAME, row, "ingest") for row in rows if row != "ok"]


def _changed_texts(conn: sqlite3.Connection) -> list[Damage]:
    """Versions whose stored text no longer hashes to the sha256 recorded when it was ingested."""
    conn.text_factory = bytes  # the raw stored bytes: a flipped byte may not even be UTF-8 any more
    damage = []
    for doc_id, version, text, sha256 in conn.execute("SELECT doc_id, version, text, sha256 FROM versions"):
        if hashlib.sha256(text).hexdigest().encode() != sha256:
            doc, ver = (value.decode("utf-8", "replace") for value in (doc_id, version))
            problem = f"the text of {doc!r} version {ver!r} differs from its recorded sha256"
            damage.append(Damage(DB_NAME, problem, "ingest"))
    return damage


def _check_generation(folder: Path, generation: int) -> tuple[int, list[Damage]]:
    """How many files the generation's manifest lists, and each one that does not match it."""
    gen = gen_dir(folder, generation)
    where = gen.relative_to(folder).as_posix()
    if (folder / BM25_DIR).exists() and not (folder / BM25_DIR).is_dir():
        return 0, [Damage(BM25_DIR, "not a folder", "reindex")]
    if not gen.is_dir():
        return 0, [Damage(where, "missing (the database is at this generation)", "reindex")]
    listed = verify_manifest(gen, hashes=True) + unlisted_files(gen)
    files = sum(1 for path in gen.rglob("*") if not path.is_dir())
    return files, [Damage(f"{where}/{d.path}", d.problem, "reindex") for d in listed]
