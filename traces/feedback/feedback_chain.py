"""Whether a feedback log is whole: its records' chain, the lines it could not read, its anchored tail.

    check_log(read)  the verdict: the first record that does not hash, link, sit in its day, or that
                     the anchor names and is gone; notes on what did not break the chain
    check_chain(rs)  the same over bare records (no anchor, no unreadable lines)

A record's hash covers its content, and its ``prev`` the record before it, so an edit, a dropped or
re-ordered record and one filed under a later day break the chain where they are. What a chain alone
cannot see is its end: a last record dropped leaves a shorter chain that still holds. The tail anchor
(``feedback/anchor`` beside a folder's journals, the ``feedback_tail`` row in PostgreSQL) is
rewritten at every append with the new record's seq and hash; a log that ends before the record it
names, or on another record, fails. A record after the anchored one is an append cut short between
its two writes (or one added by hand): it is counted as unanchored, not a failure. A log written
before anchors has none: that is said, never required.

A line that holds no record is reported, not skipped in silence: inside the log, where the records
before and after it still link, it lost no record (a write cut short, then the next append began a
new line); anywhere else the chain breaks at the record after it. After the last record, a whole line
that holds none fails a log without an anchor (a last record may have turned unreadable); a line cut
short at the very end is a write interrupted, and with an anchor the records it names are all there.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from evidence_loop.traces.feedback.feedback import GENESIS, FeedbackRecord, LogRead
from evidence_loop.traces.records.hashing import record_hash


@dataclass(frozen=True, slots=True)
class ChainCheck:
    """The verdict on a log: ok, or the first record (by seq) that fails, and why."""

    ok: bool
    records: int
    first_bad_seq: int | None = None
    reason: str | None = None
    anchored: int | None = None  # the seq the tail anchor names (None: no anchor)
    unanchored: int = 0  # records after the anchored one
    notes: tuple[str, ...] = ()

    def summary(self) -> str:
        """One line for a person: whether the chain holds, and what its end rests on."""
        if not self.ok:
            return f"the feedback log does not verify: {self.reason}"
        if self.records == 0 and self.anchored is None:
            return "the feedback log is empty"
        if self.anchored is None:
            tail = (
                "its tail is not anchored (a log written before anchors: a last record dropped goes unseen)"
            )
        else:
            tail = f"its tail is anchored at record {self.anchored}"
            if self.unanchored:
                tail += f" ({self.unanchored} record(s) after it not anchored: an append cut short)"
        notes = "".join(f"; {note}" for note in self.notes)
        return f"the feedback chain verifies over {self.records} records; {tail}{notes}"


def check_chain(records: Sequence[FeedbackRecord]) -> ChainCheck:
    """Whether bare records are whole: seq 1, 2, 3...; each record's hash its own; each ``prev`` the
    hash of the record before it."""
    return check_log(LogRead(list(records), [f"seq {r.seq}" for r in records], [None] * len(records)))


def check_log(read: LogRead, first: int = 0) -> ChainCheck:
    """The verdict on a log read back (see the module docstring); from ``first`` (an index of
    ``read.records``) on, the part before it trusted as it claims to end."""
    count = len(read.records)
    problem = _first_break(read, first)
    if problem is not None:
        return ChainCheck(False, count, problem[0], problem[1])
    problem = _tail_problem(read)
    if problem is not None:
        return ChainCheck(False, count, problem[0], problem[1])
    anchored = read.anchor.seq if read.anchor is not None else None
    last = read.records[-1].seq if read.records else 0
    notes = tuple(
        f"{line.where} holds no record; the chain continues across it (a write cut short: no record lost)"
        for line in read.unreadable
    )
    return ChainCheck(True, count, anchored=anchored, unanchored=last - (anchored or last), notes=notes)


def _first_break(read: LogRead, first: int) -> tuple[int, str] | None:
    """The seq and reason of the first record from ``first`` on that does not hash, link or sit in its
    day (the record before ``first`` is taken at its word: its seq and its stored hash)."""
    start = read.records[first - 1] if 0 < first <= len(read.records) else None
    prev, n = (start.hash, start.seq) if start is not None else (GENESIS, 0)
    placed = zip(read.records[first:], read.places[first:], read.days[first:], strict=True)
    for index, (record, place, day) in enumerate(placed, first):
        n += 1
        before = "".join(f"; {u.where} holds no record" for u in read.unreadable if u.after == index)
        if record.seq != n:
            return n, f"record {n} is missing (found seq {record.seq} at {place}{before})"
        if record.hash != record_hash(record.model_dump()):
            return n, f"record {n} was changed after it was written ({place})"
        if record.prev != prev:
            return n, f"record {n} does not follow record {n - 1} ({place}{before})"
        if day is not None and record.created_at[:10] != day:
            return n, f"record {n} was posted on {record.created_at[:10]} but is filed under {day} ({place})"
        prev = record.hash
    return None


def _tail_problem(read: LogRead) -> tuple[int, str] | None:
    """Why the log's end is not the one its anchor names, or a last line that turned unreadable."""
    count = len(read.records)
    last = read.records[-1].seq if read.records else 0  # the chain was checked: seqs run up to it
    anchor = read.anchor
    if anchor is not None and anchor.seq < 1:
        return last + 1, "the log's tail anchor cannot be read: where the log ended is unknown"
    if anchor is not None and anchor.seq > last:
        return anchor.seq, (
            f"record {anchor.seq}, the last one the log's tail anchor names, is gone: the log ends at "
            f"record {last} (records were removed from its end)"
        )
    if anchor is not None and read.records[count - 1 - (last - anchor.seq)].hash != anchor.hash:
        return anchor.seq, f"record {anchor.seq} is not the record the log's tail anchor names"
    trailing = [u for u in read.unreadable if u.after == count and not u.cut_short]
    if trailing and anchor is None:  # with an anchor, the records it covers are all there
        return last + 1, f"{trailing[0].where}, after record {last}, holds no record (one turned unreadable)"
    return None
