"""The embedded store: one folder with a SQLite database and one index folder per generation.

    FOLDER/store.sqlite3       documents, versions, sections, units, ACL, unit vectors (store/schema.py)
    FOLDER/bm25/gen-000042/    the indexes of generation 42: bm25s, vectors, manifest (store/generation.py)

With an embedder, every new document version is embedded inside the ingest's transaction
(tools/store/vectors.py); the store records which embedder made its vectors and refuses to be searched
with another one's queries (``reindex --embeddings`` re-embeds).

Every change (an ingest batch, a delete) is one write transaction (``BEGIN IMMEDIATE``: one writer
at a time, whichever process; a caller's ``WriteGuard`` checks each document inside it) that ends
by recording a new generation. A store given a ``ScaleMeter`` (tools.store.calibration) measures the
corpus's scale for the judge, when due, inside that same transaction: a generation and its scale are
committed together. The index folder of that generation (both indexes, then its manifest) is
written *before* the commit, so a committed generation always has its index; a kill at any point
leaves the previous generation intact and queryable. Folders of older generations are removed
after the commit, strays of killed writers when the store is next opened.

Damage is caught where it costs little: opening compares the sizes of the current generation's
files with its manifest, loading its index (the first snapshot) their sha256 before reading them;
a damaged database is an IndexStateError wherever a read meets it. `evloop check`
(tools/store/integrity.py) looks at everything.

Readers work on :class:`~tools.search.snapshot.Snapshot` values: a snapshot never changes, so a question
answered while an ingest runs sees one consistent corpus from start to end.
"""

from __future__ import annotations

import shutil
import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Literal

from evidence_loop.tools.disk import disk_error
from evidence_loop.tools.errors import DiskError, EmbedderError, IndexStateError, NotFoundError
from evidence_loop.tools.models.embedding import Embedder
from evidence_loop.tools.parse import parse_document
from evidence_loop.tools.search.snapshot import CorpusView, Snapshot, VersionSource
from evidence_loop.tools.store import embedder_check as store_embedder
from evidence_loop.tools.store import generation as gen
from evidence_loop.tools.store import vectors
from evidence_loop.tools.store.calibration import CorpusScale, ScaleMeter, read_scale, write_scale
from evidence_loop.tools.store.folder_open import connections
from evidence_loop.tools.store.generation import BM25_DIR, PASSAGES_DIR, gen_dir
from evidence_loop.tools.store.guard import WriteGuard
from evidence_loop.tools.store.ingest import Parse, retire_document
from evidence_loop.tools.store.schema import (
    DB_NAME,
    database_errors,
    no_index,
    read_generation,
    write_generation,
)
from evidence_loop.tools.store.sql import Db, Source
from evidence_loop.tools.store.sync import Batch, write_batch
from evidence_loop.tools.store.tally import IngestReport, Tally
from evidence_loop.tools.store.views import DocumentInfo, WriterSource, load_view, read_documents
from evidence_loop.tools.types import DocumentInput

__all__ = ["BM25_DIR", "PASSAGES_DIR", "DocumentInfo", "IngestReport", "Snapshot", "Store", "gen_dir"]

EmbedProgress = Callable[[int, int], None]
Checkpoint = Callable[[str], None]
"""Told each stage a write reaches: "rows" (an ingest's first document written), "index" (the new
generation's files saved, not committed), "commit". The crash tests pass one that kills the process."""
_PAST_SNAPSHOTS = 4
KEEP: Literal["keep"] = "keep"
Written = bool | Literal["keep"]
"""What a write's callback did: True changed the corpus (a new generation), False nothing (rolled
back), ``KEEP`` only rows beside the corpus, such as where documents came from (committed, no new
generation)."""


def _no_checkpoint(stage: str) -> None:
    return None


class Store:
    """A knowledge base on disk: ingest and delete documents, take snapshots to search them."""

    def __init__(
        self,
        folder: Path,
        writer: sqlite3.Connection | None,
        source: Source,
        generation: int,
        embedder: Embedder | None = None,
        checkpoint: Checkpoint | None = None,
        meter: ScaleMeter | None = None,
    ) -> None:
        self._folder = folder
        self._shown: Path | str = folder  # how messages name the store
        self._embedder = embedder
        self._meter = meter
        self._checkpoint = checkpoint or _no_checkpoint
        self._writer = writer
        self._source = source
        self._generation = generation
        self._current: Snapshot | None = None
        self._past: OrderedDict[int, Snapshot] = OrderedDict()
        self._lock = threading.RLock()
        self._write_lock = threading.Lock()
        self._read_only: DiskError | None = None  # why the store could be opened for reading only

    @property
    def _sqlite(self) -> sqlite3.Connection:
        """The write connection of a store in a folder (a subclass over another database has none)."""
        if self._read_only is not None:
            doing = "writing (the disk took no writes when the store was opened: it was opened to read)"
            raise DiskError(str(self._folder), full=self._read_only.full, doing=doing)
        if self._writer is None:
            raise RuntimeError(f"{type(self).__name__} writes through its own connections")
        return self._writer

    @classmethod
    def open(
        cls,
        path: str | Path,
        *,
        create: bool = False,
        rebuild_index: bool = False,
        embedder: Embedder | None = None,
        reembed: bool = False,
        embed_progress: EmbedProgress | None = None,
        checkpoint: Checkpoint | None = None,
        meter: ScaleMeter | None = None,
    ) -> Store:
        """Open the store in ``path`` (``create``: make an empty one if there is none).

        ``rebuild_index`` rewrites the current generation's index files from the stored tokens.
        ``embedder`` makes recall hybrid: the store's vectors must be that embedder's (EmbedderError
        otherwise, with the hint), unless ``reembed`` embeds every stored version anew with it, in a
        new generation. Without an embedder the store is searched lexically, vectors or not.
        ``checkpoint`` is told each stage of every write (``Checkpoint``). ``meter`` measures the
        corpus's scale in every write that makes it due (:meth:`keep_scale_with`).
        """
        folder = Path(path)
        db_path = folder / DB_NAME
        if not db_path.is_file() and not create:
            raise no_index(folder)
        writer, source, read_only = connections(folder, create, rebuild_index or reembed)
        store = cls(folder, writer, source, 0, embedder, checkpoint, meter)
        store._read_only = read_only
        try:
            store._generation = source.read(read_generation)
            if read_only is None:
                with database_errors(folder):
                    store._clean_strays()
                    if reembed:
                        store._reembed(embed_progress)
                    elif rebuild_index:
                        store._rebuild_index()
            gen.verify_files(folder, store._generation, hashes=False)
            store._check_embedder()
        except BaseException:
            store.close()
            raise
        return store

    @property
    def reachable(self) -> bool:
        """Whether the store's database can be reached (a folder's always can)."""
        return True

    def watch(self) -> None:
        """Follow generations committed by others in the background: a folder store needs not, as
        :meth:`refresh` reads its counter locally."""

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
        embed_progress: EmbedProgress | None = None,
        guard: WriteGuard | None = None,
        sources: Mapping[str, str] | None = None,
        prune: Collection[str] = (),
        dry_run: bool = False,
        parse: Parse = parse_document,
    ) -> IngestReport:
        """Write a batch of documents in one transaction, embed its new versions, rebuild the index once.

        All or nothing: an error (a version clash, an oversize document, a parse failure, an
        embedder that fails, a ``guard`` that refuses a document) or a kill leaves the store as it
        was. The rules per document are in :mod:`tools.store.ingest` (a document without a version
        label is labelled by :mod:`tools.store.labels`), a sync's in :mod:`tools.store.sync`:
        ``sources`` (doc_id -> source) records where each document came from, and each source in
        ``prune`` retires its live documents the batch does not hold. ``dry_run`` applies the rules
        and rolls them back: the report says what would change, nothing is written or embedded.
        ``progress(n)`` counts documents, ``embed_progress(done, total)`` the units embedded.
        """
        started = time.perf_counter()
        tally = Tally()
        batch = Batch(tuple(docs), replace, max_bytes, guard, dict(sources or {}), tuple(prune), parse)

        def on_document(count: int) -> None:
            if count == 1:
                self._checkpoint("rows")
            if progress is not None:
                progress(count)

        def write(conn: Db, generation: int) -> Written:
            recorded = write_batch(conn, batch, generation, tally, on_document)
            if dry_run:
                return False
            if not tally.wrote:
                return KEEP if recorded else False
            if tally.added + tally.changed:
                tally.embedded = self._embed(conn, embed_progress)
            return True

        generation = self._write(write)
        return IngestReport.of(tally, time.perf_counter() - started, generation, dry_run=dry_run)

    def delete(self, doc_id: str, *, guard: WriteGuard | None = None) -> None:
        """Stop serving a document; its versions stay stored and readable for replay. ``guard`` is
        told the target inside the write's transaction, and may refuse it."""

        def write(conn: Db, generation: int) -> bool:
            if not retire_document(conn, doc_id, generation, guard):
                raise NotFoundError(f"no document {doc_id!r} in the store")
            return True

        self._write(write)

    def scale(self) -> CorpusScale | None:
        """The corpus's own scale for the judge's signals (tools.store.calibration), None if never
        measured."""
        return self._source.read(read_scale)

    def keep_scale_with(self, meter: ScaleMeter | None) -> None:
        """From now on every write (ingest, delete, re-embedding) asks ``meter`` for the new
        generation's scale before it commits, and records it with the generation."""
        self._meter = meter

    def measure_scale(self, meter: ScaleMeter | None = None, *, force: bool = False) -> CorpusScale | None:
        """Measure the current corpus's scale now when it is due (or ``force``), with ``meter`` or the
        store's own, and commit it in a new generation (the same documents), so that every process
        reading the store takes it up as it takes up an ingest. Returns the scale in force."""
        meter = meter or self._meter
        self.refresh()
        current = self.scale()
        if meter is None:
            return current
        scale = meter(self.snapshot(), current, force=force)
        if scale is None:
            return current
        measured = scale

        def write(conn: Db, generation: int) -> bool:
            write_scale(conn, measured)
            return True

        self._write(write, measure=False)
        return scale

    def save_scale(self, scale: CorpusScale) -> None:
        """Record a newly measured scale; it holds for later generations until measured again."""
        with self._write_lock, database_errors(self._folder):
            self._sqlite.execute("BEGIN IMMEDIATE")
            try:
                write_scale(self._sqlite, scale)
            except BaseException:
                self._sqlite.execute("ROLLBACK")
                raise
            self._sqlite.execute("COMMIT")

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
                past = self._source.read(lambda conn: self._built(conn, generation))
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
            if self._writer is not None:
                self._writer.close()
        self._source.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def _write(self, write: Callable[[Db, int], Written], *, measure: bool = True) -> int:
        """Run ``write`` in one write transaction; if it changed the corpus, publish a new generation
        (and its scale, when due and ``measure``); ``KEEP`` commits rows beside the corpus alone."""
        with self._write_lock, database_errors(self._folder):
            conn = self._sqlite
            conn.execute("BEGIN IMMEDIATE")
            generation = -1
            try:
                generation = read_generation(conn) + 1
                written = write(conn, generation)
                if written is not True:
                    conn.execute("COMMIT" if written == KEEP else "ROLLBACK")
                    return generation - 1
                snapshot = self._publish(conn, generation)
                if measure:
                    self._keep_scale(conn, snapshot)
                self._checkpoint("index")
                conn.execute("COMMIT")
            except BaseException as exc:
                # Told before the cleanup frees space: a write without errno fails for want of it.
                disk = disk_error(
                    exc, self._folder, "writing: the change was rolled back, nothing was written"
                )
                if conn.in_transaction:  # SQLite may have rolled back itself (a full disk does)
                    conn.execute("ROLLBACK")
                # Under the write lock this folder can only be our own, uncommitted one.
                if generation > 0:
                    shutil.rmtree(gen_dir(self._folder, generation), ignore_errors=True)
                if disk is not None and disk is not exc:
                    raise disk from exc
                raise
            self._checkpoint("commit")
            with self._lock:
                self._generation = generation
                self._current = snapshot
            gen.remove_folders(self._folder, lambda g: g < generation)
            return generation

    def _publish(self, conn: Db, generation: int) -> Snapshot:
        """Index what is live at ``generation`` (uncommitted rows included), save it, record it."""
        snapshot = self._save_index(conn, generation)
        write_generation(conn, generation)
        return snapshot

    def _keep_scale(self, conn: Db, snapshot: Snapshot) -> None:
        """Record the scale of the generation being written when the meter finds it due."""
        if self._meter is None:
            return
        scale = self._meter(self._uncommitted(conn, snapshot), read_scale(conn))
        if scale is not None:
            write_scale(conn, scale)

    def _uncommitted(self, conn: Db, snapshot: Snapshot) -> Snapshot:
        """``snapshot`` reading versions through the write transaction (its rows are not committed)."""
        return snapshot.reading_from(WriterSource(conn))

    def _built(self, conn: Db, generation: int) -> Snapshot:
        """A snapshot of what ``conn`` sees live at ``generation``, its indexes built in memory.

        Its vectors are those of the embedder the store records, configured here or not: a delete
        made without the embedder keeps the next generation's vectors.
        """
        view, tokens = load_view(conn, generation)
        identity = vectors.recorded_identity(conn)
        matrix = vectors.assemble(conn, view, identity) if identity is not None else None
        if identity is not None and matrix is None:
            raise EmbedderError(
                f"versions live at generation {generation} have no vectors of {identity.key}; "
                f"{gen.reembed_hint(self._shown)}"
            )
        units, passages = gen.build_indexes(view, tokens)
        source = self._snapshot_source(conn, view)
        return Snapshot(view, units, passages, source, gen.dense_index(matrix, identity))

    def _snapshot_source(self, conn: Db, view: CorpusView) -> VersionSource:
        """Where a snapshot of ``view`` reads versions: this store's database, on each call."""
        return self._source

    def _save_index(self, conn: Db, generation: int) -> Snapshot:
        """Build the indexes over what ``conn`` sees live at ``generation`` and write its folder."""
        snapshot = self._built(conn, generation)
        meta = {"generation": generation, "fingerprint": snapshot.fingerprint}
        indexes = (snapshot.unit_index, snapshot.passage_index, snapshot.dense_index)
        gen.save(gen.fresh_dir(gen_dir(self._folder, generation)), indexes, meta)
        return snapshot

    def _embed(self, conn: Db, progress: EmbedProgress | None) -> int:
        """Embed the versions this write added (tools/store_embedder.embed_written); the units embedded."""
        return store_embedder.embed_written(conn, self._embedder, self._shown, progress)

    def _reembed(self, progress: EmbedProgress | None) -> None:
        """Embed every stored version with this store's embedder (none: drop the vectors), in a new
        generation; other embedders' vectors are dropped."""
        embedder = self._embedder
        self._write(lambda conn, generation: store_embedder.reembed(conn, embedder, progress))

    def _check_embedder(self) -> None:
        """EmbedderError when the store's vectors were made by another embedder than the configured one."""
        embedder = self._embedder
        if embedder is not None:
            self._source.read(lambda conn: store_embedder.check(conn, embedder, self._shown))

    def _clean_strays(self) -> None:
        """Remove index folders other than the committed one, unless a writer is at work right now."""
        conn = self._sqlite
        conn.execute("PRAGMA busy_timeout = 0")
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError:
            return  # a writer holds the lock: its folder is not a stray
        finally:
            conn.execute("PRAGMA busy_timeout = 30000")
        try:
            committed = read_generation(conn)
            gen.remove_folders(self._folder, lambda g: g != committed)
        finally:
            conn.execute("ROLLBACK")

    def _load_current(self) -> Snapshot:
        """The snapshot at this store's generation, from the saved index files."""
        generation = self._generation
        view, _ = self._source.read(lambda conn: load_view(conn, generation, tokens=False))
        try:
            gen.verify_files(self._folder, generation, hashes=True)
        except IndexStateError:
            if generation < self._source.read(read_generation):
                # Another process moved on and removed this folder: the stored rows rebuild it exactly.
                return self._source.read(lambda conn: self._built(conn, generation))
            raise
        identity = self._embedder.identity if self._embedder is not None else None
        units, passages, dense = gen.load(self._folder, generation, view, identity)
        return Snapshot(view, units, passages, self._source, dense)

    def _rebuild_index(self) -> None:
        """Rewrite the current generation's index folder from the stored tokens and vectors."""
        with self._write_lock:
            self._sqlite.execute("BEGIN IMMEDIATE")
            try:
                generation = read_generation(self._sqlite)
                snapshot = self._save_index(self._sqlite, generation)
            finally:
                self._sqlite.execute("ROLLBACK")
        with self._lock:
            self._generation = generation
            self._current = snapshot
