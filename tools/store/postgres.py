"""The shared store: the same knowledge base as tools/store/folder.py, kept in PostgreSQL for many replicas.

    PgStore.open(url)      a store over a migrated database (``evloop migrate``), else StoreStateError
    store.watch()          follow generations committed elsewhere: LISTEN/NOTIFY, polling as fallback
    store.reachable        False while the watcher cannot reach the server

The rules are the embedded store's (tools/store/ingest.py and tools/store/views.py run unchanged through
tools/store/pg.py); what differs is where things live and who may write:

- **Writes** (an ingest batch, a delete, a calibration) each run in one transaction on a connection
  of their own, under one advisory lock, so writes from any replica serialise and never interleave;
  a caller's ``WriteGuard`` (tools/store/ingest.py) reads the ACLs it checks inside that transaction.
  The generation counter moves in the same transaction, which also announces it (``pg_notify``,
  delivered at commit): a kill at any point leaves the previous generation whole.
- **Indexes** are not files: each replica builds the bm25s indexes (and assembles the vectors) of
  the current generation in memory from the stored tokens and rows, and swaps its snapshot in one
  assignment when the new one is built, so a question always reads one generation.
- **Reads a question needs** are in memory: a snapshot holds every live version's parsed form, so
  a replica that loses the server goes on answering from the generation it holds. Older versions
  (for replay) are read from the server when asked for.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from evidence_loop.tools.errors import EvidenceLoopError
from evidence_loop.tools.models.embedding import Embedder
from evidence_loop.tools.search.snapshot import CorpusView, Snapshot, VersionInfo, VersionSource
from evidence_loop.tools.store.calibration import CorpusScale, ScaleMeter, write_scale
from evidence_loop.tools.store.folder import KEEP, Checkpoint, EmbedProgress, Store, Written
from evidence_loop.tools.store.pg import CONNECT_TIMEOUT_S, PgConnection, connect, redact, unavailable
from evidence_loop.tools.store.pg_schema import CHANNEL, WRITE_LOCK, check_schema
from evidence_loop.tools.store.schema import read_generation, write_generation
from evidence_loop.tools.store.sql import Db
from evidence_loop.tools.store.views import _LIVE, read_parsed, read_version_info
from evidence_loop.tools.types import ParsedDocument, Section, Unit

if TYPE_CHECKING:
    import psycopg

T = TypeVar("T")
# How often a watcher reads the generation when no notification came (a lost NOTIFY, a proxy that
# drops them), and how long it waits before trying a lost server again.
POLL_S = 2.0
RETRY_S = 1.0
# How often the watcher looks up from waiting, to notice that it should stop.
WAKE_S = 0.5


class PgSource:
    """A :class:`tools.store.sql.Source` over one shared read connection, opened again after a loss.

    Each read is one REPEATABLE READ, read-only transaction: every statement in it sees the same
    committed state.
    """

    def __init__(self, url: str) -> None:
        self._url = url
        self._conn: psycopg.Connection[Any] | None = None
        self._lock = threading.Lock()

    def read(self, fn: Callable[[Db], T], /) -> T:
        with self._lock, unavailable(self._url):
            conn = self._connection()
            try:
                with conn.transaction():
                    return fn(PgConnection(conn))
            except BaseException:
                if conn.broken:
                    self._conn = None
                raise

    def version_info(self, doc_id: str, version: str) -> VersionInfo:
        return self.read(lambda conn: read_version_info(conn, doc_id, version))

    def parsed(self, doc_id: str, version: str) -> ParsedDocument:
        return self.read(lambda conn: read_parsed(conn, doc_id, version))

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def _connection(self) -> psycopg.Connection[Any]:
        from psycopg import IsolationLevel

        if self._conn is None or self._conn.closed:
            conn = connect(self._url)
            conn.isolation_level = IsolationLevel.REPEATABLE_READ
            conn.read_only = True
            self._conn = conn
        return self._conn


class Resident:
    """A :class:`tools.search.snapshot.VersionSource` holding one generation's live versions in memory;
    other (older) versions are read from the store when asked for."""

    def __init__(self, parsed: dict[tuple[str, str], ParsedDocument], store: VersionSource) -> None:
        self._parsed = parsed
        self._store = store

    def version_info(self, doc_id: str, version: str) -> VersionInfo:
        return self._store.version_info(doc_id, version)

    def parsed(self, doc_id: str, version: str) -> ParsedDocument:
        held = self._parsed.get((doc_id, version))
        return held if held is not None else self._store.parsed(doc_id, version)


_LIVE_VERSIONS = f"""WITH {_LIVE}
SELECT v.doc_id, v.format, v.text FROM live JOIN versions v USING (doc_id, version) ORDER BY v.doc_id"""
_LIVE_SECTIONS = f"""WITH {_LIVE}
SELECT s.doc_id, s.section_id, s.parent_id, s.level, s.title, s.start, s."end", s.path
FROM live JOIN sections s USING (doc_id, version) ORDER BY s.doc_id, s.section_id"""


def live_parsed(conn: Db, view: CorpusView) -> dict[tuple[str, str], ParsedDocument]:
    """The parsed form of every version live in ``view``, in two statements (its units are the view's):
    what :func:`tools.store.views.read_parsed` gives one version at a time."""
    g = {"g": view.generation}
    sections: dict[str, list[Section]] = {d.doc_id: [] for d in view.docs}
    for doc_id, sid, parent, level, title, start, end, path in conn.execute(_LIVE_SECTIONS, g):
        sections[doc_id].append(Section(sid, parent, level, title, start, end, tuple(json.loads(path))))
    units: dict[str, list[Unit]] = {d.doc_id: [] for d in view.docs}
    for unit in view.units:
        units[unit.doc_id].append(unit)
    infos = {d.doc_id: d for d in view.docs}
    out: dict[tuple[str, str], ParsedDocument] = {}
    for doc_id, fmt, text in conn.execute(_LIVE_VERSIONS, g):
        info = infos[doc_id]
        parts = tuple(sections[doc_id]), tuple(units[doc_id])
        out[doc_id, info.version] = ParsedDocument(doc_id, info.version, info.title, fmt, text, *parts)
    return out


class PgStore(Store):
    """A knowledge base in PostgreSQL; the same operations as :class:`tools.store.folder.Store`."""

    def __init__(
        self,
        url: str,
        source: PgSource,
        embedder: Embedder | None = None,
        checkpoint: Checkpoint | None = None,
        meter: ScaleMeter | None = None,
    ) -> None:
        super().__init__(Path(redact(url)), None, source, 0, embedder, checkpoint, meter)
        self._url = url
        self._shown = redact(url)
        self._watcher: _Watcher | None = None

    @classmethod
    def open(  # type: ignore[override]
        cls,
        url: str,
        *,
        embedder: Embedder | None = None,
        reembed: bool = False,
        embed_progress: EmbedProgress | None = None,
        checkpoint: Checkpoint | None = None,
        meter: ScaleMeter | None = None,
    ) -> PgStore:
        """Open the store at ``url``; StoreStateError (with the command) unless it is migrated.

        ``embedder``, ``reembed``, ``checkpoint`` and ``meter`` as for :meth:`tools.store.folder.Store.open`.
        """
        source = PgSource(url)
        store = cls(url, source, embedder, checkpoint, meter)
        try:
            source.read(lambda conn: check_schema(conn, url))
            store._generation = source.read(read_generation)
            if reembed:
                store._reembed(embed_progress)
            store._check_embedder()
        except BaseException:
            store.close()
            raise
        return store

    @property
    def reachable(self) -> bool:
        """False while the watcher cannot reach the server (questions still use the held snapshot)."""
        return self._watcher is None or self._watcher.connected

    def watch(self, poll_s: float = POLL_S) -> None:
        """Follow new generations in the background (idempotent); ``refresh`` then costs nothing."""
        if self._watcher is None:
            self._watcher = _Watcher(self, poll_s)
            self._watcher.start()

    def refresh(self) -> bool:
        """Load a newer generation now, unless a watcher is doing so already."""
        return False if self._watcher is not None else self.catch_up()

    def catch_up(self) -> bool:
        """Build the latest generation's snapshot (questions go on meanwhile), then swap it in."""
        latest = self._source.read(read_generation)
        if latest <= self._generation:
            return False
        snapshot = self._source.read(lambda conn: self._built(conn, latest))
        self._adopt(latest, snapshot)
        return True

    def save_scale(self, scale: CorpusScale) -> None:
        with self._write_lock, self._transaction() as conn:
            write_scale(conn, scale)

    def close(self) -> None:
        if self._watcher is not None:
            self._watcher.stop()
        self._source.close()

    def _write(self, write: Callable[[Db, int], Written], *, measure: bool = True) -> int:
        """One transaction under the write lock; a change commits a new generation (and its scale, when
        due and ``measure``) and announces it; ``KEEP`` commits without one."""
        from psycopg import Rollback

        with self._write_lock:
            snapshot = None
            with self._transaction() as conn:
                generation = read_generation(conn) + 1
                written = write(conn, generation)
                if written == KEEP:
                    return generation - 1  # rows beside the corpus: committed, no new generation
                if not written:
                    raise Rollback()  # nothing changed: no new generation
                snapshot = self._built(conn, generation)
                if measure:
                    self._keep_scale(conn, snapshot)
                write_generation(conn, generation)
                conn.execute("SELECT pg_notify(?, ?)", (CHANNEL, str(generation)))
                self._checkpoint("index")
            if snapshot is None:
                return generation - 1
            self._checkpoint("commit")
            self._adopt(generation, snapshot)
            return generation

    @contextmanager
    def _transaction(self) -> Iterator[Db]:
        """A write transaction on a connection of its own, holding the store's advisory lock."""
        with unavailable(self._url):
            conn = connect(self._url)
            try:
                # Pipeline mode: statements whose results are not read are sent without waiting.
                with conn.transaction(), conn.pipeline():
                    conn.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
                    yield PgConnection(conn)
            finally:
                conn.close()

    def _uncommitted(self, conn: Db, snapshot: Snapshot) -> Snapshot:
        """A snapshot of this store holds its versions already (``Resident``)."""
        return snapshot

    def _snapshot_source(self, conn: Db, view: CorpusView) -> VersionSource:
        """Every live version's parsed form, read now: the snapshot needs the server for no question."""
        return Resident(live_parsed(conn, view), self._source)

    def _load_current(self) -> Snapshot:
        generation = self._generation
        return self._source.read(lambda conn: self._built(conn, generation))

    def _adopt(self, generation: int, snapshot: Snapshot) -> None:
        with self._lock:
            if generation > self._generation or self._current is None:
                self._generation = generation
                self._current = snapshot


class _Watcher(threading.Thread):
    """LISTENs for committed generations and catches up; polls when no notification comes."""

    def __init__(self, store: PgStore, poll_s: float) -> None:
        super().__init__(name="evloop-generation-watcher", daemon=True)
        self._store = store
        self._poll_s = poll_s
        self._stopping = threading.Event()
        self.connected = True

    def stop(self) -> None:
        """Stop and wait for the thread (it looks up at least every WAKE_S)."""
        self._stopping.set()
        if self.is_alive() and threading.current_thread() is not self:
            self.join(WAKE_S + CONNECT_TIMEOUT_S)

    def run(self) -> None:
        while not self._stopping.is_set():
            try:
                self._listen()
            except (EvidenceLoopError, OSError):
                self.connected = False
                self._stopping.wait(RETRY_S)

    def _listen(self) -> None:
        url = self._store._url
        with connect(url) as conn, unavailable(url):
            conn.execute(f"LISTEN {CHANNEL}")
            self._store.catch_up()
            self.connected = True
            polled = time.monotonic()
            while not self._stopping.is_set():
                notified = any(True for _ in conn.notifies(timeout=WAKE_S, stop_after=1))
                if notified or time.monotonic() - polled >= self._poll_s:
                    self._store.catch_up()
                    polled = time.monotonic()
