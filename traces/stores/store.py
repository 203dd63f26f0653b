"""The trace store: runs by UTC day, in a journal per day and process, and an index of finished runs.

Layout under ``root``::

    index.jsonl                      one TraceSummary line per finished run (a cache, see below)
    2025/03/01/runs-<pid>-<token>.journal
                                     the runs of that UTC day a process wrote, one frame each
                                     (``traces.journal.journal``), synced in commit groups
    2025/03/01/finished.manifest     run id, final hash and event count of each run of the day that
                                     finished, and where its frame is (``traces.journal.manifest``): what a
                                     cut trace is checked against, and the day's index of offsets
    2025/03/01/<run_id>.jsonl        one file per run: the layout before the journal (still read,
                                     verified and pruned), and what ``fsync_each`` writes

A run's records stay in memory until it ends and reach the journal as one frame; the run returns
only once a sync of the journal that began after its frame was written has completed, or, with
``sync_within`` seconds, once its frame is written: the journal's thread syncs it within that time
(``traces.journal.journal_flush``; ``evloop`` opens its stores so, ``trace_sync_ms``). Reading a run
by id is a seek to the offset its manifest line records; a run the manifests do not place (one that
never finished, or a manifest line lost) is found by scanning the day's journals.

With ``fsync_each`` each run has its own file, every line synced as it is written, so that the
records of a run that never finishes survive a crash too. Those runs share one sync of their day
folder (``traces.journal.group_sync``) when they finish.

Day folders keep any one directory small and let ``list(since=...)`` skip whole days. The index makes
listing 10k runs one file read; it is a cache, not the truth: it is appended after the trace is durable
and never fsynced, so ``list`` also scans the day folders and reads any run the index does not know
(interrupted ones, or one finished just before a kill). Run ids come from the caller.
"""

from __future__ import annotations

import builtins
import os
import re
import threading
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Literal

from evidence_loop.tools.errors import (
    InputError,
    NotFoundError,
    TraceStoreUnavailableError,
)
from evidence_loop.traces.feedback.feedback import FeedbackLog
from evidence_loop.traces.feedback.feedback_folder import FolderFeedback
from evidence_loop.traces.journal.finished_lines import FinishedLines, Place
from evidence_loop.traces.journal.group_sync import GroupSync
from evidence_loop.traces.journal.journal import ZLIB_LEVEL, Frame, frame_index, journal_files
from evidence_loop.traces.journal.journal_store import (
    Journals,
    PendingFrame,
    Placed,
    TakenIds,
    frame_records,
    locate,
)
from evidence_loop.traces.journal.manifest import FinishedRun, read_manifest
from evidence_loop.traces.journal.run_index import (
    read_index,
    rewrite_index,
    short_question,
    summarize,
)
from evidence_loop.traces.records.batch import BatchWriter
from evidence_loop.traces.records.blobs import Documents, FolderDocuments, split_documents, with_documents
from evidence_loop.traces.records.encode import sealed_header
from evidence_loop.traces.records.reader import parse_trace, read_trace
from evidence_loop.traces.records.schema import (
    BATCH_SCHEMA,
    CHAINED_SCHEMA,
    RUN_ID_PATTERN,
    Trace,
    TraceFooter,
    TraceHeader,
    TraceSummary,
    parse_utc,
)
from evidence_loop.traces.records.writer import Fsync, TraceWriter, probe_folder, unwritable
from evidence_loop.traces.verification.chain_verify import verify_chain
from evidence_loop.traces.verification.citations import TextSource
from evidence_loop.traces.verification.day_verify import (
    Ends,
    against,
    by_day,
    day_of,
    ends_of,
    unwritten,
    verify_day,
)
from evidence_loop.traces.verification.verify import VerifyResult, verify

_RUN_ID = re.compile(RUN_ID_PATTERN)
_short_question = short_question  # the PostgreSQL store's name for it
_YEAR, _TWO = re.compile(r"^\d{4}$"), re.compile(r"^\d{2}$")


def _check_run_id(run_id: str) -> str:
    if not _RUN_ID.match(run_id):
        raise InputError(f"run id {run_id!r} is not usable as a file name (letters, digits, . _ -)")
    return run_id


def _subdirs(folder: Path, pattern: re.Pattern[str]) -> list[str]:
    """Names of the sub-folders matching ``pattern``, newest (largest) first."""
    try:
        with os.scandir(folder) as entries:
            names = [e.name for e in entries if e.is_dir() and pattern.match(e.name)]
    except FileNotFoundError:
        return []
    return sorted(names, reverse=True)


Layout = Literal["journal", "files"]
RunWriter = TraceWriter | BatchWriter
"""What ``begin`` hands a run: the same calls (append, finish, close, a context manager) either way."""


class TraceStore:
    """Where traces live: begin a run's trace, read one back, list, verify."""

    def __init__(
        self,
        root: Path,
        *,
        fsync_each: bool = False,
        fsync: Fsync = os.fsync,
        layout: Layout = "journal",
        compress: int | None = ZLIB_LEVEL,
        sync_within: float | None = None,
    ) -> None:
        self.root = Path(root)
        self.index_path = self.root / "index.jsonl"
        self._fsync_each = fsync_each
        self._fsync = fsync
        # fsync_each keeps a run's lines durable as they are written: one file per run
        self.layout: Layout = "files" if fsync_each else layout
        self._made_day: Path | None = None
        self._days_seen: builtins.list[Path] | None = None
        self._folder_syncs: dict[Path, GroupSync] = {}
        self._folder_syncs_lock = threading.Lock()
        self._taken = TakenIds()
        self._placed = Placed()
        synced = fsync if fsync_each else None  # fsync_each: each manifest line synced as written
        self._finished = FinishedLines(
            self.root, self.index_path, self._taken, fsync=synced, sync=fsync, days=self._days
        )
        # zlib's level of the frames (None: plain); each journal's end is anchored as it closes, and
        # the journals of the day before as this process opens its first journal of a day
        # sync_within: a journal run returns once written, synced by the journal's thread within it
        self._journals = Journals(
            fsync,
            compress,
            opened=self._finished.day_begun,
            closing=self._finished.journal_closing,
            within=sync_within,
        )
        self._day_folders: dict[str, Path] = {}
        self.documents: Documents = FolderDocuments(self.root)  # written once: always synced

    def begin(self, header: TraceHeader) -> RunWriter:
        """Start the trace of ``header.run_id``; refuses a run id in use. A schema 4 header in a
        journal is written whole when the run ends (``traces.records.batch``); a run's own file
        (``fsync_each``)
        or a schema 3 header (an import's) is written event by event, in schema 3."""
        run_id = _check_run_id(header.run_id)
        header, documents = split_documents(header)
        batch = self.layout == "journal" and header.schema_version >= BATCH_SCHEMA
        if not batch and header.schema_version > CHAINED_SCHEMA:
            header = header.model_copy(update={"schema_version": CHAINED_SCHEMA})
        try:
            self.documents.put(documents)  # before the first run that names them: none names a missing one
        except OSError as exc:
            raise unwritable(self.root / "blobs", exc) from exc
        sealed, line = sealed_header(header)  # a bad header fails here, before anything is written
        day = self._day(sealed.created_at)
        days = self._known_days(day)
        existing = self._find(run_id, days)
        if existing is not None:
            raise InputError(f"run {run_id} already has a trace at {existing}")
        if self.layout == "files":
            return self._begin_file(sealed, line, day)
        # a journal run's id is checked against its own day and the day before (runs crossing
        # midnight); the service's run ids are random, and a run file of any day is checked above
        if not self._taken.take(run_id, {day, *days[:2]}):
            raise InputError(f"run {run_id} already has a trace in {day}")
        try:
            return self._begin_frame(sealed, line, day)
        except BaseException:
            self._taken.release(run_id)
            raise

    def _begin_frame(self, sealed: TraceHeader, line: bytes, day: Path) -> RunWriter:
        """A writer whose records become one frame of the day's journal when the run ends."""
        try:
            journal = self._journals.for_day(day, self._make_dirs(day))
        except OSError as exc:
            raise unwritable(day / "journal", exc) from exc
        run_id = sealed.run_id
        pending = PendingFrame(run_id, lambda: self._journals.for_day(day), self._finished.closed_unfinished)

        def finished(path: Path, header: TraceHeader, footer: TraceFooter, size: int) -> None:
            self._record_finished(path, header, footer, size, frame=pending)

        if sealed.schema_version >= BATCH_SCHEMA:
            return BatchWriter(pending, journal.path, sealed, line, sync=pending.commit, on_finish=finished)
        return TraceWriter(
            pending,
            journal.path,
            sealed,
            sealed=True,
            line=line,
            fsync=lambda _fd: pending.commit(),
            on_finish=finished,
        )

    def _begin_file(self, sealed: TraceHeader, line: bytes, day: Path) -> TraceWriter:
        """A writer of one file per run, each line flushed (and with ``fsync_each``, synced)."""
        run_id = sealed.run_id
        path = day / f"{run_id}.jsonl"
        try:
            new_dirs = self._make_dirs(day)
            file = path.open("xb")
        except FileExistsError as exc:
            raise InputError(f"run {run_id} already has a trace at {path}") from exc
        except OSError as exc:
            raise unwritable(path, exc) from exc
        # The parent of every folder we created must be synced too, or the folder may vanish on a crash.
        sync_dirs = sorted({day, *(d.parent for d in new_dirs)})
        try:
            return TraceWriter(
                file,
                path,
                sealed,
                sealed=True,
                line=line,
                sync_dirs=sync_dirs,
                fsync_each=self._fsync_each,
                fsync=self._fsync,
                on_finish=self._record_finished,
                folder_sync=self._covering_syncs(sync_dirs),
            )
        except TraceStoreUnavailableError:
            # A run whose header could not be written was never recorded: leave no file that reads
            # as a damaged trace (verify would fail the day for a disk that was full).
            file.close()
            path.unlink(missing_ok=True)
            raise

    def _covering_syncs(self, folders: builtins.list[Path]) -> Callable[[], None]:
        """What makes a new file's folder entries durable at its run's finish: the group commit of
        each folder, marked now that the file exists (runs finishing together share one sync)."""
        with self._folder_syncs_lock:
            syncs = [
                self._folder_syncs.setdefault(folder, GroupSync(folder, self._fsync)) for folder in folders
            ]
        marks = [(sync, sync.mark()) for sync in syncs]

        def sync_folders() -> None:
            for sync, mark in marks:
                sync.wait_covered(mark)

        return sync_folders

    def probe(self, *, failed: bool = False) -> TraceStoreUnavailableError | None:
        """None when a trace can be written here now, else why not
        (``traces.records.writer.probe_folder``)."""
        return probe_folder(self.root, failed=failed)

    def close(self) -> None:
        """Close this process's journals (call once no run is going on)."""
        self._journals.close()
        self._finished.close()

    @property
    def feedback(self) -> FeedbackLog:
        """Reviewers' verdicts on this store's runs: ``feedback/`` beside the day folders."""
        return FolderFeedback(self.root / "feedback")

    def path(self, run_id: str) -> Path:
        """The file holding the trace of ``run_id`` (its own, or its day's journal); ``NotFoundError``
        when there is none."""
        return self._locate(_check_run_id(run_id))[0]

    def read(self, run: str | Path) -> Trace:
        """Read a trace by run id, or by file path (a ``Path``, or a string ending in ``.jsonl``)."""
        if isinstance(run, str) and not run.endswith(".jsonl"):
            path, frame = self._locate(_check_run_id(run))
            trace = read_trace(path) if frame is None else parse_trace(frame_records(path, frame), path=path)
            return with_documents(trace, self.documents)
        return with_documents(read_trace(Path(run)), self.documents)

    def raw(self, run_id: str) -> bytes:
        """The records of ``run_id`` as written: the bytes of its own file, or of its journal frame."""
        path, frame = self._locate(_check_run_id(run_id))
        return path.read_bytes() if frame is None else frame_records(path, frame)

    def stored_size(self, run_id: str) -> int:
        """The bytes ``run_id`` takes where it is kept: its own file, or its journal frame as written
        (compressed, frame line included); ``raw`` gives the records themselves."""
        path, frame = self._locate(_check_run_id(run_id))
        return path.stat().st_size if frame is None else frame.stored

    def _locate(self, run_id: str) -> tuple[Path, Frame | None]:
        """Where the trace of ``run_id`` is (``journal_store.locate``); ``NotFoundError`` if nowhere."""
        found = locate(run_id, builtins.list(self._days(None)), self._placed)
        if found is None:
            raise NotFoundError(f"no trace for run {run_id!r} under {self.root}")
        return found

    def verify(self, run: str | Path) -> VerifyResult:
        """Verify a trace's chain and, if its run finished, that the file still ends where it did."""
        return self.check(self.read(run))

    def check(self, trace: Trace) -> VerifyResult:
        """Verify a trace already read against the end its day manifest (or the index) recorded."""
        if trace.path is None:
            return verify(trace)
        run_id = trace.header.run_id
        held = self._holds(trace.path)
        manifest = read_manifest(trace.path.parent, only=run_id) if held else {}
        ends = self._ends(manifest, self._read_index(only=run_id))
        return against(trace, ends.of(trace), day_of(trace.path.parent) if held else None)

    def verify_all(self, texts: TextSource | None = None) -> Iterator[tuple[str, VerifyResult]]:
        """(run id, verdict) of every run, oldest day first (``traces.verification.day_verify``), and of every
        run
        that a manifest records as finished but that is gone. A trace that cannot be read is a
        failure, not a stop. With ``texts`` (the document store's), the text each trace cites is
        checked too."""
        indexed = self._read_index()
        listed = by_day(indexed.values())
        for day in reversed(builtins.list(self._days(None))):
            ends = self._ends(read_manifest(day), indexed)
            yield from verify_day(day, ends, texts, self.documents, listed.get(day.relative_to(self.root)))

    def verify_chain(self) -> Iterator[tuple[str, VerifyResult]]:
        """The run chain's breaks, oldest day first, then its summary row
        (``traces.verification.chain_verify``)."""
        return verify_chain(self.root, builtins.list(self._days(None))[::-1])

    def _ends(self, manifest: dict[str, FinishedRun], indexed: dict[str, TraceSummary]) -> Ends:
        return ends_of(self.root, manifest, indexed)

    def unwritten(self, run_id: str, reason: str) -> VerifyResult:
        """The verdict on ``run_id``'s trace that holds no complete header (``day_verify.unwritten``)."""
        try:
            path: Path | None = self._locate(run_id)[0]
        except NotFoundError:
            path = None
        manifest = read_manifest(path.parent, only=run_id) if path is not None else {}
        return unwritten(reason, self._ends(manifest, self._read_index(only=run_id)).final_of(run_id))

    def _holds(self, path: Path) -> bool:
        """True when ``path`` lies in one of this store's day folders."""
        return path.resolve().parent.parent.parent.parent == self.root.resolve()

    def list(self, since: datetime | None = None, status: str | None = None) -> builtins.list[TraceSummary]:
        """Summaries of the runs on disk, oldest first (ties by run id), finished or not.

        ``since`` keeps runs created at or after that (aware) moment; ``status`` keeps runs whose trace
        status (``complete``, ``incomplete``, ``unreadable``) or outcome status (``answered``, ...) matches.
        """
        if since is not None and since.tzinfo is None:
            raise InputError("since must be a timezone-aware datetime")
        indexed = self._read_index()
        rows: builtins.list[tuple[datetime, TraceSummary]] = []
        for run_id, path, offset in self._scan(since):
            summary = indexed.get(run_id) or summarize(self.root, Path(path), run_id, offset)
            created = datetime.fromisoformat(summary.created_at)
            if since is not None and created < since:
                continue
            if status is not None and status not in (summary.status, summary.outcome_status):
                continue
            rows.append((created, summary))
        rows.sort(key=lambda row: (row[0], row[1].run_id))
        return [summary for _, summary in rows]

    def day_folders(self) -> builtins.list[tuple[date, Path]]:
        """Every day folder (its UTC date and path), newest first."""
        out = []
        for folder in self._days(None):
            year, month, day = folder.relative_to(self.root).parts
            out.append((date(int(year), int(month), int(day)), folder))
        return out

    def _day(self, created_at: str) -> Path:
        """The day folder of a run created at ``created_at`` (a UTC timestamp ``YYYY-MM-DDT...``)."""
        name = created_at[:10]
        day = self._day_folders.get(name)
        if day is None:
            created = parse_utc(created_at)
            day = self.root / f"{created.year:04d}" / f"{created.month:02d}" / f"{created.day:02d}"
            if len(self._day_folders) > 8:
                self._day_folders.clear()
            self._day_folders[name] = day
        return day

    def _known_days(self, day: Path) -> builtins.list[Path]:
        """The day folders, listed once and again only when ``day`` is not among them, so a new run's
        id is checked against every day without listing the folders each time. Within its own day
        a run id is always unique (the file is created exclusively); a folder for another day that
        another process made since is seen at the next listing (the service's run ids are random)."""
        if self._days_seen is None or day not in self._days_seen:
            self._days_seen = builtins.list(self._days(None))
        return self._days_seen

    def _find(self, run_id: str, days: Iterable[Path] | None = None) -> Path | None:
        name = f"{run_id}.jsonl"
        for day in self._days(None) if days is None else days:
            if os.path.isfile(os.path.join(day, name)):  # a stat; a Path is made only for a run found
                return day / name
        return None

    def _days(self, since: date | None) -> Iterator[Path]:
        """Day folders, newest first, skipping those before ``since``."""
        for year in _subdirs(self.root, _YEAR):
            if since is not None and int(year) < since.year:
                break
            for month in _subdirs(self.root / year, _TWO):
                for day in _subdirs(self.root / year / month, _TWO):
                    if since is not None and date(int(year), int(month), int(day)) < since:
                        break
                    yield self.root / year / month / day

    def _scan(self, since: datetime | None) -> Iterator[tuple[str, str, int | None]]:
        """(run id, file path, frame offset or None for a run's own file) of every run in the day
        folders from ``since`` on."""
        first_day = since.astimezone(UTC).date() if since is not None else None
        for day in self._days(first_day):
            with os.scandir(day) as entries:
                for entry in entries:
                    if entry.name.endswith(".jsonl") and entry.is_file():
                        # Plain strings: building 10k Path objects would dominate a listing.
                        yield entry.name.removesuffix(".jsonl"), entry.path, None
            for journal in journal_files(day):
                for run_id, offset, _ in frame_index(journal):
                    yield run_id, str(journal), offset

    def _make_dirs(self, day: Path) -> builtins.list[Path]:
        """Create ``day`` and its missing parents; return the folders created."""
        if day == self._made_day and day.is_dir():
            return []  # the usual case: another run on the same day (one stat, not four)
        missing = [d for d in (self.root, day.parent.parent, day.parent, day) if not d.exists()]
        day.mkdir(parents=True, exist_ok=True)
        self._made_day = day
        return missing

    def _record_finished(
        self,
        path: Path,
        header: TraceHeader,
        footer: TraceFooter,
        size: int,
        *,
        frame: PendingFrame | None = None,
    ) -> None:
        """Called once the trace (and its folder entry) is durable: its manifest and index lines."""
        journal = frame.journal if frame is not None else None
        place = Place(journal.path, frame.offset, frame.prev) if journal is not None and frame else None
        self._finished.record(path, header, footer, size, place)

    def rewrite_index(self, keep: Callable[[TraceSummary], bool]) -> None:
        """Rewrite the index with only the runs ``keep`` accepts: a new file, fsynced, renamed over the
        old one. A line another process appends meanwhile may be lost; ``list`` then reads its file."""
        rewrite_index(self.index_path, [s for s in self._read_index().values() if keep(s)])

    def _read_index(self, only: str | None = None) -> dict[str, TraceSummary]:
        return read_index(self.index_path, only)
