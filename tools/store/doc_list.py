"""The document list of a store's database: one row per document with a live version (``evloop
docs``, ``Store.documents``). Read with the store's SQL alone (tools/store/sql.py), on SQLite or
PostgreSQL; tools/store/views.py re-exports it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evidence_loop.tools.store.sql import Db


@dataclass(frozen=True, slots=True)
class DocumentInfo:
    """A document with a live version: its current version, every stored version, its unit count."""

    doc_id: str
    title: str
    current_version: str
    versions: tuple[str, ...]
    units: int
    acl: tuple[str, ...]


def read_documents(conn: Db) -> list[DocumentInfo]:
    """Every document with a live version, by doc_id."""
    versions: dict[str, list[str]] = {}
    for doc_id, version in conn.execute(
        "SELECT doc_id, version FROM versions ORDER BY doc_id, added_gen, rowid"
    ):
        versions.setdefault(doc_id, []).append(version)
    rows = conn.execute(
        "SELECT v.doc_id, v.title, v.version, v.acl, "
        "(SELECT count(*) FROM units u WHERE u.doc_id = v.doc_id AND u.version = v.version) "
        "FROM versions v WHERE v.is_current = 1 ORDER BY v.doc_id"
    )
    return [
        DocumentInfo(doc_id, title, version, tuple(versions[doc_id]), units, tuple(json.loads(acl)))
        for doc_id, title, version, acl, units in rows
    ]
