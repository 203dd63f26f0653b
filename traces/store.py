"""The trace store: one JSON Lines file per run, by UTC day, and an append-only index of finished runs.

Layout under ``root``::

    index.jsonl                      one TraceSummary line per finished run (a cache, see below)
    2025/03/01/<run_id>.jsonl        the trace of a run created on that UTC day
    2025/03/01/finished.manifest     run id, final hash and event count of each run of the day that
                                     finished (``traces.manifest``): what a cut trace is checked against

Runs that finish together share one sync of their day folder (``traces.group_sync``): each run's
file is synced by its own run, and the run returns only once a folder sync that began after its file
was made has completed.

Day folders keep any one directory small and let ``list(since=...)`` skip whole days. The index makes
listing 10k runs one file read; it is a cache, not the truth: it is appended after the trace is durable
and never fsynced, so ``list`` also scans the day folders and reads any file the index does not know
(runs still going, interrupted ones, or one finished just before a kill). Run ids come from the caller.
"""

from __future__ import annotations

import builtins
import os
import re
import threading
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, date, datetime
from pathlib import Path

from evidence_loop.tools.errors import (
    InputError,
    NotFoundError,
    TraceError,
    TraceStoreUnavailableError,
    UnwrittenTraceError,
)
from evidence_loop.traces.blobs import Documents, FolderDocuments, split_documents, with_documents
from evidence_loop.traces.citations import TextSource, with_citations
from evidence_loop.traces.feedback import FeedbackLog, FolderFeedback
from evidence_loop.traces.group_sync import GroupSync
from evidence_loop.traces.manifest import FinishedRun, append_finished, read_manifest
from evidence_loop.traces.reader import read_trace
from evidence_loop.traces.schema import (
    RUN_ID_PATTERN,
    Trace,
    TraceFooter,
    TraceHeader,
    TraceSummary,
    utc_timestamp,
)
from evidence_loop.traces.verify import HEADER_SEQ, VerifyResult, not_written, verify
from evidence_loop.traces.writer import Fsync, TraceWriter, probe_folder, seal_header, unwritable

QUESTION_CHARS = 80
_RUN_ID = re.compile(RUN_ID_PATTERN)
_YEAR, _TWO = re.compile(r"^\d{4}$"), re.compile(r"^\d{2}$")


def _check_run_id(run_id: str) -> str:
    if not _RUN_ID.match(run_id):
        raise InputError(f"run id {run_id!r} is not usable as a file name (letters, digits, . _ -)")
    return run_id


def _short_question(question: str) -> str:
    flat = " ".join(question.split())
    return flat if len(flat) <= QUESTION_CHARS else flat[: QUESTION_CHARS - 1] + "…"


def _subdirs(folder: Path, pattern: re.Pattern[str]) -> list[str]:
    """Names of the sub-folders matching ``pattern``, newest (largest) first."""
    try:
        with os.scandir(folder) as entries:
            names = [e.name for e in entries if e.is_dir() and pattern.match(e.name)]
    except FileNotFoundError:
        return []
    return sorted(names, reverse=True)


def _index_line(summary: TraceSummary) -> bytes:
    return summary.model_dump_json().encode("utf-8") + b"\n"


class TraceStore:
    """Where traces live: begin a run's trace, read one back, list, verify."""

    def __init__(
        self,
        root: Path,
        *,
        fsync_each: bool = False,
        fsync: Fsync = os.fsync,
    ) -> None:
        self.root = Path(root)
        self.index_path = self.root / "index.jsonl"
        self._fsync_each = fsync_each
        self._fsync = fsync
        self._made_day: Path | None = None
        self._days_seen: builtins.list[Path] | None = None
        self._folder_syncs: dict[Path, GroupSync] = {}
        self._folder_syncs_lock = threading.Lock()
        self.documents: Documents = FolderDocuments(self.root)  # written once: always synced

    def begin(self, header: TraceHeader) -> TraceWriter:
        """Create the trace file for ``header.run_id`` and write its header; refuses a run id in use."""
        run_id = _check_run_id(header.run_id)
        header, documents = split_documents(header)
        try:
            self.documents.put(documents)  # before the first run that names them: none names a missing one
        except OSError as exc:
            raise unwritable(self.root / "blobs", exc) from exc
        sealed = seal_header(header)  # a bad header fails here, before any file exists
        created = sealed.created
        day = self.root / f"{created.year:04d}" / f"{created.month:02d}" / f"{created.day:02d}"
        existing = self._find(run_id, self._known_days(day))
        if existing is not None:
            raise InputError(f"run {run_id} already has a trace at {existing}")
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
        """None when a trace can be written here now, else why not (``traces.writer.probe_folder``)."""
        return probe_folder(self.root, failed=failed)

    def close(self) -> None:
        """Nothing to release: every trace file is closed when its run ends."""

    @property
    def feedback(self) -> FeedbackLog:
        """Reviewers' verdicts on this store's runs: ``feedback/`` beside the day folders."""
        return FolderFeedback(self.root / "feedback")

    def path(self, run_id: str) -> Path:
        """The trace file of ``run_id``; ``NotFoundError`` when there is none."""
        found = self._find(_check_run_id(run_id))
        if found is None:
            raise NotFoundError(f"no trace for run {run_id!r} under {self.root}")
        return found

    def read(self, run: str | Path) -> Trace:
        """Read a trace by run id, or by file path (a ``Path``, or a string ending in ``.jsonl``)."""
        if isinstance(run, str) and not run.endswith(".jsonl"):
            return with_documents(read_trace(self.path(run)), self.documents)
        return with_documents(read_trace(Path(run)), self.documents)

    def verify(self, run: str | Path) -> VerifyResult:
        """Verify a trace's chain and, if its run finished, that the file still ends where it did."""
        return self.check(self.read(run))

    def check(self, trace: Trace) -> VerifyResult:
        """Verify a trace already read against the end its day manifest (or the index) recorded."""
        if trace.path is None:
            return verify(trace)
        run_id = trace.header.run_id
        manifest = read_manifest(trace.path.parent, only=run_id) if self._holds(trace.path) else {}
        return self._check(trace, manifest, self._read_index(only=run_id))

    def verify_all(self, texts: TextSource | None = None) -> Iterator[tuple[str, VerifyResult]]:
        """(run id, verdict) of every trace file, oldest day first, and of every run that a manifest
        records as finished but whose file is gone. A trace that cannot be read is a failure, not a stop.
        With ``texts`` (the document store's), the text each trace cites is checked too."""
        indexed = self._read_index()
        for day in reversed(builtins.list(self._days(None))):
            manifest = read_manifest(day)
            with os.scandir(day) as entries:
                names = sorted(e.name for e in entries if e.name.endswith(".jsonl") and e.is_file())
            for name in names:
                try:
                    trace = with_documents(read_trace(day / name), self.documents)
                except NotFoundError:
                    continue  # removed since the scan (a prune)
                except UnwrittenTraceError as exc:
                    run = name.removesuffix(".jsonl")
                    yield run, self._unwritten(run, str(exc), manifest, indexed)
                    continue
                except TraceError as exc:
                    yield name.removesuffix(".jsonl"), VerifyResult(False, False, HEADER_SEQ, str(exc))
                    continue
                verdict = self._check(trace, manifest, indexed)
                yield name.removesuffix(".jsonl"), with_citations(verdict, trace, texts)
            on_disk = {name.removesuffix(".jsonl") for name in names}
            for run in sorted(set(manifest) - on_disk):
                yield run, _gone(manifest[run])

    def _check(
        self, trace: Trace, manifest: dict[str, FinishedRun], indexed: dict[str, TraceSummary]
    ) -> VerifyResult:
        """Verify ``trace`` against its day's manifest line, else the index entry that describes this very
        file (a golden trace outside the store may reuse a run id); with neither, the chain alone."""
        run_id, path = trace.header.run_id, trace.path
        finished, summary = manifest.get(run_id), indexed.get(run_id)
        if (
            finished is None
            and summary is not None
            and summary.final_hash is not None
            and path is not None
            and path.resolve() == self.root.resolve() / summary.path
        ):
            finished = FinishedRun(run_id, summary.final_hash, summary.events)
        if finished is None:
            return verify(trace)
        return verify(trace, expected_hash=finished.final_hash, expected_events=finished.events)

    def unwritten(self, run_id: str, reason: str) -> VerifyResult:
        """The verdict on ``run_id``'s file that holds no complete header (see ``_unwritten``)."""
        path = self._find(run_id)
        manifest = read_manifest(path.parent, only=run_id) if path is not None else {}
        return self._unwritten(run_id, reason, manifest, self._read_index(only=run_id))

    @staticmethod
    def _unwritten(
        run_id: str, reason: str, manifest: dict[str, FinishedRun], indexed: dict[str, TraceSummary]
    ) -> VerifyResult:
        """A file with no complete header: a run never recorded (no failure), unless it is recorded as
        finished, when its file was cut to nothing."""
        finished = manifest.get(run_id)
        summary = indexed.get(run_id)
        final = finished.final_hash if finished is not None else summary.final_hash if summary else None
        if final is None:
            return not_written(reason)
        return VerifyResult(
            False,
            False,
            HEADER_SEQ,
            f"truncated: the run finished with hash {final} but its file holds no complete header",
        )

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
        for run_id, path in self._scan(since):
            summary = indexed.get(run_id) or self._summarize(Path(path))
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
            candidate = day / name
            if candidate.is_file():
                return candidate
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

    def _scan(self, since: datetime | None) -> Iterator[tuple[str, str]]:
        """(run id, file path) of every trace file in the day folders from ``since`` on."""
        first_day = since.astimezone(UTC).date() if since is not None else None
        for day in self._days(first_day):
            with os.scandir(day) as entries:
                for entry in entries:
                    if entry.name.endswith(".jsonl") and entry.is_file():
                        # Plain strings: building 10k Path objects would dominate a listing.
                        yield entry.name.removesuffix(".jsonl"), entry.path

    def _make_dirs(self, day: Path) -> builtins.list[Path]:
        """Create ``day`` and its missing parents; return the folders created."""
        if day == self._made_day and day.is_dir():
            return []  # the usual case: another run on the same day (one stat, not four)
        missing = [d for d in (self.root, day.parent.parent, day.parent, day) if not d.exists()]
        day.mkdir(parents=True, exist_ok=True)
        self._made_day = day
        return missing

    def _relative(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    def _record_finished(self, path: Path, header: TraceHeader, footer: TraceFooter, size: int) -> None:
        """Called once the trace and its folder are durable: the manifest line, then the index line."""
        finished = FinishedRun(header.run_id, footer.hash, footer.events)
        append_finished(path.parent, finished, fsync=self._fsync if self._fsync_each else None)
        summary = TraceSummary(
            run_id=header.run_id,
            created_at=header.created_at,
            status="complete",
            outcome_status=footer.outcome_status,
            question=_short_question(header.question),
            path=self._relative(path),
            final_hash=footer.hash,
            events=footer.events,
            bytes=size,
        )
        line = _index_line(summary)
        with self.index_path.open("ab+") as index:
            # A kill may have torn the previous line: start on a fresh line so only that one is lost.
            if index.seek(0, os.SEEK_END) > 0:
                index.seek(-1, os.SEEK_END)
                if index.read(1) != b"\n":
                    line = b"\n" + line
            index.write(line)

    def rewrite_index(self, keep: Callable[[TraceSummary], bool]) -> None:
        """Rewrite the index with only the runs ``keep`` accepts: a new file, fsynced, renamed over the
        old one. A line another process appends meanwhile may be lost; ``list`` then reads its file."""
        kept = [summary for summary in self._read_index().values() if keep(summary)]
        temporary = self.index_path.with_suffix(".jsonl.tmp")
        with temporary.open("wb") as out:
            out.writelines(_index_line(summary) for summary in kept)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, self.index_path)

    def _read_index(self, only: str | None = None) -> dict[str, TraceSummary]:
        """The index as run id -> summary; unreadable lines (a torn append) are skipped.

        ``only`` restricts it to lines that mention that run id, which skips parsing the rest.
        """
        try:
            content = self.index_path.read_bytes()
        except FileNotFoundError:
            return {}
        rows: dict[str, TraceSummary] = {}
        needle = f'"{only}"'.encode() if only is not None else b""
        for line in content.splitlines():
            if needle not in line:
                continue
            try:
                summary = TraceSummary.model_validate_json(line)
            except ValueError:
                continue
            rows[summary.run_id] = summary
        return rows

    def _summarize(self, path: Path) -> TraceSummary:
        """A summary read from the file itself, for runs the index does not know."""
        relative = self._relative(path)
        try:
            trace = read_trace(path)
        except TraceError:
            moment = datetime.fromtimestamp(path.stat().st_mtime, tz=UTC)
            run_id = path.name.removesuffix(".jsonl")
            return TraceSummary(
                run_id=run_id, created_at=utc_timestamp(moment), status="unreadable", path=relative
            )
        return TraceSummary(
            run_id=trace.header.run_id,
            created_at=trace.header.created_at,
            status="complete" if trace.complete else "incomplete",
            outcome_status=trace.footer.outcome_status if trace.footer is not None else None,
            question=_short_question(trace.header.question),
            path=relative,
            final_hash=trace.footer.hash if trace.footer is not None else None,
            events=len(trace.events),
            bytes=path.stat().st_size,
        )


def _gone(run: FinishedRun) -> VerifyResult:
    reason = f"missing: the run finished with hash {run.final_hash} at event {run.events}; its file is gone"
    return VerifyResult(ok=False, complete=False, first_bad_seq=HEADER_SEQ, reason=reason)
