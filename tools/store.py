"""The embedded store: one folder with a SQLite database and one bm25s index folder per generation.

    FOLDER/store.sqlite3           documents, versions, sections, units, ACL (see tools/schema.py)
    FOLDER/bm25/gen-000042/           the recall index over the units live at generation 42
    FOLDER/bm25/gen-000042/passages/  the index over their passages (tools/passages.py)
    FOLDER/bm25/gen-000042/manifest.json  size and sha256 of every file above (tools/manifest.py)

Every change (an ingest batch, a delete) is one write transaction that ends by recording a new
generation. The index folder of that generation (both indexes, then its manifest) is written *before*
the commit, so a committed generation always has its index; a kill at any point leaves the previous
generation intact and queryable. Folders of older generations are removed after the commit, strays
of killed writers when the store is next opened.

Damage is caught where it costs little: opening compares the sizes of the current generation's
files with its manifest, loading its index (the first snapshot) their sha256 before reading them;
a damaged database is an IndexStateError wherever a read meets it. `evloop check`
(tools/integrity.py) looks at everything.

Readers work on :class:`~tools.snapshot.Snapshot` values: a snapshot never changes, so a question
answered while an ingest runs sees one consistent corpus from start to end.
"""

from __future__ import annotations

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
from tools.index import RecallIndex
from tools.ingest import Tally, apply_document, retire_document
from tools.manifest import verify_manifest, write_manifest
from tools.passages import passage_tokens
from tools.schema import (
    DB_NAME,
    check_schema,
    connect,
    create_schema,
    database_errors,
    read_generation,
    write_generation,
)
from tools.snapshot import CorpusView, Snapshot, fingerprint
from tools.types import DocumentInput
from tools.views import DbSource, DocumentInfo, load_view, read_documents

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


def _crash_point(stage: str) -> None:
    if os.environ.get(CRASH_ENV) == stage:
        os.kill(os.getpid(), signal.SIGKILL)


def gen_dir(folder: Path, generation: int) -> Path:
    """The index folder of ``generation`` in the store ``folder``."""
    return folder / BM25_DIR / f"gen-{generation:06d}"


def _missing_index_hint(folder: Path, generation: int) -> str:
    return (
        f"the bm25 index of generation {generation} is missing or damaged in {gen_dir(folder, generation)}; "
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
            with database_errors(folder):
                if create and _is_blank(writer):
                    empty = RecallIndex.build([])
                    meta = {"generation": 0, "fingerprint": fingerprint(())}
                    _save_indexes(_fresh_dir(gen_dir(folder, 0)), empty, empty, meta)
                    create_schema(writer)
                check_schema(writer, folder)
            source = DbSource(connect(db_path), folder)
        except BaseException:
            writer.close()
            raise
        store = cls(folder, writer, source, 0)
        try:
            store._generation = source.read(read_generation)
            with database_errors(folder):
                store._clean_strays()
                if rebuild_index:
                    store._rebuild_index()
            _verify_files(folder, store._generation, hashes=False)
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
        return self._source.read(read_documents)

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
        with self._write_lock, database_errors(self._folder):
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
                        shutil.rmtree(gen_dir(self._folder, generation), ignore_errors=True)
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
        _save_indexes(_fresh_dir(gen_dir(self._folder, generation)), units, passages, meta)
        return snapshot

    def _load_current(self) -> Snapshot:
        """The snapshot at this store's generation, from the saved index files."""
        generation = self._generation
        view, tokens = self._source.read(lambda conn: load_view(conn, generation))
        folder = gen_dir(self._folder, generation)
        try:
            _verify_files(self._folder, generation, hashes=True)
        except IndexStateError:
            if generation < self._source.read(read_generation):
                # Another process moved on and removed this folder: the stored tokens rebuild it exactly.
                return Snapshot(view, *_build_indexes(view, tokens), self._source)
            raise
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
    """``folder`` after removing whatever a killed writer (or damage) left there and on the way to it."""
    for path in (folder.parent, folder):
        if (path.is_symlink() and not path.exists()) or (path.exists() and not path.is_dir()):
            path.unlink()  # a file, or a dangling link, where a folder belongs
    if folder.exists():
        shutil.rmtree(folder)
    return folder


def _build_indexes(view: CorpusView, tokens: list[list[str]]) -> tuple[RecallIndex, RecallIndex]:
    """The unit index and the passage index, both from the stored unit tokens."""
    return RecallIndex.build(tokens), RecallIndex.build(passage_tokens(view.unit_passage, tokens))


def _save_indexes(folder: Path, units: RecallIndex, passages: RecallIndex, meta: dict[str, object]) -> None:
    """Write every file of one generation into its (new) folder, its manifest last."""
    units.save(folder, meta)
    passages.save(folder / PASSAGES_DIR, meta)
    write_manifest(folder)


def _verify_files(folder: Path, generation: int, *, hashes: bool) -> None:
    """IndexStateError unless every file of the generation's folder matches its manifest."""
    if not gen_dir(folder, generation).is_dir():
        raise IndexStateError(_missing_index_hint(folder, generation))
    damage = verify_manifest(gen_dir(folder, generation), hashes=hashes)
    if damage:
        first = damage[0]
        more = f" (and {len(damage) - 1} more)" if len(damage) > 1 else ""
        raise IndexStateError(
            f"{first.path} in the index folder of generation {generation}: {first.problem}{more}; "
            f"{_missing_index_hint(folder, generation)}"
        )


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
