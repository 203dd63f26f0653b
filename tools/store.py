"""The embedded store: one folder with a SQLite database and one bm25s index folder per generation.

    FOLDER/store.sqlite3           documents, versions, sections, units, ACL (see tools/schema.py)
    FOLDER/bm25/gen-000042/           the recall index over the units live at generation 42
    FOLDER/bm25/gen-000042/passages/  the index over their passages (tools/passages.py)

Every change (an ingest batch, a delete) is one write transaction that ends by recording a new
generation. The index folder of that generation (both indexes) is written *before* the commit, so a committed
generation always has its index; a kill at any point leaves the previous generation intact and
queryable. Folders of older generations are removed after the commit, strays of killed writers
when the store is next opened.

Readers work on :class:`~tools.snapshot.Snapshot` values: a snapshot never changes, so a question
answered while an ingest runs sees one consistent corpus from start to end.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from tools.errors import IndexStateError, NotFoundError
from tools.index import META_FILE, RecallIndex
from tools.ingest import Tally, apply_document, retire_document
from tools.passages import passage_tokens
from tools.schema import DB_NAME, check_schema, connect, create_schema, read_generation, write_generation
from tools.snapshot import CorpusView, Snapshot, fingerprint
from tools.types import DocumentInput
from tools.views import DbSource, load_view

__all__ = ["DocumentInfo", "IngestReport", "Snapshot", "Store"]

BM25_DIR = "bm25"
PASSAGES_DIR = "passages"
# Test hook: a kill -9 of the ingesting process at a named stage ("rows", "index", "commit").
CRASH_ENV = "EVLOOP_TEST_CRASH_AT"
_PAST_SNAPSHOTS = 4


@dataclass(frozen=True, slots=True)
class IngestReport:
    """What one ingest batch did. ``documents`` counts documents added or updated."""

    documents: int
    versions_added: int
    unchanged: int
    skipped: tuple[tuple[str, str], ...]
    units: int
    seconds: float
    generation: int


@dataclass(frozen=True, slots=True)
class DocumentInfo:
    """A document with a live version: its current version, every stored version, its unit count."""

    doc_id: str
    title: str
    current_version: str
    versions: tuple[str, ...]
    units: int
    acl: tuple[str, ...]


def _crash_point(stage: str) -> None:
    if os.environ.get(CRASH_ENV) == stage:
        os.kill(os.getpid(), signal.SIGKILL)


def _gen_dir(folder: Path, generation: int) -> Path:
    return folder / BM25_DIR / f"gen-{generation:06d}"


def _missing_index_hint(folder: Path, generation: int) -> str:
    return (
        f"the bm25 index of generation {generation} is missing or damaged in {_gen_dir(folder, generation)}; "
        f"rebuild it from the database with `evloop reindex --index {folder}` "
        f"(Store.open(..., rebuild_index=True)), or delete {folder} and ingest again"
    )


class Store:
    """A knowledge base on disk: ingest and delete documents, take snapshots to search them."""

    def __init__(self, folder: Path, writer: sqlite3.Connection, source: DbSource, generation: int) -> None:
        self._folder = folder
        self._writer = writer
        self._source = source
        self._generation = generation
        self._current: Snapshot | None = None
        self._past: OrderedDict[int, Snapshot] = OrderedDict()
        self._lock = threading.RLock()
        self._write_lock = threading.Lock()

    @classmethod
    def open(cls, path: str | Path, *, create: bool = False, rebuild_index: bool = False) -> Store:
        """Open the store in ``path`` (``create``: make an empty one if there is none).

        ``rebuild_index`` rewrites the current generation's index files from the stored tokens.
        """
        folder = Path(path)
        db_path = folder / DB_NAME
        if not db_path.is_file() and not create:
            raise IndexStateError(
                f"no index at {folder}; create one with `evloop ingest PATH --index {folder}`"
            )
        folder.mkdir(parents=True, exist_ok=True)
        writer = connect(db_path)
        try:
            if create and _is_blank(writer):
                empty = RecallIndex.build([])
                meta = {"generation": 0, "fingerprint": fingerprint(())}
                _save_indexes(_fresh_dir(_gen_dir(folder, 0)), empty, empty, meta)
                create_schema(writer)
            check_schema(writer, folder)
            source = DbSource(connect(db_path))
        except BaseException:
            writer.close()
            raise
        store = cls(folder, writer, source, source.read(read_generation))
        try:
            store._clean_strays()
            if rebuild_index:
                store._rebuild_index()
            if not (_gen_dir(folder, store._generation) / META_FILE).is_file():
                raise IndexStateError(_missing_index_hint(folder, store._generation))
        except BaseException:
            store.close()
            raise
        return store

    @property
    def generation(self) -> int:
        """The committed generation this store object shows (see :meth:`refresh`)."""
        return self._generation

    def ingest(
        self,
        docs: Iterable[DocumentInput],
        *,
        replace: bool = False,
        max_bytes: int = 20_000_000,
        progress: Callable[[int], None] | None = None,
    ) -> IngestReport:
        """Add a batch of documents in one transaction, then rebuild the index once.

        All or nothing: an error (a version clash, an oversize document, a parse failure) or a kill
        leaves the store as it was. The rules per document are in :mod:`tools.ingest`.
        """
        started = time.perf_counter()
        tally = Tally()

        def write(conn: sqlite3.Connection, generation: int) -> bool:
            for count, doc in enumerate(docs, start=1):
                apply_document(conn, doc, generation, replace=replace, max_bytes=max_bytes, tally=tally)
                if count == 1:
                    _crash_point("rows")
                if progress is not None:
                    progress(count)
            return tally.changed

        generation = self._write(write)
        return IngestReport(
            documents=tally.added + tally.updated,
            versions_added=tally.versions_added,
            unchanged=tally.unchanged,
            skipped=tuple(tally.skipped),
            units=tally.units,
            seconds=time.perf_counter() - started,
            generation=generation,
        )

    def delete(self, doc_id: str) -> None:
        """Stop serving a document; its versions stay stored and readable for replay."""

        def write(conn: sqlite3.Connection, generation: int) -> bool:
            if not retire_document(conn, doc_id, generation):
                raise NotFoundError(f"no document {doc_id!r} in the store")
            return True

        self._write(write)

    def documents(self) -> list[DocumentInfo]:
        """Every document with a live version, by doc_id."""
        return self._source.read(_read_documents)

    def snapshot(self, generation: int | None = None) -> Snapshot:
        """A consistent view at ``generation`` (None: this store's latest); past ones rebuilt in memory."""
        with self._lock:
            if generation is None or generation == self._generation:
                if self._current is None:
                    self._current = self._load_current()
                return self._current
            if not 0 <= generation < self._generation:
                raise NotFoundError(f"generation {generation} is not committed (latest: {self._generation})")
            past = self._past.get(generation)
            if past is None:
                view, tokens = self._source.read(lambda conn: load_view(conn, generation))
                past = Snapshot(view, *_build_indexes(view, tokens), self._source)
                self._past[generation] = past
                if len(self._past) > _PAST_SNAPSHOTS:
                    self._past.popitem(last=False)
            self._past.move_to_end(generation)
            return past

    def refresh(self) -> bool:
        """Follow a newer generation committed by another store object or process; True if there was one."""
        latest = self._source.read(read_generation)
        with self._lock:
            if latest <= self._generation:
                return False
            self._generation = latest
            self._current = None
            return True

    def close(self) -> None:
        """Close the database connections; snapshots taken from this store stop reading versions."""
        with self._write_lock:
            self._writer.close()
        self._source.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def _write(self, write: Callable[[sqlite3.Connection, int], bool]) -> int:
        """Run ``write`` in one write transaction; if it changed anything, publish a new generation."""
        with self._write_lock:
            conn = self._writer
            conn.execute("BEGIN IMMEDIATE")
            generation = -1
            try:
                generation = read_generation(conn) + 1
                if not write(conn, generation):
                    conn.execute("ROLLBACK")
                    return generation - 1
                snapshot = self._publish(conn, generation)
                _crash_point("index")
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                    # Under the write lock this folder can only be our own, uncommitted one.
                    if generation > 0:
                        shutil.rmtree(_gen_dir(self._folder, generation), ignore_errors=True)
                raise
            _crash_point("commit")
            with self._lock:
                self._generation = generation
                self._current = snapshot
            self._remove_folders(lambda g: g < generation)
            return generation

    def _publish(self, conn: sqlite3.Connection, generation: int) -> Snapshot:
        """Index what is live at ``generation`` (uncommitted rows included), save it, record it."""
        snapshot = self._save_index(conn, generation)
        write_generation(conn, generation)
        return snapshot

    def _save_index(self, conn: sqlite3.Connection, generation: int) -> Snapshot:
        """Build the index over what ``conn`` sees live at ``generation`` and write its folder."""
        view, tokens = load_view(conn, generation)
        units, passages = _build_indexes(view, tokens)
        snapshot = Snapshot(view, units, passages, self._source)
        meta = {"generation": generation, "fingerprint": snapshot.fingerprint}
        _save_indexes(_fresh_dir(_gen_dir(self._folder, generation)), units, passages, meta)
        return snapshot

    def _load_current(self) -> Snapshot:
        """The snapshot at this store's generation, from the saved index files."""
        generation = self._generation
        view, tokens = self._source.read(lambda conn: load_view(conn, generation))
        folder = _gen_dir(self._folder, generation)
        if not folder.is_dir() and generation < self._source.read(read_generation):
            # Another process moved on and removed this folder: the stored tokens rebuild it exactly.
            return Snapshot(view, *_build_indexes(view, tokens), self._source)
        try:
            units, meta = RecallIndex.load(folder)
            passages, passage_meta = RecallIndex.load(folder / PASSAGES_DIR)
        except IndexStateError as exc:
            raise IndexStateError(f"{exc}; {_missing_index_hint(self._folder, generation)}") from exc
        _check_meta(meta, view, generation, self._folder, rows=len(view.units))
        _check_meta(passage_meta, view, generation, self._folder, rows=view.passages)
        return Snapshot(view, units, passages, self._source)

    def _rebuild_index(self) -> None:
        """Rewrite the current generation's index folder from the stored tokens."""
        with self._write_lock:
            self._writer.execute("BEGIN IMMEDIATE")
            try:
                generation = read_generation(self._writer)
                snapshot = self._save_index(self._writer, generation)
            finally:
                self._writer.execute("ROLLBACK")
        with self._lock:
            self._generation = generation
            self._current = snapshot

    def _clean_strays(self) -> None:
        """Remove index folders other than the committed one, unless a writer is at work right now."""
        conn = self._writer
        conn.execute("PRAGMA busy_timeout = 0")
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError:
            return  # a writer holds the lock: its folder is not a stray
        finally:
            conn.execute("PRAGMA busy_timeout = 30000")
        try:
            committed = read_generation(conn)
            self._remove_folders(lambda g: g != committed)
        finally:
            conn.execute("ROLLBACK")

    def _remove_folders(self, doomed: Callable[[int], bool]) -> None:
        root = self._folder / BM25_DIR
        for child in root.iterdir() if root.is_dir() else ():
            name = child.name
            if name.startswith("gen-") and name[4:].isdigit() and doomed(int(name[4:])):
                shutil.rmtree(child, ignore_errors=True)


def _is_blank(conn: sqlite3.Connection) -> bool:
    """True for a database with no tables yet (new, or a creation killed before it committed)."""
    try:
        count: int = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        return count == 0
    except sqlite3.DatabaseError:
        return False  # not a database at all: check_schema reports it


def _fresh_dir(folder: Path) -> Path:
    """``folder`` after removing whatever a killed writer may have left there."""
    if folder.exists():
        shutil.rmtree(folder)
    return folder


def _build_indexes(view: CorpusView, tokens: list[list[str]]) -> tuple[RecallIndex, RecallIndex]:
    """The unit index and the passage index, both from the stored unit tokens."""
    return RecallIndex.build(tokens), RecallIndex.build(passage_tokens(view.unit_passage, tokens))


def _save_indexes(folder: Path, units: RecallIndex, passages: RecallIndex, meta: dict[str, object]) -> None:
    """Write both indexes of one generation into its (new) folder."""
    units.save(folder, meta)
    passages.save(folder / PASSAGES_DIR, meta)


def _check_meta(
    meta: dict[str, object], view: CorpusView, generation: int, folder: Path, *, rows: int
) -> None:
    """A saved index must describe exactly the units (or passages) the database says were live."""
    expected = {"generation": generation, "units": rows, "fingerprint": fingerprint(view.docs)}
    found = {key: meta.get(key) for key in expected}
    if found != expected:
        raise IndexStateError(
            f"the bm25 index does not match the database ({found} != {expected}); "
            f"{_missing_index_hint(folder, generation)}"
        )


def _read_documents(conn: sqlite3.Connection) -> list[DocumentInfo]:
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
