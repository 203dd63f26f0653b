"""Window arithmetic over one parsed document version: the mechanism, no decisions.

A window is a set of unit ordinals of ONE document version. It is usually one contiguous run,
plus anchors pulled in from above (a table's header row, a list's intro, a section's scope
sentence). Every move here stays inside the document version it started in; which move to make
and when to stop is decided in ``policies``.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from evidence_loop.tools.types import Hit, ParsedDocument, Unit


@dataclass(frozen=True, slots=True)
class Step:
    """One move that grew a window, with the completeness score around it."""

    move: str
    unit_kind: str
    reason: str
    ordinals: tuple[int, ...]
    score_before: float
    score_after: float


@dataclass(frozen=True, slots=True)
class Window:
    """Sorted, distinct unit ordinals of one document version, its seed hits and its history."""

    doc_id: str
    version: str
    ordinals: tuple[int, ...]
    seeds: tuple[Hit, ...] = ()
    steps: tuple[Step, ...] = ()

    @property
    def first(self) -> int:
        return self.ordinals[0]

    @property
    def last(self) -> int:
        return self.ordinals[-1]

    @property
    def key(self) -> tuple[str, str]:
        return (self.doc_id, self.version)


def seed_window(hit: Hit) -> Window:
    """The window of a single recall hit."""
    return Window(hit.unit.doc_id, hit.unit.version, (hit.unit.ordinal,), (hit,))


def seeds_of(window: Window) -> Window:
    """The window shrunk back to its seed hits (no growth steps)."""
    ordinals = tuple(sorted({h.unit.ordinal for h in window.seeds})) or window.ordinals
    return replace(window, ordinals=ordinals, steps=())


def with_units(window: Window, ordinals: Iterable[int], step: Step | None = None) -> Window:
    """The window grown by ``ordinals`` (duplicates ignored), with the step appended."""
    merged = tuple(sorted(set(window.ordinals).union(ordinals)))
    steps = (*window.steps, step) if step is not None else window.steps
    return replace(window, ordinals=merged, steps=steps)


def without_units(window: Window, ordinals: Iterable[int]) -> Window:
    """The window less ``ordinals`` (its seeds and steps kept); it may be left with a gap."""
    dropped = set(ordinals)
    return replace(window, ordinals=tuple(o for o in window.ordinals if o not in dropped))


def runs(window: Window) -> list[tuple[int, int]]:
    """Maximal runs of consecutive ordinals as (first, last) pairs, in document order."""
    out: list[tuple[int, int]] = []
    for ordinal in window.ordinals:
        if out and ordinal == out[-1][1] + 1:
            out[-1] = (out[-1][0], ordinal)
        else:
            out.append((ordinal, ordinal))
    return out


def spans(window: Window, doc: ParsedDocument) -> list[tuple[int, int]]:
    """Character spans ``(start, end)`` of the window's runs in the document text."""
    return [(doc.units[a].start, doc.units[b].end) for a, b in runs(window)]


def char_count(window: Window, doc: ParsedDocument) -> int:
    """Characters of document text the window hands back."""
    return sum(end - start for start, end in spans(window, doc))


def units_of(window: Window, doc: ParsedDocument) -> list[Unit]:
    """The window's units in document order."""
    return [doc.units[o] for o in window.ordinals]


def neighbour(doc: ParsedDocument, ordinal: int, direction: int) -> Unit | None:
    """The unit next to ``ordinal`` (direction -1 or +1) in the same section, or None at a boundary."""
    target = ordinal + direction
    if not 0 <= target < len(doc.units):
        return None
    here, there = doc.units[ordinal], doc.units[target]
    # a section's heading unit belongs to the section it opens, so it is inside for leftward moves
    return there if there.section_id == here.section_id else None


def units_within(doc: ParsedDocument, start: int, end: int) -> list[Unit]:
    """The units lying wholly inside ``[start, end)``, found by bisection (units are in text order)."""
    first = bisect_left(doc.units, start, key=lambda u: u.start)
    last = bisect_right(doc.units, end, key=lambda u: u.end)
    return list(doc.units[first:last])


def section_ordinals(doc: ParsedDocument, section_id: int) -> tuple[int, ...]:
    """Ordinals of every unit inside a section, its subsections included (found by bisection: the
    loop asks this for every window it grows, and a long manual has thousands of units)."""
    section = doc.sections[section_id]
    return tuple(u.ordinal for u in units_within(doc, section.start, section.end))


# Per document version (a version replaced in place has new text): each section's own units.
_OWN: dict[tuple[str, str, int], dict[int, tuple[int, ...]]] = {}
_MAX_DOCUMENTS = 20_000


def own_ordinals(doc: ParsedDocument, section_id: int) -> tuple[int, ...]:
    """Ordinals of the units a section holds itself (not its subsections'), in order: those of
    ``section_ordinals`` whose section it is. Indexed once per document version: a long manual's
    top section holds every unit, and the loop asks for the intro of every section above a window."""
    key = (doc.doc_id, doc.version, hash(doc.text))  # a str caches its hash: the key costs nothing
    index = _OWN.get(key)
    if index is None:
        if len(_OWN) >= _MAX_DOCUMENTS:
            _OWN.clear()
        index = _OWN[key] = _own_index(doc)
    return index.get(section_id, ())


def _own_index(doc: ParsedDocument) -> dict[int, tuple[int, ...]]:
    by_section: dict[int, list[int]] = {}
    for unit in doc.units:
        section = doc.sections[unit.section_id]
        if section.start <= unit.start and unit.end <= section.end:  # as units_within finds them
            by_section.setdefault(unit.section_id, []).append(unit.ordinal)
    return {section_id: tuple(ordinals) for section_id, ordinals in by_section.items()}


def section_chars(doc: ParsedDocument, section_id: int) -> int:
    """Characters from the section's first unit to its last."""
    ordinals = section_ordinals(doc, section_id)
    if not ordinals:
        return 0
    return doc.units[ordinals[-1]].end - doc.units[ordinals[0]].start


def section_path(doc: ParsedDocument, section_id: int) -> tuple[str, ...]:
    """Heading titles from the top of the document down to the section."""
    return doc.sections[section_id].path


def overlaps_or_touches(a: Window, b: Window) -> bool:
    """Two windows of one document version whose ordinal ranges overlap or are adjacent."""
    return a.key == b.key and a.first <= b.last + 1 and b.first <= a.last + 1


def mergeable(a: Window, b: Window, doc: ParsedDocument) -> bool:
    """Overlapping windows of one document version merge; touching ones only within one section."""
    if a.key != b.key or not overlaps_or_touches(a, b):
        return False
    if a.first <= b.last and b.first <= a.last:
        return True
    left, right = (a, b) if a.last < b.first else (b, a)
    return doc.units[left.last].section_id == doc.units[right.first].section_id


def merge_pair(a: Window, b: Window) -> Window:
    """One window holding both, seeds and steps kept (a's first)."""
    seeds = tuple({(h.unit.ordinal): h for h in (*a.seeds, *b.seeds)}.values())
    merged = with_units(a, b.ordinals)
    return replace(merged, seeds=seeds, steps=(*a.steps, *b.steps))


def merge_windows(windows: Sequence[Window]) -> list[Window]:
    """Merge windows of one document version that overlap or touch, keeping the input order of the first."""
    out: list[Window] = []
    for window in windows:
        for i, kept in enumerate(out):
            if overlaps_or_touches(kept, window):
                out[i] = merge_pair(kept, window)
                break
        else:
            out.append(window)
    if len(out) < len(windows):
        return merge_windows(out)
    return out
