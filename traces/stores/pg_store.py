"""Traces in the shared store: every replica's runs in PostgreSQL, hash-chained as in the files.

    trace_runs     one row per run: created_at, question, status, outcome, final hash, events, bytes,
                   and ``body``, the run's records (header, events, footer) zlib-compressed
    trace_records  (rows written before schema migration 7) one row per record of a run

A run's records are the bytes the file store's writers write (``traces.records.batch``,
``traces.records.writer``),
so the chain, ``verify``, ``show`` and ``export`` are the file store's, record for record; rows of
either form read alike (``traces.stores.pg_rows``). They are kept in memory while the
run goes on and written in one transaction when it finishes (or is closed unfinished, then as an
incomplete trace); the outcome returns only after that commit. A process killed mid-run loses the
trace of the runs it had in flight, never a finished one. The final hash and event count sit in
``trace_runs`` beside the records, as the day manifest does for files, and the tables are
append-only (a trigger refuses updates and deletes; only ``prune`` may delete whole days).

Commits are grouped: one committer thread per store takes every run that finished while the
previous commit was in flight and writes them all in one transaction, one WAL flush for many runs
(what databases call group commit); each run's caller waits for the commit that holds its run.
The tables come from ``evloop migrate`` (tools/store/pg_schema.py).
"""

from __future__ import annotations

import builtins
import io
import queue
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from evidence_loop.tools.errors import (
    DiskError,
    EvidenceLoopError,
    InputError,
    NotFoundError,
    StoreStateError,
    StoreUnavailableError,
    TraceError,
    TraceStoreUnavailableError,
)
from evidence_loop.tools.store.pg import connect, redact, unavailable
from evidence_loop.traces.feedback.feedback import FeedbackLog
from evidence_loop.traces.feedback.feedback_pg import PgFeedback
from evidence_loop.traces.journal.manifest import FinishedRun
from evidence_loop.traces.records.batch import BatchWriter
from evidence_loop.traces.records.blobs import (
    Documents,
    TableDocuments,
    encoded,
    split_documents,
    with_documents,
)
from evidence_loop.traces.records.encode import sealed_header
from evidence_loop.traces.records.reader import parse_trace
from evidence_loop.traces.records.schema import BATCH_SCHEMA, Trace, TraceHeader, TraceSummary, parse_utc
from evidence_loop.traces.records.writer import PROBE_BYTES, TraceWriter
from evidence_loop.traces.stores.pg_rows import (
    INSERT_GROUP,
    NEWEST,
    PROBE,
    PROBE_CHUNK,
    console_row,
    packed,
    read_records,
)
from evidence_loop.traces.stores.retention import PruneReport
from evidence_loop.traces.stores.store import RunWriter, TraceStore, _check_run_id, _short_question
from evidence_loop.traces.verification.citations import TextSource, with_citations
from evidence_loop.traces.verification.day_verify import against
from evidence_loop.traces.verification.pg_chain import PgChain, verify_pg_chain
from evidence_loop.traces.verification.verify import HEADER_SEQ, VerifyResult

if TYPE_CHECKING:
    import psycopg

# Most runs one commit takes: a larger group waits for the next.
GROUP_MAX = 256
_SUMMARY = "run_id, created_at, status, outcome_status, question, final_hash, events, bytes"


@dataclass
class _Run:
    """One run's records on their way to the database, and the signal that they are there."""

    header: TraceHeader
    body: str  # the run's records, one line each, without the last newline
    size: int
    packed: bytes  # the records as its row keeps them (``pg_rows.packed``), compressed in the run's thread
    lines: int
    documents: dict[str, Any] = field(default_factory=dict)  # hash -> document the header names
    done: threading.Event = field(default_factory=threading.Event)
    error: BaseException | None = None

    def row(self) -> tuple[Any, ...]:
        last = orjson.loads(self.body[self.body.rfind("\n") + 1 :]) if self.lines > 1 else {}
        footer = last if last.get("type") == "footer" else None
        events = self.lines - 1 - (footer is not None)
        return (
            self.header.run_id,
            self.header.created_at,
            _short_question(self.header.question),
            "complete" if footer else "incomplete",
            footer["outcome_status"] if footer else None,
            footer["hash"] if footer else None,
            events,
            self.size,
        )


class _Pending(io.BytesIO):
    """What the writer takes for a file: its lines reach the database when the run finishes (the
    writer's fsync) or is closed unfinished."""

    def __init__(self, store: PgTraceStore, header: TraceHeader, documents: dict[str, Any]) -> None:
        super().__init__()
        self._store = store
        self._header = header
        self._documents = documents
        self._sent = False

    def fileno(self) -> int:
        return -1

    def send(self) -> None:
        """Write the committed lines (a torn last one is left out) and wait for the commit."""
        if self._sent:
            return
        self._sent = True
        data = self.getvalue()
        size = data.rfind(b"\n") + 1
        if size:  # the records split at their newlines only (a text may hold U+2028, say)
            body, lines = data[: size - 1].decode("utf-8"), data.count(b"\n", 0, size)
            self._store._commit(_Run(self._header, body, size, packed(data[:size]), lines, self._documents))

    def close(self) -> None:
        if not self.closed:
            try:
                self.send()
            finally:
                super().close()


class PgTraceStore(TraceStore):
    """A :class:`traces.stores.store.TraceStore` whose traces live in PostgreSQL (same reads and verdicts)."""

    def __init__(self, url: str) -> None:
        super().__init__(_nowhere())
        self.url = url
        self._queue: queue.Queue[_Run] = queue.Queue()
        self._committer: threading.Thread | None = None
        self._reader: psycopg.Connection[Any] | None = None
        self._lock = threading.Lock()
        self._start_lock = threading.Lock()
        self._stored_documents: set[str] = set()  # hashes committed (the committer's own)
        self._chain = PgChain()  # this writer's place in the run chain (the committer's own)
        self.documents: Documents = TableDocuments(self._query)

    def begin(self, header: TraceHeader) -> RunWriter:
        """A writer for ``header.run_id``; a run id already stored is refused when the run is written.
        A schema 4 header is written whole when the run ends (``traces.records.batch``), a schema 3 one (an
        import's) event by event."""
        _check_run_id(header.run_id)
        header, documents = split_documents(header)
        sealed, line = sealed_header(header)  # dumped once for its hash and its line
        pending = _Pending(self, sealed, documents)
        if sealed.schema_version >= BATCH_SCHEMA:
            return BatchWriter(pending, _nowhere(), sealed, line, sync=pending.send)
        return TraceWriter(
            pending, _nowhere(), sealed, sealed=True, line=line, fsync=lambda _fd: pending.send()
        )

    @property
    def feedback(self) -> FeedbackLog:
        """Reviewers' verdicts on this store's runs: the ``feedback_records`` table."""
        return PgFeedback(self.url)

    def read(self, run: str | Path) -> Trace:
        """A stored run by its id (a ``Path`` is a trace file, read as the file store reads one)."""
        if isinstance(run, Path):
            return super().read(run)
        run_id = _check_run_id(run)
        return with_documents(parse_trace(read_records(self._query, run_id)), self.documents)

    def check(self, trace: Trace) -> VerifyResult:
        """Verify the chain, that it ends where ``trace_runs`` says the run finished, and that its row
        is of the moment the run began (a run copied to another day is not)."""
        sql = "SELECT final_hash, events, created_at FROM trace_runs WHERE run_id = %s"
        final, events, created = (self._query(sql, (trace.header.run_id,)) or [(None, 0, None)])[0]
        ended = FinishedRun(trace.header.run_id, final, events) if final is not None else None
        return against(trace, ended, created.astimezone(UTC).date().isoformat() if created else None)

    def verify_all(self, texts: TextSource | None = None) -> Iterator[tuple[str, VerifyResult]]:
        for summary in self.list():
            try:
                trace = self.read(summary.run_id)
            except NotFoundError:
                reason = f"missing: the run finished with hash {summary.final_hash}; its records are gone"
                yield summary.run_id, VerifyResult(False, False, HEADER_SEQ, reason)
                continue
            except TraceError as exc:
                yield summary.run_id, VerifyResult(False, False, HEADER_SEQ, str(exc))
                continue
            yield summary.run_id, with_citations(self.check(trace), trace, texts)

    def verify_chain(self) -> Iterator[tuple[str, VerifyResult]]:
        """The run chain's breaks (a run whose rows were deleted), then its summary
        (``traces.verification.pg_chain``)."""
        return verify_pg_chain(self._query)

    def list(self, since: datetime | None = None, status: str | None = None) -> builtins.list[TraceSummary]:
        if since is not None and since.tzinfo is None:
            raise InputError("since must be a timezone-aware datetime")
        rows = self._query(
            f"SELECT {_SUMMARY} FROM trace_runs WHERE created_at >= %s "
            "AND (%s::text IS NULL OR status = %s OR outcome_status = %s) ORDER BY created_at, run_id",
            (since or datetime(1970, 1, 1, tzinfo=UTC), status, status, status),
        )
        return [_summary(row) for row in rows]

    def newest(
        self,
        offset: int,
        limit: int,
        *,
        first: date | None = None,
        last: date | None = None,
        unfinished: bool = False,
    ) -> builtins.list[tuple[str, str, str, str | None, str | None]]:
        """(run id, status or outcome status, header line, decided line, resolved line) of runs newest
        first, from ``offset``, of the UTC days ``first`` to ``last`` (None: no bound): one query over
        ``trace_runs`` and the records a console's row reads (``traces.reading.run_rows``), a compressed run's
        read from its body."""
        since = datetime.combine(first, time(), tzinfo=UTC) if first is not None else None
        until = datetime.combine(last + timedelta(days=1), time(), tzinfo=UTC) if last is not None else None
        rows = self._query(NEWEST, (since, since, until, until, unfinished, offset, limit))
        return [console_row(*row) for row in rows]

    def prune(self, before: date, *, dry_run: bool = False) -> PruneReport:
        """Delete the runs of the UTC days before ``before`` (today's never), as
        ``traces.stores.retention``."""
        today = datetime.now(UTC).date()
        if before > today:
            raise InputError(f"--before {before.isoformat()} is after today ({today.isoformat()}, UTC)")
        cut = datetime.combine(before, time(), tzinfo=UTC)
        with unavailable(self.url), connect(self.url) as conn, conn.transaction():
            days = "count(DISTINCT (created_at AT TIME ZONE 'UTC')::date)"
            old = f"SELECT count(*), coalesce(sum(bytes), 0), {days} FROM trace_runs WHERE created_at < %s"
            runs, size, day_count = conn.execute(old, (cut,)).fetchone() or (0, 0, 0)
            kept = conn.execute(f"SELECT {days} FROM trace_runs WHERE created_at >= %s", (cut,)).fetchone()
            if not dry_run:
                conn.execute("SET LOCAL evloop.prune = 'on'")
                doomed = "SELECT run_id FROM trace_runs WHERE created_at < %s"
                conn.execute(f"DELETE FROM trace_records WHERE run_id IN ({doomed})", (cut,))
                conn.execute("DELETE FROM trace_runs WHERE created_at < %s", (cut,))
                conn.execute("DELETE FROM trace_anchors WHERE day < %s", (before,))
        return PruneReport(int(day_count), int(runs), int(size), int(kept[0] if kept else 0), dry_run)

    def close(self) -> None:
        """Stop the committer (runs already handed to it are written first)."""
        with self._start_lock:
            committer, self._committer = self._committer, None
        with self._lock:
            if self._reader is not None:
                self._reader.close()
                self._reader = None
        if committer is not None:
            self._queue.put(_STOP)
            committer.join()

    def _commit(self, run: _Run) -> None:
        """Hand the run to the committer and wait until its transaction committed (or failed)."""
        with self._start_lock:
            if self._committer is None:
                self._committer = threading.Thread(target=self._commit_loop, name="evloop-trace-commit")
                self._committer.daemon = True
                self._committer.start()
        self._queue.put(run)
        run.done.wait()
        # A database that refuses the run's records (out of space, a failed statement) is this run's
        # trace store failing; one that cannot be reached at all stays StoreUnavailableError, the
        # whole store's state (/readyz says "store": "unreachable").
        refused = isinstance(run.error, StoreStateError | DiskError)
        if refused and not isinstance(run.error, StoreUnavailableError):
            raise TraceStoreUnavailableError(f"the store {redact(self.url)}", str(run.error)) from run.error
        if run.error is not None:
            raise run.error

    def probe(self, *, failed: bool = False) -> TraceStoreUnavailableError | None:
        """None when runs can be recorded. After a failed one, a run of about a header's size is
        written and rolled back: the tables must take it (a database out of space refuses it)."""
        if not failed:
            return None
        from psycopg import Rollback

        try:
            with unavailable(self.url), connect(self.url) as conn, conn.transaction():
                conn.execute(
                    PROBE, {"id": f".probe-{uuid.uuid4().hex}", "chunks": PROBE_BYTES // PROBE_CHUNK}
                )
                raise Rollback()
        except EvidenceLoopError as exc:
            return TraceStoreUnavailableError(f"the store {redact(self.url)}", str(exc))
        return None

    def _commit_loop(self) -> None:
        conn: psycopg.Connection[Any] | None = None
        while True:
            group = [self._queue.get()]
            while len(group) < GROUP_MAX:
                try:
                    group.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            stop = any(run is _STOP for run in group)
            runs = [run for run in group if run is not _STOP]
            try:
                if runs:
                    conn = self._write_group(conn, runs)
            finally:
                for run in runs:
                    run.done.set()
            conn = self._chain.anchor(conn, self.url, closing=stop)
            if stop:
                if conn is not None:
                    conn.close()
                return

    def _write_group(self, conn: psycopg.Connection[Any] | None, runs: builtins.list[_Run]) -> Any:
        """One transaction for the group; every run of a failed group gets the error.

        A run whose id another run of the group, or one already stored, has taken gets an
        InputError of its own; the others commit (its id must not sink the whole group)."""
        first = _first_of_each_id(runs)
        known = self._stored_documents
        documents = {h: d for run in first for h, d in run.documents.items() if h not in known}
        try:
            with unavailable(self.url):
                if conn is None or conn.closed or conn.broken:
                    conn = connect(self.url)
                bodies = [encoded(document)[1].decode("utf-8") for document in documents.values()]
                runs_columns = [list(column) for column in zip(*(run.row() for run in first), strict=True)]
                ids = [run.header.run_id for run in first]
                days = [parse_utc(run.header.created_at).date() for run in first]
                writer = self._chain.writer
                packed_runs = [run.packed for run in first]
                params = [
                    list(documents),
                    bodies,
                    *runs_columns,
                    days,
                    self._chain.bases(days),
                    packed_runs,
                    writer,
                ]
                stored = dict(conn.execute(INSERT_GROUP, params).fetchall())
                new = [run for run in first if run.header.run_id in stored]
                self._chain.stored(
                    (i, day, stored[i]) for i, day in zip(ids, days, strict=True) if i in stored
                )
                self._stored_documents.update(documents)
        except Exception as exc:  # handed to each waiting run, raised in its own thread
            for run in runs:
                run.error = exc
            return None if conn is None or conn.broken else conn
        kept = {id(run) for run in new}
        for run in runs:
            if id(run) not in kept:
                run.error = InputError(
                    f"run {run.header.run_id} already has a trace; this one was not stored"
                )
        return conn

    def _query(self, sql: str, params: tuple[Any, ...]) -> builtins.list[tuple[Any, ...]]:
        """One statement on the store's read connection (opened again after a loss)."""
        with self._lock, unavailable(self.url):
            if self._reader is None or self._reader.closed or self._reader.broken:
                self._reader = connect(self.url)
            return self._reader.execute(sql, params).fetchall()


_STOP = _Run(TraceHeader.model_construct(run_id=""), "", 0, b"", 0)


def _nowhere() -> Path:
    """The folder the file store would use: none, nothing is written there."""
    return Path("/nonexistent/evloop-traces-in-postgresql")


def _summary(row: tuple[Any, ...]) -> TraceSummary:
    run_id, created, status, outcome, question, final, events, size = row
    return TraceSummary(
        run_id=run_id,
        created_at=created.astimezone(UTC).isoformat().replace("+00:00", "Z"),
        status=status,
        outcome_status=outcome,
        question=question,
        path=f"postgresql:{run_id}",
        final_hash=final,
        events=events,
        bytes=size,
    )


def _first_of_each_id(runs: builtins.list[_Run]) -> builtins.list[_Run]:
    """The group without the later runs of an id it holds twice (the first to finish keeps it)."""
    seen: set[str] = set()
    first = []
    for run in runs:
        if run.header.run_id not in seen:
            seen.add(run.header.run_id)
            first.append(run)
    return first
