"""Verifying a day folder of the folder store: its runs' own files and its journals' frames, each
against the end its day manifest (or the index) recorded.

    verify_day(day, ends, texts)   (run id, verdict) of every run of the day, then of every run the
                                   manifest records as finished that is nowhere to be found
    Ends                           how each run of the day ended, as recorded apart from its trace

A frame whose compressed records do not read back is *damaged* (a failure of its run alone). A frame
cut short at a journal's end whose run is not recorded as finished was *interrupted*: the
writing process stopped mid-write, before the run returned its answer, which is no failure. Bytes
between frames that hold none are *damage*; a frame or file that does not end where its run's
recorded end says is *truncated* or *rewritten* (``traces.verification.verify``).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from evidence_loop.tools.errors import NotFoundError, TraceError, UnwrittenTraceError
from evidence_loop.traces.journal.journal import Damage, Frame, journal_files, scan_file
from evidence_loop.traces.journal.manifest import FinishedRun
from evidence_loop.traces.records.blobs import Documents, with_documents
from evidence_loop.traces.records.reader import parse_trace, read_trace
from evidence_loop.traces.records.schema import Trace, TraceSummary, parse_utc
from evidence_loop.traces.verification.citations import TextSource, with_citations
from evidence_loop.traces.verification.verify import HEADER_SEQ, VerifyResult, not_written, verify

INTERRUPTED: Final = (
    "interrupted: the journal ends inside this run's frame (a stop mid-write, before the run returned)"
)


@dataclass(frozen=True, slots=True)
class Ends:
    """How the runs of a day ended: the day manifest, and a lookup of the index for a trace that the
    manifest does not name (it says whether the index entry describes that very trace)."""

    manifest: dict[str, FinishedRun]
    indexed: Callable[[Trace], FinishedRun | None]
    final_hash: Callable[[str], str | None]

    def of(self, trace: Trace) -> FinishedRun | None:
        return self.manifest.get(trace.header.run_id) or self.indexed(trace)

    def final_of(self, run_id: str) -> str | None:
        finished = self.manifest.get(run_id)
        return finished.final_hash if finished is not None else self.final_hash(run_id)


def ends_of(root: Path, manifest: dict[str, FinishedRun], indexed: Mapping[str, TraceSummary]) -> Ends:
    """How the runs of a store under ``root`` ended: the day manifest, else the index entry that
    describes that very trace (a golden trace outside the store may reuse a run id)."""

    def from_index(trace: Trace) -> FinishedRun | None:
        summary = indexed.get(trace.header.run_id)
        if summary is None or summary.final_hash is None or trace.path is None:
            return None
        if trace.path.resolve() != root.resolve() / summary.path.split("#", 1)[0]:
            return None  # (a journal run's path is its journal's, then # and its frame's offset)
        return FinishedRun(summary.run_id, summary.final_hash, summary.events)

    def final_hash(run_id: str) -> str | None:
        summary = indexed.get(run_id)
        return summary.final_hash if summary is not None else None

    return Ends(manifest, from_index, final_hash)


def against(trace: Trace, finished: FinishedRun | None, day: str | None = None) -> VerifyResult:
    """The chain of ``trace``, that it ends where its run finished if that is known, and, kept under
    the UTC ``day`` (YYYY-MM-DD: its day folder's, its row's), that this is the day the run began (a
    run copied or moved to another day is not where its header says)."""
    if finished is None:
        verdict = verify(trace)
    else:
        verdict = verify(trace, expected_hash=finished.final_hash, expected_events=finished.events)
    began = parse_utc(trace.header.created_at).date().isoformat()
    if verdict.ok and day is not None and day != began:
        reason = f"misfiled: the run began on {began} but is kept under {day} (moved or copied)"
        return VerifyResult(False, False, HEADER_SEQ, reason, verdict.events, verdict.final_hash)
    return verdict


def day_of(folder: Path) -> str:
    """The UTC day (YYYY-MM-DD) of a day folder (``.../YYYY/MM/DD``)."""
    return "-".join(folder.parts[-3:])


def by_day(indexed: Iterable[TraceSummary]) -> dict[Path, dict[str, FinishedRun]]:
    """The runs an index records as finished, by their day folder (relative to the store's root)."""
    days: dict[Path, dict[str, FinishedRun]] = {}
    for s in indexed:
        if s.final_hash is not None:
            folder = Path(s.path.split("#", 1)[0]).parent
            days.setdefault(folder, {})[s.run_id] = FinishedRun(s.run_id, s.final_hash, s.events)
    return days


def unwritten(reason: str, final_hash: str | None) -> VerifyResult:
    """A trace with no complete header: a run never recorded (no failure), unless it is recorded as
    finished, when its trace was cut to nothing."""
    if final_hash is None:
        return not_written(reason)
    return VerifyResult(
        False,
        False,
        HEADER_SEQ,
        f"truncated: the run finished with hash {final_hash} but its file holds no complete header",
    )


def verify_day(
    day: Path,
    ends: Ends,
    texts: TextSource | None,
    documents: Documents | None = None,
    listed: Mapping[str, FinishedRun] | None = None,
) -> Iterator[tuple[str, VerifyResult]]:
    """(run id, verdict) of each run's own file, each journal frame, each damaged stretch (named
    ``journal@offset``) and each run the manifest, or the index (``listed``: its runs of this day),
    records as finished that is in none of them."""
    seen: set[str] = set()
    with os.scandir(day) as entries:
        names = sorted(e.name for e in entries if e.name.endswith(".jsonl") and e.is_file())
    for name in names:
        run = name.removesuffix(".jsonl")
        seen.add(run)
        try:
            trace = _with(read_trace(day / name), documents)
        except NotFoundError:
            continue  # removed since the scan (a prune)
        except UnwrittenTraceError as exc:
            yield run, unwritten(str(exc), ends.final_of(run))
            continue
        except TraceError as exc:
            yield run, VerifyResult(False, False, HEADER_SEQ, str(exc))
            continue
        yield run, with_citations(against(trace, ends.of(trace), day_of(day)), trace, texts)
    for journal in journal_files(day):
        for item in scan_file(journal):
            if isinstance(item, Damage):
                yield f"{journal.name}@{item.start}", _damaged(journal, item)
                continue
            seen.add(item.run_id)
            run = item.run_id or f"{journal.name}@{item.offset}"
            yield run, _frame_verdict(journal, item, ends, texts, documents)
    for run in sorted(set(ends.manifest) - seen):
        yield run, _gone(ends.manifest[run])
    for run in sorted(set(listed or {}) - seen - set(ends.manifest)):  # its manifest line gone too
        yield run, _gone((listed or {})[run], "the index records it as finished")


def _frame_verdict(
    journal: Path, frame: Frame, ends: Ends, texts: TextSource | None, documents: Documents | None
) -> VerifyResult:
    """The verdict on one frame: its chain, against the end its run recorded (see the module
    docstring for a frame cut short)."""
    if frame.error is not None:  # compressed records that do not read back: that run fails, alone
        return VerifyResult(False, False, HEADER_SEQ, frame.error)
    try:
        trace = _with(parse_trace(frame.records, path=journal), documents)
    except UnwrittenTraceError as exc:
        return unwritten(INTERRUPTED if frame.torn else str(exc), ends.final_of(frame.run_id))
    except TraceError as exc:
        return VerifyResult(False, False, HEADER_SEQ, str(exc))
    verdict = against(trace, ends.of(trace), day_of(journal.parent))
    if frame.torn and verdict.ok:
        return dataclasses.replace(verdict, reason=f"{INTERRUPTED}; {verdict.reason}", written=False)
    return with_citations(verdict, trace, texts)


def _with(trace: Trace, documents: Documents | None) -> Trace:
    """``trace`` with the documents its header names, when read from a store that keeps them."""
    return trace if documents is None else with_documents(trace, documents)


def _damaged(journal: Path, damage: Damage) -> VerifyResult:
    reason = (
        f"damaged: bytes {damage.start}-{damage.end} of {journal.name} hold no frame "
        "(changed or inserted bytes)"
    )
    return VerifyResult(ok=False, complete=False, first_bad_seq=HEADER_SEQ, reason=reason)


def _gone(run: FinishedRun, said: str = "the run finished") -> VerifyResult:
    reason = f"missing: {said} with hash {run.final_hash} at event {run.events}; its file is gone"
    return VerifyResult(ok=False, complete=False, first_bad_seq=HEADER_SEQ, reason=reason)
