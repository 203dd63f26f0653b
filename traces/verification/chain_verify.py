"""Verifying the folder store's run chain (``traces.journal.run_chain``): no run removed whole, no end cut
off.

    verify_chain(root, days)   (name, verdict) of each break, oldest day first, then one row named
                               ``run chain`` that sums up what was chained and anchored

What each break says:

- a frame whose recorded link (``prev``) is not how the frame now before it in its journal ends (or
  that is now its journal's first): a run before it was removed, or frames were moved;
- an anchor whose run is no longer in its journal, or ends on another hash: runs were removed from
  the journal's end; an anchor naming a journal, or a day, that is gone (a day older than every day
  kept is not: retention removes the oldest days);
- a run of a writer's own files that follows a run no longer there.

Reading costs the manifests and each journal's frame lines (a seek over each frame's records); a frame
is read only where no manifest line says how it ended. What no link or anchor covers is counted, not
failed: journals and days written before the chain, and the runs after a journal's last anchor.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from evidence_loop.traces.journal.journal import journal_files
from evidence_loop.traces.journal.manifest import MANIFEST_NAME, FinishedRun, finished_runs
from evidence_loop.traces.journal.run_chain import Anchor, Link, Span, chain_entries, frame_last, frame_spans
from evidence_loop.traces.verification.verify import VerifyResult

CHAIN = "run chain"


@dataclass(slots=True)
class _Tally:
    """What the chain covered, for the summary row."""

    days: int = 0
    chained: int = 0  # journals (and writers of own files) with links
    anchored: int = 0  # ... of them anchored at their last run
    open_ended: int = 0  # ... of them with runs after their last anchor, or none
    before: int = 0  # journals and days written before the chain
    breaks: int = 0


@dataclass(frozen=True, slots=True)
class _Day:
    """A day's manifest as the chain reads it."""

    runs: list[FinishedRun]
    links: dict[tuple[str, str], Link]
    anchors: list[Anchor]


def verify_chain(root: Path, days: Sequence[Path]) -> Iterator[tuple[str, VerifyResult]]:
    """The chain's breaks over ``days`` (oldest first), then the summary row (see the module)."""
    names = [day.relative_to(root).as_posix() for day in days]
    read = {name: _read(day) for name, day in zip(names, days, strict=True)}
    elsewhere: dict[str, list[Anchor]] = defaultdict(list)
    for entries in read.values():
        for anchor in entries.anchors:
            if anchor.day is not None:
                elsewhere[anchor.day].append(anchor)
    tally = _Tally()
    for name, day in zip(names, days, strict=True):
        own = [a for a in read[name].anchors if a.day is None]
        yield from _day(day, name, read[name], own + elsewhere.pop(name, []), tally)
    for name, anchors in sorted(elsewhere.items()):
        if names and name > names[0]:  # older than every day kept: removed by retention
            tally.breaks += 1
            yield (
                name,
                _broken(
                    f"the day {name} is gone, though {anchors[0].writer} of it was anchored ({anchors[0].by})"
                ),
            )
    yield CHAIN, VerifyResult(tally.breaks == 0, True, None, _summary(tally))


def _read(day: Path) -> _Day:
    try:
        content = (day / MANIFEST_NAME).read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        content = b""
    whole = content[: content.rfind(b"\n") + 1]
    links, anchors = chain_entries(whole)
    return _Day(finished_runs(whole), links, anchors)


def _day(
    day: Path, name: str, entries: _Day, anchors: list[Anchor], tally: _Tally
) -> Iterator[tuple[str, VerifyResult]]:
    """The breaks of one day: each journal's links and anchors, each writer's own files."""
    tally.days += 1
    by_writer: dict[str, list[Anchor]] = defaultdict(list)
    for anchor in anchors:
        by_writer[anchor.writer].append(anchor)
    lines = {(run.journal, run.run_id): run for run in entries.runs if run.journal is not None}
    for journal in journal_files(day):
        found = list(_journal(journal, lines, entries.links, by_writer.pop(journal.name, []), tally))
        tally.breaks += len(found)
        yield from found
    files = [run for run in entries.runs if run.journal is None]
    for writer, runs in _by_writer(files).items():
        found = list(_files(writer, runs, by_writer.pop(writer, []), tally))
        tally.breaks += len(found)
        yield from found
    if any(run.prev is None for run in files):
        tally.before += 1  # runs' own files of the layout before the chain
    for writer, gone in sorted(by_writer.items()):
        tally.breaks += 1
        yield (
            writer,
            _broken(f"{writer} of {name}, anchored ({gone[0].by}), is gone"),
        )


def _journal(
    journal: Path,
    lines: dict[tuple[str, str], FinishedRun],
    links: dict[tuple[str, str], Link],
    anchors: list[Anchor],
    tally: _Tally,
) -> Iterator[tuple[str, VerifyResult]]:
    """The breaks of one journal: each frame's link against the frame before it, each anchor."""
    spans = [span for span in frame_spans(journal) if not span.torn]
    lasts: dict[int, str | None] = {}

    def last(i: int) -> str | None:  # how frame i ends: its manifest line says, else its records
        if i not in lasts:
            line, link = (
                lines.get((journal.name, spans[i].run_id)),
                links.get((journal.name, spans[i].run_id)),
            )
            lasts[i] = line.final_hash if line else link.last if link else frame_last(journal, spans[i])
        return lasts[i]

    chained = False
    for i, span in enumerate(spans):
        line, link = lines.get((journal.name, span.run_id)), links.get((journal.name, span.run_id))
        prev = line.prev if line is not None else link.prev if link is not None else None
        if prev is None:
            continue
        chained = True
        before = last(i - 1) if i else ""
        if before is not None and prev != before:
            yield span.run_id, _broken(_moved(journal.name, prev, spans[i - 1] if i else None, before))
    reached = -1
    for anchor in anchors:
        at = next((i for i in range(len(spans) - 1, -1, -1) if last(i) == anchor.last), None)
        if at is None:
            yield journal.name, _broken(_cut(journal.name, anchor))
            continue
        reached = max(reached, at)
    _count(tally, chained, reached, len(spans))  # a journal from before the chain: its anchors still checked


def _files(
    writer: str, runs: list[FinishedRun], anchors: list[Anchor], tally: _Tally
) -> Iterator[tuple[str, VerifyResult]]:
    """The breaks of one writer's own files of a day: each run follows one still there."""
    ends = {run.final_hash: run for run in runs}
    for run in runs:
        if run.prev and run.prev not in ends:
            reason = f"the run before it among {writer}'s runs is gone (it ended on hash {run.prev[:12]})"
            yield run.run_id, _broken(reason)
    reached = -1
    for anchor in anchors:
        kept = next((i for i, run in enumerate(runs) if run.final_hash == anchor.last), None)
        if kept is None:
            yield writer, _broken(_cut(writer, anchor))
            continue
        reached = max(reached, kept)
    _count(tally, True, reached, len(runs))


def _by_writer(runs: list[FinishedRun]) -> dict[str, list[FinishedRun]]:
    grouped: dict[str, list[FinishedRun]] = defaultdict(list)
    for run in runs:
        if run.writer is not None and run.prev is not None:
            grouped[run.writer].append(run)
    return grouped


def _count(tally: _Tally, chained: bool, reached: int, runs: int) -> None:
    if not chained:
        tally.before += 1
        return
    tally.chained += 1
    if reached == runs - 1:
        tally.anchored += 1
    else:
        tally.open_ended += 1


def _moved(journal: str, prev: str, before: Span | None, ends: str) -> str:
    now = (
        f"the frame before it ({before.run_id}) ends on {ends[:12]}"
        if before
        else "it is the journal's first"
    )
    return (
        f"{CHAIN}: a run before it in {journal} is gone or was moved: it follows one that ended on "
        f"hash {prev[:12]}, but {now}"
    )


def _cut(writer: str, anchor: Anchor) -> str:
    return (
        f"{CHAIN}: {writer} was anchored ({anchor.by}) at a run ending on hash {anchor.last[:12]}; "
        "no run of it ends there now: runs were removed from its end"
    )


def _broken(reason: str) -> VerifyResult:
    text = reason if reason.startswith(CHAIN) else f"{CHAIN}: {reason}"
    return VerifyResult(ok=False, complete=False, first_bad_seq=None, reason=text)


def _summary(tally: _Tally) -> str:
    parts = [_counted(tally.days, "day")]
    if tally.chained:
        parts.append(f"{tally.chained} journals or writers chained, {tally.anchored} anchored at their end")
    if tally.open_ended:
        parts.append(
            f"{tally.open_ended} whose newest runs are not anchored yet (until their writer closes them "
            "or the next day begins)"
        )
    if tally.before:
        parts.append(f"{tally.before} written before the chain (no links: a run removed whole goes unseen)")
    verdict = f"FAILED - {_counted(tally.breaks, 'break')}" if tally.breaks else "holds"
    return f"{CHAIN} {verdict}: " + "; ".join(parts)


def _counted(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("s" if n != 1 else "")
