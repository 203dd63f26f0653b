"""Writing one run's trace event by event (schema 3): append-only, hash-chained, durable at finish.

(A finished run of the journal or PostgreSQL is written whole when it ends instead, in schema 4:
``traces.records.batch``.)

Every record is one ``write`` of one line followed by a flush, so a killed process leaves at worst a torn
last line (which readers ignore). ``finish`` writes the footer and syncs before it returns: once the
caller has the final hash, the trace survives a power cut. What the writer writes into is the store's
choice: the folder store hands in a run's pending frame of its day journal (``traces.journal.journal_store``:
the lines stay in memory, and the sync appends them as one frame and waits for the journal's group
commit), or, with ``fsync_each``, the run's own file, every line fsynced too (slower; for runs whose
partial traces must survive a crash), with ``folder_sync`` its group commit of the folder
(``traces.journal.group_sync``) in place of a sync of the folders per run.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import BinaryIO, Self

from evidence_loop.tools.disk import check_write, disk_error, is_full
from evidence_loop.tools.errors import TraceError, TraceStoreUnavailableError
from evidence_loop.traces.records.encode import event_line, header_line, sealed_footer, sealed_header
from evidence_loop.traces.records.schema import CHAINED_SCHEMA, TraceFooter, TraceHeader
from evidence_loop.traces.records.steps import AbortedStep, AnyStep

PROBE_BYTES = 4096  # what the readiness probe writes: about a run's header
Fsync = Callable[[int], None]
FinishHook = Callable[[Path, TraceHeader, TraceFooter, int], None]
"""Called after the footer is durable with the file, its header and footer, and its size in bytes."""


def unwritable(path: Path, exc: BaseException, *, where: Path | None = None) -> TraceStoreUnavailableError:
    """The error of a trace that cannot be written at ``path`` (named as ``where`` if given): the
    disk's reason (no space, an I/O error), or the system's."""
    disk = disk_error(exc, path.parent, "writing a trace")
    cause = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
    if disk is not None:
        reason = "no space left on the disk" if disk.full else f"an I/O error on the disk ({cause})"
    else:
        reason = cause
    return TraceStoreUnavailableError(str(where or path), reason, disk=disk)


def probe_folder(root: Path, *, failed: bool = False) -> TraceStoreUnavailableError | None:
    """None when a trace can be written under ``root`` now, else why not. Free space is asked of the
    system; only on a (nearly) full disk, or after a run's trace ``failed``, is a small file
    written, synced and removed (about what a run's header needs)."""
    if not failed and not is_full(root):
        return None
    path = root / f".writable-{os.getpid()}-{threading.get_ident()}"
    try:
        check_write(path)
        root.mkdir(parents=True, exist_ok=True)
        with path.open("wb") as file:
            file.write(bytes(PROBE_BYTES))
            file.flush()
            os.fsync(file.fileno())
    except OSError as exc:
        return unwritable(path, exc, where=root)
    finally:
        with contextlib.suppress(OSError):
            path.unlink(missing_ok=True)
    return None


class TraceWriter:
    """Appends the events of one run to its trace file; use as a context manager.

    Leaving the ``with`` block through an exception records an ``aborted`` event (the exception's type and
    a short message) and closes the file without a footer: the run reads as incomplete.
    """

    def __init__(
        self,
        file: BinaryIO,
        path: Path,
        header: TraceHeader,
        *,
        sealed: bool = False,
        line: bytes | None = None,
        sync_dirs: Sequence[Path] = (),
        fsync_each: bool = False,
        fsync: Fsync = os.fsync,
        on_finish: FinishHook | None = None,
        folder_sync: Callable[[], None] | None = None,
    ) -> None:
        self._file = file
        self._path = path
        if header.schema_version > CHAINED_SCHEMA:  # written event by event: each event chained
            header, sealed = header.model_copy(update={"schema_version": CHAINED_SCHEMA}), False
        if not (sealed and header.hash):
            header, line = sealed_header(header)  # dumped once for its hash and its line
        self._header = header
        self._sync_dirs = tuple(sync_dirs)
        self._fsync_each = fsync_each
        self._fsync = fsync
        self._on_finish = on_finish
        self._folder_sync = folder_sync
        self._seq = 0
        self._last_hash = self._header.hash
        self._bytes = 0
        self._footer: TraceFooter | None = None
        # a store that sealed the header hands in its line too (``encode.sealed_header``)
        self._write_bytes(line if line is not None else header_line(self._header))
        if fsync_each:
            self._sync_directories()

    @property
    def header(self) -> TraceHeader:
        """The header as written, with its hash."""
        return self._header

    @property
    def path(self) -> Path:
        """The trace file."""
        return self._path

    @property
    def finished(self) -> bool:
        """True once the footer is written."""
        return self._footer is not None

    def append(self, step: AnyStep) -> str:
        """Write one step as the next event, linked to the previous record; return the event's hash.

        The step's data is encoded once: the same canonical JSON is hashed and written. (The event
        is not built as a ``TraceEvent`` here: the run does not read it back, a reader does.)
        """
        self._ensure_open()
        digest, written = event_line(self._last_hash, self._seq, step)
        self._write_bytes(written)
        self._seq += 1
        self._last_hash = digest
        return digest

    def finish(self, outcome_status: str, *, versions_read: Mapping[str, str] | None = None) -> str:
        """Write the footer, fsync the file (durable before returning) and return the final hash."""
        self._ensure_open()
        footer, written = sealed_footer(outcome_status, self._seq, versions_read or {}, self._last_hash)
        self._write_bytes(written, sync=False)
        try:
            self._fsync(self._file.fileno())
            if self._fsync_each:
                pass  # the folders were synced when the file was made
            elif self._folder_sync is not None:
                self._folder_sync()
            else:
                self._sync_directories()
        except OSError as exc:
            raise unwritable(self._path, exc) from exc
        finally:
            self._file.close()  # even when fsync fails: nothing may follow the footer
        self._footer = footer
        if self._on_finish is not None:
            try:
                self._on_finish(self._path, self._header, footer, self._bytes)
            except OSError as exc:  # the day's manifest is part of the record: unrecorded, unanswered
                raise unwritable(self._path, exc) from exc
        return footer.hash

    def close(self) -> None:
        """Close the file; without a prior ``finish`` the trace stays incomplete. Idempotent."""
        if not self._file.closed:
            self._file.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is not None and not self.finished and not self._file.closed:
            # The original exception is the one worth raising, not a failure to record it.
            with contextlib.suppress(OSError, TraceError, ValueError):
                self.append(AbortedStep(error=exc_type.__name__, message=str(exc)[:300]))
        self.close()

    def _ensure_open(self) -> None:
        if self._footer is not None:
            raise TraceError(f"trace {self._header.run_id} is finished; it takes no more records")
        if self._file.closed:
            raise TraceError(f"trace {self._header.run_id} was closed without a footer")

    def _write_bytes(self, line: bytes, *, sync: bool | None = None) -> None:
        try:
            check_write(self._path)
            self._file.write(line)
            self._file.flush()
            if self._fsync_each if sync is None else sync:
                self._fsync(self._file.fileno())
        except OSError as exc:
            # A half-written line must stay the last one (readers see it as torn): write nothing more.
            with contextlib.suppress(OSError):
                self._file.close()
            raise unwritable(self._path, exc) from exc
        self._bytes += len(line)

    def _sync_directories(self) -> None:
        """Make the new file's directory entry (and any new parent directories) durable."""
        if os.name == "nt":  # directories cannot be opened for fsync on Windows
            return
        for directory in self._sync_dirs:
            fd = os.open(directory, os.O_RDONLY)
            try:
                self._fsync(fd)
            finally:
                os.close(fd)
