"""What a write would change, as its own transaction reads it: the target a ``WriteGuard`` is shown.

Who may write what is the caller's decision (agent/access/write_access.py); the store shows the guard each
document's ``WriteTarget`` inside the write transaction, before anything of the document is written,
so that no write of another process can land between the check and the write.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from evidence_loop.tools.store.sql import Db
from evidence_loop.tools.types import DocumentInput


@dataclass(frozen=True, slots=True)
class WriteTarget:
    """What one write would change, as the write's own transaction reads it.

    ``live_acl``: the ACL of the document's live version (None: no live version); ``stored_acl``:
    of the stored version the write names (None: not stored, or a delete); ``new_acl``: the ACL the
    write brings (None: a delete).
    """

    doc_id: str
    version: str | None
    live_acl: tuple[str, ...] | None
    stored_acl: tuple[str, ...] | None
    new_acl: tuple[str, ...] | None


WriteGuard = Callable[[WriteTarget], None]
"""Told each target inside the write transaction; raises to refuse it (the whole batch rolls back)."""


def target_of(conn: Db, doc: DocumentInput) -> WriteTarget:
    """The target of writing ``doc`` as labelled, as ``conn``'s transaction reads the store."""
    return read_target(conn, doc.doc_id, doc.version, tuple(sorted(set(doc.acl))))


def read_target(conn: Db, doc_id: str, version: str | None, new_acl: tuple[str, ...] | None) -> WriteTarget:
    """The ACLs a write to ``doc_id`` (``version``; None: a delete) meets, read in its transaction."""
    live: tuple[str, ...] | None = None
    stored: tuple[str, ...] | None = None
    rows = conn.execute(
        "SELECT version, acl, is_current FROM versions WHERE doc_id = ? AND (is_current = 1 OR version = ?)",
        (doc_id, version),
    ).fetchall()
    for row_version, acl_json, is_current in rows:
        acl = tuple(json.loads(acl_json))
        if is_current:
            live = acl
        if row_version == version:
            stored = acl
    return WriteTarget(doc_id, version, live, stored, new_acl)
