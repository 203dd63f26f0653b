"""The day journal: finished runs appended to one file per UTC day and writing process, synced in groups.

A frame is one run: a frame line naming the run and the length of its records, the very bytes a
one-file-per-run trace holds (header, events, footer, one JSON line each), then those records compressed
(zlib) as one line of base64, ``zlib`` bytes long with its newline::

    {"frame":"r-0001","bytes":12873,"zlib":4285}
    eJzNWm1v2zgS/iuBP...

A frame written before compression (no ``zlib`` in its frame line) holds the records themselves, and still
reads: one journal may hold frames of both kinds. Reading a compressed frame gives back exactly its records,
so hashing, verify, replay and export work on the same bytes whichever way they were stored. Compressed
records that do not read back (a changed byte: zlib's checksum, or bytes that are no base64) make the frame
*damaged*, a failure of that run alone.

A run's records are kept in memory while it goes on and written as one frame, with one ``write``, when
it finishes (or is closed unfinished: then as an incomplete trace). Each process writes its own
journal (``runs-<pid>-<token>.journal``): no two writers share a file, so a frame is only ever torn at
the end of its journal, by a stop mid-write (kill -9, power cut). Frames are not synced one
by one: a run waits until a sync that began after its frame was written has completed; the first run to
wait with no sync in flight makes it (``fdatasync`` of the journal), those arriving meanwhile wait for
the next one. One sync serves every run of a commit group. A write that fails (a full disk) is cut back
off the journal; a failed sync fails every run it would have covered, and the journal takes no more
frames (after a failed ``fsync`` the kernel may have dropped what it missed): the store opens a new one.
A journal opened with ``within`` seconds syncs off the request path instead
(``traces.journal.journal_flush``):
a run returns once its frame is written, and a thread syncs every frame written at most ``within``
seconds (plus one sync) later; a failed sync is logged with the runs it would have covered.

Reading: ``scan`` walks the frames of a journal's bytes. A frame cut short at the end is *torn* (its run
was never reported durable); bytes that hold no frame line before the end are *damage* (changed or
inserted bytes), skipped up to the next frame line so one edit does not hide the runs after it.
``read_frame`` reads one frame at an offset (the day manifest records each finished run's).

The run chain (``traces.journal.run_chain``): each frame appended is linked to the one before it in its
journal
by ``prev``, the hash its records ended on (``last_hash``; "" for a journal's first frame), which the
store writes on the run's manifest line; ``Journal.tail`` names the last frame, for the anchors.
"""

from __future__ import annotations

import binascii
import dataclasses
import logging
import os
import re
import secrets
import threading
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from evidence_loop.tools.disk import check_write
from evidence_loop.traces.journal.journal_flush import Flusher

JOURNAL_SUFFIX: Final = ".journal"
_FRAME_START: Final = b'{"frame":'
_FRAME_LINE: Final = re.compile(
    rb'^\{"frame":"([A-Za-z0-9._-]{1,128})","bytes":(\d{1,12})(?:,"zlib":(\d{1,12}))?\}$'
)
ZLIB_LEVEL: Final = 1
"""How hard frames are compressed: level 1 keeps a tara_zh run's records (about 11 KB) to about 4 KB
on disk at a few tens of microseconds of CPU (see docs/traces.md); None writes them as they are."""
Fsync = Callable[[int], None]
_LOG = logging.getLogger(__name__)


def frame_line(run_id: str, size: int, packed: int | None = None) -> bytes:
    """The line that opens a frame of ``size`` bytes of records (``packed`` bytes of them compressed)."""
    if packed is None:
        return f'{{"frame":"{run_id}","bytes":{size}}}\n'.encode()
    return f'{{"frame":"{run_id}","bytes":{size},"zlib":{packed}}}\n'.encode()


def pack(run_id: str, records: bytes, level: int | None = ZLIB_LEVEL) -> bytes:
    """The frame of ``records``: its frame line, then the records compressed (or as they are, with
    ``level`` None)."""
    if level is None:
        return frame_line(run_id, len(records)) + records
    payload = binascii.b2a_base64(zlib.compress(records, level))  # one line, newline included
    return frame_line(run_id, len(records), len(payload)) + payload


def journal_name() -> str:
    """A new journal's file name: this process's, never reused (the token differs per journal)."""
    return f"runs-{os.getpid()}-{secrets.token_hex(4)}{JOURNAL_SUFFIX}"


def journal_files(day: Path) -> list[Path]:
    """The journals of a day folder, by name."""
    try:
        with os.scandir(day) as entries:
            return sorted(Path(e.path) for e in entries if e.name.endswith(JOURNAL_SUFFIX) and e.is_file())
    except FileNotFoundError:
        return []


def last_hash(records: bytes) -> str:
    """The hash a run's records end on: the last record's (a header, event and footer line each end
    with their ``"hash"``); "" when the records hold no whole line."""
    tail = records[-76:]  # ...,"hash":"<64 hex>"}\n
    if len(tail) < 76 or not (tail.startswith(b',"hash":"') and tail.endswith(b'"}\n')):
        return ""
    return tail[9:73].decode("ascii", "replace")


@dataclass(frozen=True, slots=True)
class Frame:
    """One run's records in a journal, at ``offset`` (of its frame line); ``torn``: cut short at the end."""

    run_id: str
    offset: int
    records: bytes
    torn: bool = False
    stored: int = 0  # its bytes in the journal, frame line included
    error: str | None = None  # why its compressed records do not read back (then ``records`` is empty)


@dataclass(frozen=True, slots=True)
class Damage:
    """Bytes ``start`` to ``end`` of a journal that hold no frame: changed or inserted."""

    start: int
    end: int


@dataclass(frozen=True, slots=True)
class FrameHead:
    """A frame line read: the run, the size of its records, and of their compressed line if any."""

    run_id: str
    size: int
    packed: int | None

    @property
    def length(self) -> int:
        """The bytes that follow the frame line."""
        return self.size if self.packed is None else self.packed

    def frame(self, offset: int, body: bytes, torn: bool, stored: int) -> Frame:
        """The frame of ``body``, the bytes that follow this line, its records read back."""
        if self.packed is None:
            return Frame(self.run_id, offset, body, torn, stored)
        if torn:
            return Frame(self.run_id, offset, _inflate_torn(body), True, stored)
        records, error = _inflate(body, self)
        return Frame(self.run_id, offset, records, False, stored, error)


def frame_head(line: bytes) -> FrameHead | None:
    """The frame line ``line`` (without its newline) read, or None when it is no frame line."""
    match = _FRAME_LINE.match(line)
    if match is None:
        return None
    packed = match.group(3)
    return FrameHead(match.group(1).decode(), int(match.group(2)), None if packed is None else int(packed))


def _inflate(body: bytes, head: FrameHead) -> tuple[bytes, str | None]:
    """The records a whole compressed frame holds, or why they cannot be read back (damage)."""
    damaged = "damaged: the compressed records of its frame do not read back"
    if len(body) != head.length or not body.endswith(b"\n"):
        return b"", f"{damaged} ({len(body)} bytes where its frame line says {head.length})"
    try:
        # strict: a stray or changed byte that lenient base64 reading would skip is an error
        compressed = binascii.a2b_base64(body[:-1], strict_mode=True)
        records = zlib.decompress(compressed)
    except (binascii.Error, zlib.error) as exc:
        return b"", f"{damaged} ({exc})"
    if len(records) != head.size:
        return b"", f"{damaged} ({len(records)} bytes of records where its frame line says {head.size})"
    return records, None


def _inflate_torn(body: bytes) -> bytes:
    """What can be read of compressed records cut short (the lines up to the cut, the last one torn)."""
    text = body.rstrip(b"\n")
    try:
        return zlib.decompressobj().decompress(binascii.a2b_base64(text[: len(text) // 4 * 4]))
    except (binascii.Error, zlib.error):
        return b""


def scan(data: bytes) -> Iterator[Frame | Damage]:
    """The frames of a journal's bytes in order, and the stretches of damage between them.

    A frame's records are the lines from its frame line to the next one (no record line starts as a
    frame line does), so an edit that changes a record's length stays inside its run: the chain then
    says which event changed. The length a frame line declares tells a frame cut short at the end."""
    at, size = 0, len(data)
    while at < size:
        end = data.find(b"\n", at)
        parsed = frame_head(data[at:end]) if end >= 0 else None
        if parsed is None:
            if end < 0 and _torn_line(data[at:]):
                yield Frame("", at, b"", torn=True)  # a frame line cut short: the journal's end
                return
            following = data.find(b"\n" + _FRAME_START, at)
            resume = size if following < 0 else following + 1
            yield Damage(at, resume)
            at = resume
            continue
        stop = _frame_end(data, end, parsed.packed is not None)
        body = data[end + 1 : stop]
        yield parsed.frame(at, body, stop == size and len(body) < parsed.length, stop - at)
        at = stop


def _frame_end(data: bytes, end: int, packed: bool) -> int:
    """Where the frame whose line ends at ``end`` stops: at the next frame line; a compressed frame (its
    base64 holds no ``{``) at the next ``{"frame":`` even when the newline before it was changed."""
    if packed:
        following = data.find(_FRAME_START, end)
        return len(data) if following < 0 else following
    following = data.find(b"\n" + _FRAME_START, end)
    return len(data) if following < 0 else following + 1


def _torn_line(rest: bytes) -> bool:
    """True when ``rest``, the journal's last bytes with no newline, is a frame line cut short."""
    return rest.startswith(_FRAME_START) or _FRAME_START.startswith(rest)


def read_frame(path: Path, offset: int, run_id: str) -> Frame | None:
    """The frame of ``run_id`` at ``offset`` in the journal at ``path``: a seek and a read of the
    length its frame line declares (more only when its records were edited to another length);
    None when no such frame starts there (a stale or wrong offset: the caller scans instead)."""
    try:
        with path.open("rb") as file:
            file.seek(offset)
            line = file.readline()
            parsed = frame_head(line.rstrip(b"\n"))
            if parsed is None or parsed.run_id != run_id:
                return None
            body = file.read(parsed.length)
            after = file.read(len(_FRAME_START))
            whole = (
                body.endswith(b"\n") and (_FRAME_START if parsed.packed else b"\n" + _FRAME_START) not in body
            )
            if not (whole and after in (b"", _FRAME_START)):
                file.seek(offset)
                found = next(_frames(file.read()), None)  # the lines up to the next frame line
                return dataclasses.replace(found, offset=offset) if found is not None else None
    except (FileNotFoundError, NotADirectoryError):
        return None
    return parsed.frame(offset, body, len(body) < parsed.length and not after, len(line) + len(body))


def _frames(data: bytes) -> Iterator[Frame]:
    for item in scan(data):
        if isinstance(item, Frame):
            yield item


@dataclass(frozen=True, slots=True)
class Appended:
    """A frame written: its offset, its number in the journal (what ``wait_durable`` waits on), the
    hash the frame before it ended on ("" for the first) and the hash its own records end on."""

    offset: int
    number: int
    prev: str
    last: str


class JournalBrokenError(OSError):
    """The journal failed a write or a sync earlier and takes no more frames."""


class Journal:
    """One process's journal of one day: frames appended under a lock, synced in groups."""

    def __init__(
        self, path: Path, fsync: Fsync, level: int | None = ZLIB_LEVEL, *, within: float | None = None
    ) -> None:
        self.path = path
        self._fsync = fsync
        self._level = level  # zlib's level for the frames' records; None: as they are
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL, 0o644)
        self._changed = threading.Condition()
        self._end = 0  # bytes written so far (the file is ours alone)
        self._written = 0  # frames written
        self._synced = 0  # frames covered by a completed sync
        self._syncing = False
        self._broken: OSError | None = None
        self._tail: tuple[str, str] | None = None  # the last frame's run and the hash it ended on
        self._unsynced: list[str] = []  # the runs of the frames written since the last sync
        self.syncs = 0  # syncs made (for the tests and benchmarks)
        # None: each run waits for a sync that covers it; else a thread syncs within that many seconds
        self._flusher = None if within is None else Flusher(self.sync_written, within, f"sync {path.name}")

    @property
    def broken(self) -> bool:
        return self._broken is not None

    def durable_tail(self) -> tuple[str, str] | None:
        """The run of the last frame written and the hash its records ended on, once a sync covers it
        (an anchor must not name a frame a power cut could take back); None with no frame yet."""
        with self._changed:
            tail, fd = self._tail, self._fd
        if tail is not None and fd >= 0:
            self._fsync(fd)
        return tail

    def append(self, run_id: str, records: bytes) -> Appended:
        """Write one frame; return where it went, its number and its link in the run chain."""
        frame = pack(run_id, records, self._level)  # outside the lock: runs compress side by side
        ends_on = last_hash(records)
        with self._changed:
            if self._broken is not None:
                raise JournalBrokenError(self._broken.errno or 0, f"journal failed earlier: {self._broken}")
            offset = self._end
            check_write(self.path)
            try:
                view = memoryview(frame)
                while view:
                    view = view[os.write(self._fd, view) :]
            except OSError:
                self._cut_back(offset)
                raise
            self._end += len(frame)
            self._written += 1
            self._unsynced.append(run_id)
            prev = self._tail[1] if self._tail is not None else ""
            self._tail = (run_id, ends_on)
            appended = Appended(offset, self._written, prev, ends_on)
        if self._flusher is not None:
            self._flusher.poke()
        return appended

    def wait_durable(self, number: int) -> None:
        """Return once frame ``number`` is synced, leading a sync if none is in flight; a journal
        synced by its thread (``within``) returns at once: the thread syncs it within that time."""
        if self._flusher is None:
            self._wait_synced(number)

    def sync_written(self) -> bool:
        """Sync every frame written so far (the thread's call); False once the journal is broken, a
        failed sync logged with the runs whose frames it would have made durable."""
        with self._changed:
            number, broken = self._written, self._broken is not None
        if broken:
            return False
        try:
            self._wait_synced(number)
        except OSError as exc:
            _LOG.error(
                "traces not durable: the sync of %s failed (%s); runs answered whose traces a power cut may "
                "have lost: %s",
                self.path,
                exc,
                ", ".join(self._unsynced),
            )
            return False
        return True

    def _wait_synced(self, number: int) -> None:
        with self._changed:
            while self._synced < number:
                if self._broken is not None:
                    raise JournalBrokenError(self._broken.errno or 0, f"journal sync failed: {self._broken}")
                if not self._syncing:
                    self._syncing = True
                    target = self._written
                    break
                self._changed.wait()
            else:
                return
        try:
            self._fsync(self._fd)
        except OSError as exc:
            with self._changed:
                self._syncing = False
                self._broken = exc  # what that sync missed may be lost whatever a retry says
                self._changed.notify_all()
            raise
        with self._changed:
            self.syncs += 1
            del self._unsynced[: target - self._synced]
            self._synced = target
            self._syncing = False
            self._changed.notify_all()

    def close(self) -> None:
        """Release the file (frames already synced stay so; call once no run waits on it); a journal
        synced by its thread syncs what it holds first."""
        if self._flusher is not None:
            self._flusher.stop()
        with self._changed:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1
            if self._broken is None:
                self._broken = JournalBrokenError(0, "journal closed")

    def _cut_back(self, offset: int) -> None:
        """Cut a frame half written (a full disk) back off; if the disk refuses even that, the frame
        stays torn at this journal's end (read as an interrupted write) and the journal is done."""
        try:
            os.ftruncate(self._fd, offset)
        except OSError as exc:
            self._broken = exc


def frame_index(path: Path) -> list[tuple[str, int, int]]:
    """(run id, offset, bytes of records) of each frame of a journal, read frame line by frame line
    (a seek over each run's records); a frame still being written (or torn) at the end is the last.
    A journal whose frames are not where their lengths say (an edit, damage) is scanned instead."""
    frames: list[tuple[str, int, int]] = []
    try:
        with path.open("rb") as file:
            while line := file.readline():
                if not line.endswith(b"\n"):
                    return frames  # a frame line still being written
                parsed = frame_head(line[:-1])
                if parsed is None:
                    break
                frames.append((parsed.run_id, file.tell() - len(line), parsed.size))
                file.seek(parsed.length, os.SEEK_CUR)
            else:
                return frames
    except FileNotFoundError:
        return []
    scanned = (item for item in scan_file(path) if isinstance(item, Frame) and item.run_id)
    return [(frame.run_id, frame.offset, len(frame.records)) for frame in scanned]


def scan_file(path: Path) -> Iterator[Frame | Damage]:
    """``scan`` over the journal at ``path`` (nothing when it is gone)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return
    yield from scan(data)
