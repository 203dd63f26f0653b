"""The run chain of the folder store: a run removed whole (its frame, its manifest line, its index
line) breaks verification, at the cost of a hash on a line the store writes anyway.

    Link, link_line          an unfinished frame's link (a finished run's is on its manifest line)
    Anchor, anchor_line      where a journal (or a writer of runs' own files) ended when anchored
    chain_entries(content)   the links and anchors among a manifest's lines
    FileChain                the chain of the runs' own files one store writes (``fsync_each``)
    Span, frame_spans(path)  a journal's frames in order, read by their frame lines
    journal_tail(path)       the run of a journal's last whole frame and the hash it ended on

**Links.** Each frame of a journal is linked to the frame before it: its manifest line carries
``prev``, the hash the records of the frame before it ended on ("" for the journal's first frame),
taken as the frame is appended (``traces.journal.journal``). A run finished has that on its manifest line; a
run closed unfinished (it raised: an incomplete trace) gets a line of its own, ``{"link":...}``. A
frame removed from a journal's start or middle, or frames swapped, leave a frame whose ``prev`` is not
how the frame now before it ends. A run's own file (the layout before the journal, and ``fsync_each``)
is linked to the run its writer finished before it, among that writer's runs of the day.

**Anchors.** A chain cannot see its own end: the last run removed leaves a shorter chain that holds.
So the end is written down apart from it, as a line ``{"anchor":JOURNAL,"last":H,...}``: by
the store closing a journal (the process stopping, or a day it stops writing), in that day's manifest;
and by each process as it opens its first journal of a day, for every journal of the day before it
(the newest earlier day folder), in the new day's manifest, with ``"day"`` naming the day anchored.
An anchor says the journal held at least up to a run ending on H; frames after it may follow. The
runs after a journal's last anchor (today's, until its writer closes or the next day begins) are not
protected yet. Days and journals written before the chain have no links and no anchors: they still
verify, and ``verify_chain`` says they are not chained.

Old readers skip every line of the chain but a finished run's (they start ``{"link":``,
``{"anchor":``), and read that one as before (``prev`` and ``writer`` are fields they do not know).
"""

from __future__ import annotations

import json
import os
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from evidence_loop.traces.journal.journal import Frame, frame_head, last_hash, read_frame, scan_file

TAIL_WINDOW: Final = 1 << 18  # the journal's last bytes read to find its last frame (a larger frame: a walk)
_ENCODER: Final = json.JSONEncoder(separators=(",", ":"))
_LINK: Final = b'{"link":'
_ANCHOR: Final = b'{"anchor":'


@dataclass(frozen=True, slots=True)
class Link:
    """An unfinished frame's place in its journal's chain."""

    run_id: str
    journal: str
    prev: str
    last: str


@dataclass(frozen=True, slots=True)
class Anchor:
    """Where ``writer`` (a journal's name, or a writer of runs' own files) had got to: a run ending on
    ``last`` (the run is not named: removing the lines that name a run leaves its anchor); ``day``
    ("YYYY/MM/DD") when it is another day's than the manifest's."""

    writer: str
    last: str
    by: str  # "close" (its writer closed it) or "next day" (a process began the day after)
    at: float
    day: str | None = None


def link_line(link: Link) -> bytes:
    record = {"link": link.run_id, "journal": link.journal, "prev": link.prev, "last": link.last}
    return _ENCODER.encode(record).encode() + b"\n"


def anchor_line(anchor: Anchor) -> bytes:
    record: dict[str, object] = {"anchor": anchor.writer, "last": anchor.last}
    record.update(by=anchor.by, at=anchor.at)
    if anchor.day is not None:
        record.update(day=anchor.day)
    return _ENCODER.encode(record).encode() + b"\n"


def chain_entries(content: bytes) -> tuple[dict[tuple[str, str], Link], list[Anchor]]:
    """The links (by journal and run) and the anchors among a manifest's whole lines."""
    links: dict[tuple[str, str], Link] = {}
    anchors: list[Anchor] = []
    for line in content.split(b"\n"):
        if not (line.startswith(_LINK) or line.startswith(_ANCHOR)):
            continue
        try:
            raw = json.loads(line)
        except ValueError:
            continue
        strings = {k: v for k, v in raw.items() if isinstance(v, str)}
        if line.startswith(_LINK) and {"link", "journal", "prev", "last"} <= strings.keys():
            link = Link(strings["link"], strings["journal"], strings["prev"], strings["last"])
            links[(link.journal, link.run_id)] = link
        elif {"anchor", "last", "by"} <= strings.keys():
            at = raw.get("at") if isinstance(raw.get("at"), float | int) else 0.0
            anchors.append(Anchor(strings["anchor"], strings["last"], strings["by"], at, strings.get("day")))
    return links, anchors


def anchored(writer: str, tail: tuple[str, str], by: str, day: str | None = None) -> Anchor:
    """The anchor of ``writer`` at ``tail`` (its last run and the hash it ended on), now."""
    return Anchor(writer, tail[1], by, round(time.time(), 3), day)


class FileChain:
    """The chain of the runs' own files this store finishes: per day, the run finished last."""

    def __init__(self) -> None:
        self.writer = f"files-{os.getpid()}-{secrets.token_hex(4)}"
        self._last: dict[Path, tuple[str, str]] = {}
        self.lock = threading.Lock()  # held from ``prev`` to ``advance``: the lines go out in chain order

    def prev(self, day: Path) -> str:
        last = self._last.get(day)
        return last[1] if last is not None else ""

    def advance(self, day: Path, run_id: str, final_hash: str) -> None:
        self._last[day] = (run_id, final_hash)

    def tails(self) -> dict[Path, tuple[str, str]]:
        """The last run finished in each day folder, and its final hash."""
        with self.lock:
            return dict(self._last)


@dataclass(frozen=True, slots=True)
class Span:
    """A frame of a journal: its run, its offset; ``torn``: it runs past the journal's end (a write cut
    short, or still going on)."""

    run_id: str
    offset: int
    torn: bool


def frame_spans(path: Path) -> list[Span]:
    """The frames of a journal in order, read frame line by frame line (a seek over each run's
    records); a journal whose frames are not where their lengths say (an edit, damage) is scanned."""
    spans: list[Span] = []
    try:
        with path.open("rb") as file:
            size = os.fstat(file.fileno()).st_size
            while line := file.readline():
                head = frame_head(line[:-1]) if line.endswith(b"\n") else None
                if head is None:
                    if not line.endswith(b"\n"):
                        return spans  # a frame line still being written: no frame yet
                    break
                spans.append(Span(head.run_id, file.tell() - len(line), file.tell() + head.length > size))
                file.seek(head.length, os.SEEK_CUR)
            else:
                return spans
    except FileNotFoundError:
        return []
    scanned = (item for item in scan_file(path) if isinstance(item, Frame) and item.run_id)
    return [Span(frame.run_id, frame.offset, frame.torn) for frame in scanned]


def frame_last(path: Path, span: Span) -> str | None:
    """The hash the records of the frame at ``span`` end on; None when they cannot be read."""
    frame = read_frame(path, span.offset, span.run_id)
    if frame is None or frame.torn or frame.error is not None:
        return None
    return last_hash(frame.records)


def journal_tail(path: Path, fsync: Callable[[int], None]) -> tuple[str, str] | None:
    """The run of the last whole frame of a journal another process may still be appending to, and
    the hash it ended on, the journal synced first (an anchor must not name a frame a power cut could
    take back): found in its last bytes (a walk of its frames when the last frame is larger); None for
    a journal with no whole frame."""
    try:
        with path.open("rb") as file:
            fsync(file.fileno())
            size = os.fstat(file.fileno()).st_size
            start = max(0, size - TAIL_WINDOW)
            file.seek(start)
            window = file.read(size - start)
    except FileNotFoundError:
        return None
    at = len(window)
    while (at := window.rfind(b'{"frame":', 0, at)) > 0 or (at == 0 and start == 0):
        if at > 0 and window[at - 1 : at] != b"\n":
            continue
        head = frame_head(window[at : window.find(b"\n", at)])
        last = frame_last(path, Span(head.run_id, start + at, False)) if head is not None else None
        if head is not None and last is not None:
            return head.run_id, last
        if at == 0:
            return None
    whole = [span for span in frame_spans(path) if not span.torn]
    for span in reversed(whole):
        last = frame_last(path, span)
        if last is not None:
            return span.run_id, last
    return None
