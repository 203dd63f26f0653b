"""Conflict candidates by meaning: two statements close to what the question asks, in two documents
(or two versions of one), giving values of the asked kind that differ, whatever their words
(``Policy.conflict_meaning``).

"Once we approve a refund, it lands on your original card within 10 business days" and "Expect the
money back on your card within 5 business days of approval" share few words but one meaning; the
question's e5 vector is close to both. So:

- the kind of value asked is the one the quote code reads (``asked_measure``: "how long" a
  duration, "多少钱" an amount, "how many" a count; a saving asked as an amount may be stated as a
  percentage); not a date: a page's dates are of many events, so "when" is left to the other rules;
- a statement (a unit) states the asked attribute when its cosine with the question, on the
  question's own scale (0 at the corpus mean, 1 at the best readable unit), is at least
  ``Policy.conflict_meaning_closeness``, and it gives one value of the asked kind in one measure (the
  end of a range, a date it applies from and the question's own values are none);
- two such statements in two documents disagree when their values differ once read in one measure
  ("12 months" and "2 years" do, "30 days" and "one month" do not), and no value of that measure is
  common to their two windows (two windows agreeing on one value state other things with the rest).

The screen (``policies.conflicts.screen``: different models, places, plans, groups, row labels,
numbered things; one document's list or table; a dated statement) then sets pairs aside, with their
reasons, and the rules or the LLM decide the rest. Without unit vectors (lexical recall) nothing is
found here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import TYPE_CHECKING

from evidence_loop.policies.conflicts.align import Text
from evidence_loop.policies.conflicts.reads import ASKS_BACK_RE, counted_things, range_end
from evidence_loop.policies.conflicts.screen import headings, unwritten
from evidence_loop.policies.conflicts.settle import dated_from
from evidence_loop.policies.conflicts.slots import VALUE_KINDS, counted, slots_in, unit_of, value_place
from evidence_loop.policies.conflicts.spans import terms_in
from evidence_loop.policies.lexicon import (
    ATTRIBUTE_GLUE_WORDS,
    DURATION_UNIT_MINUTES,
    EN_NUMBER_WORDS,
    WORKDAY_UNITS,
)
from evidence_loop.policies.question.analysis import Question, asked_measure
from evidence_loop.policies.question.scopes import scope_names
from evidence_loop.policies.question.slots import compact
from evidence_loop.policies.question.values import atoms, to_int
from evidence_loop.policies.types import ConflictCandidate, EvidenceView, Slot, ValueMention

if TYPE_CHECKING:
    from evidence_loop.tools.search.dense import UnitCosines

# Dates are left to alignment and the rules of one statement: a page's dates are of many events (a
# news story's own date, a release, a patch), and one close to a question is not one of its answer.
_KINDS = frozenset({"duration", "amount", "count", "percentage"})
_SAME = 0.03  # two sizes this close (a share of the larger) are one value written two ways
_PER_PAIR = 4  # candidates one pair of windows may give
_NUMBER_RE = re.compile(
    rf"[0-9]+(?:[.,][0-9]+)*|^(?:{'|'.join(EN_NUMBER_WORDS)})|[〇零一二两三四五六七八九十百千万]+"
)


@dataclass(frozen=True, slots=True)
class Said:
    """One value a close statement gives: its kind, the measure it is read in, its size there
    (None for a date: its spellings compare), its spellings, the question terms of its statement."""

    kind: str
    measure: str
    size: float | None
    forms: frozenset[str]
    terms: frozenset[str]
    mention: ValueMention
    closeness: float  # its cosine with the question, on the question's scale
    scopes: frozenset[tuple[str, str]]  # the things its page names (kind, key), less the question's words
    unit: tuple[str, str, int]  # (doc_id, version, ordinal) of its statement


@dataclass(frozen=True, slots=True)
class Closeness:
    """How close to the question a statement of the asked attribute is (``Policy.conflict_meaning_*``):
    each side at least ``side``, one of the two at least ``best`` (a disagreement about what is asked
    has a side among what answers it best), the two statements' own vectors' cosine at least
    ``pair``, and two sizes within a factor of ``ratio`` of each other ("10 minutes" and "14 days"
    measure two things)."""

    side: float
    best: float
    pair: float
    ratio: float


def meaning_candidates(
    question: Question, texts: Sequence[Text], closeness: Closeness
) -> Iterator[ConflictCandidate]:
    """Pairs of windows from two documents (or versions) whose statements close to the question give
    different values of the asked kind (the module's rules)."""
    kinds = asked_kinds(question.text)
    cosines = question.cosines
    if cosines is None or not kinds:
        return
    asked = frozenset((n.kind, n.key) for n in scope_names(question.text))
    own = frozenset(form for s in question.slots for form in (s.norm, *s.alternatives))
    subject = question.subject_terms
    said = {
        text.view.evidence_id: said_values(text.view, cosines, closeness.side, kinds, own, subject)
        for text in texts
    }
    top: dict[str, float] = {}
    for value in (v for values in said.values() for v in values):
        top[value.measure] = max(top.get(value.measure, 0.0), value.closeness)
    scan = _Scan(closeness, cosines, asked, top)
    for left, right in combinations([text.view for text in texts], 2):
        if (left.doc_id, left.version) == (right.doc_id, right.version):
            continue  # one document stating two values states two scopes
        yield from _pairs(said[left.evidence_id], said[right.evidence_id], scan)


@dataclass(frozen=True, slots=True)
class _Scan:
    """What a pair is read against: the thresholds, the unit vectors, what the question names, and
    the closest statement's closeness for each measure (the one that answers)."""

    closeness: Closeness
    cosines: UnitCosines
    asked: frozenset[tuple[str, str]]
    top: dict[str, float]


def asked_kinds(text: str) -> frozenset[str]:
    """The value kind the question asks for, as the quote code reads it, when its words name one; an
    amount saved or taken off may be a percentage."""
    measure = asked_measure(text)
    if len(measure) != 1:
        return frozenset()  # "how much" alone, "多少": any number, too loose a reading of meaning
    kinds = frozenset(str(kind) for kind in measure) & _KINDS
    return kinds | {"percentage"} if "amount" in kinds else kinds


def _pairs(ours: Sequence[Said], theirs: Sequence[Said], scan: _Scan) -> Iterator[ConflictCandidate]:
    """The values of two windows that differ in one measure, when none of that measure agrees."""
    given = 0
    for a in ours:
        for b in theirs:
            if a.kind != b.kind or a.measure != b.measure or given >= _PER_PAIR:
                continue
            if not _one_attribute(a, b, scan) or not _mutual(a, b, ours, theirs, scan.cosines):
                continue
            same = [(x, y) for x in ours for y in theirs if x.measure == a.measure and y.measure == a.measure]
            if any(not differ(x, y) for x, y in same):
                continue  # agreeing windows
            given += 1
            label = " ".join(sorted(a.terms & b.terms))
            yield ConflictCandidate(f"{label}: {a.kind}", a.kind, a.mention, b.mention)


def _near(cosines: UnitCosines, view: EvidenceView, ordinal: int) -> float:
    """A unit's cosine with the question on the question's scale (0 when it is not at hand)."""
    cosine = cosines.of(view.doc_id, view.version, ordinal)
    return 0.0 if cosine is None else cosines.similarities.relative(cosine)


def _asked_above(view: EvidenceView, at: int) -> str:
    """The line above a statement when it asks a question (an FAQ's answer is about what it asks)."""
    before = (view.lead + view.text[:at]).rstrip()
    line = before[before.rfind("\n") + 1 :]
    return line if ASKS_BACK_RE.search(line) else ""


def scoped_alone(a: Said, b: Said, asked: frozenset[tuple[str, str]]) -> bool:
    """One side's page names a place, plan, model or group the question does not ask of and the
    other side's page does not name: a rule for that scope beside another rule (returns in the EU
    beside the warranty's own mail-back time)."""
    ours, theirs = a.scopes - asked, b.scopes - asked
    return bool(ours - b.scopes) != bool(theirs - a.scopes)


def _one_attribute(a: Said, b: Said, scan: _Scan) -> bool:
    """Two statements of one attribute: one of them is the closest to the question of its measure
    (the answer) and close enough, their own vectors are close, they share a word of the question
    besides the value's unit, their pages are scoped alike, and their sizes are of one order."""
    near, closeness = max(a.closeness, b.closeness), scan.closeness
    if near < closeness.best or near < scan.top[a.measure] or a.terms.isdisjoint(b.terms):
        return False
    if scoped_alone(a, b, scan.asked):
        return False
    pair = scan.cosines.between(a.unit, b.unit)
    return pair is not None and pair >= closeness.pair and not apart(a, b, closeness.ratio)


def _mutual(a: Said, b: Said, ours: Sequence[Said], theirs: Sequence[Said], cosines: UnitCosines) -> bool:
    """Each is the other's closest statement of that measure in its window: a recycle bin's 15 days
    answers the other page's recycle bin's 7 days, not its plan's 30."""

    def best(one: Said, among: Sequence[Said]) -> Said:
        found = [(cosines.between(one.unit, x.unit) or 0.0, -i, x) for i, x in enumerate(among)]
        return max((f for f in found if f[2].measure == one.measure), key=lambda f: f[:2])[2]

    return best(b, ours) is a and best(a, theirs) is b


def apart(a: Said, b: Said, ratio: float) -> bool:
    """Two sizes too far apart to measure one thing."""
    if a.size is None or b.size is None or min(a.size, b.size) <= 0:
        return False
    return max(a.size, b.size) > ratio * min(a.size, b.size)


def differ(a: Said, b: Said) -> bool:
    if a.size is None or b.size is None:
        return a.forms.isdisjoint(b.forms)
    return abs(a.size - b.size) > _SAME * max(abs(a.size), abs(b.size))


def said_values(
    view: EvidenceView,
    cosines: UnitCosines,
    closeness: float,
    kinds: frozenset[str],
    own: frozenset[str],
    subject: frozenset[str],
) -> list[Said]:
    """The values the view's units close to the question give: one of a kind and measure per unit."""
    out: list[Said] = []
    page = unwritten(headings(view), subject)
    for ordinal, start, end in view.units:
        at = max(start, view.start) - view.start
        above = _asked_above(view, at)  # an FAQ's answer is as close as the question it answers
        near = max(_near(cosines, view, ordinal), _near(cosines, view, ordinal - 1) if above else 0.0)
        if near < closeness:
            continue
        text = view.text[at : min(end, view.end) - view.start]
        found = list(values_in(text, kinds, own, subject))
        said = "\n".join((above, text, *view.section, view.title))
        terms = terms_in([a.norm for a in atoms(said)], subject) - ATTRIBUTE_GLUE_WORDS
        for kind, measure, size, forms, span in found:
            if sum(1 for other in found if other[1] == measure) > 1:
                continue  # several values of one measure: conditions or items, not one value
            unit = text[span[0] : span[1]].lower()
            terms = frozenset(t for t in terms if t not in unit)  # "days" of "7 days" says no attribute
            quote = text[span[0] : span[1]]
            mention = ValueMention(
                view.evidence_id, view.doc_id, view.version, quote, compact(quote),
                view.start + at + span[0], view.start + at + span[1], quote,
                context_start=view.start + at, context_end=view.start + at + len(text),
            )  # fmt: skip
            unit_id = (view.doc_id, view.version, ordinal)
            out.append(Said(kind, measure, size, forms, terms, mention, near, page, unit_id))
    return out


_Value = tuple[str, str, float | None, frozenset[str], tuple[int, int]]


def values_in(
    text: str, kinds: frozenset[str], own: frozenset[str], subject: frozenset[str]
) -> Iterator[_Value]:
    """The values of the asked kinds a statement gives: kind, measure, size, spellings, span."""
    for slot in slots_in(text):
        kind = VALUE_KINDS.get(slot.kind)
        forms = frozenset((slot.norm, *slot.alternatives))
        place = value_place(text, slot.value)
        if (
            kind not in kinds
            or forms & own
            or not counted(slot)
            or place is None
            or range_end(text, place[0])
        ):
            continue
        if dated_from(text, slot):
            continue  # the date a rule applies from is read by the screen, as a supersession
        measure = _measure(str(kind), slot)
        if measure is not None:
            yield str(kind), measure[0], measure[1], forms, place
    if "count" in kinds:
        for read in counted_things(text, subject):
            if not read.forms & own:
                yield "count", "count " + min(read.unit), _number(min(read.forms)), read.forms, read.span


def _measure(kind: str, slot: Slot) -> tuple[str, float | None] | None:
    """The measure a value is read in and its size there: minutes or working days for a duration, the
    currency for an amount, the thing counted for a count; a date by its spellings."""
    if kind == "date":
        return "date", None
    number = _number(slot.norm)
    if number is None:
        return None
    units = unit_of(slot)
    if kind == "duration":
        if units & WORKDAY_UNITS:
            return "working days", number
        minutes = [DURATION_UNIT_MINUTES[u] for u in sorted(units) if u in DURATION_UNIT_MINUTES]
        return ("time", number * minutes[0]) if minutes else None
    if kind == "percentage":
        return "percent", number
    return f"{kind} {' '.join(sorted(units))}", number


def _number(norm: str) -> float | None:
    """The number a value's spelling starts with: digits, an English word or Chinese numerals."""
    found = _NUMBER_RE.search(norm)
    if found is None:
        return None
    word = found.group()
    if word[0].isdigit():
        try:
            return float(word.replace(",", ""))
        except ValueError:
            return None
    value = to_int(word)
    return None if value is None else float(value)
