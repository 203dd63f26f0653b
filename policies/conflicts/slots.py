"""Conflict candidates by the question's identifier: two sources giving it different values, in any words.

The aligned scan (``policies.conflicts.candidates``) finds two passages that say the same thing but for one
value. It cannot see a disagreement worded two ways: a table row "LM-X200 | 1 year" and a sentence
"The LM-X200 tablet is covered for 99 years" share no statement to align. When the question names
a code (a model or part number, a clause id; ``policies.evidence.slot_scope``), the slot it asks about is the
code's value of the asked kind, and a statement (a sentence, or a table row read with its header)
that names the code and a term of the question states one. Two sources are a candidate when, for
one kind and one unit, they share no value: "1 year" against "99 years" ("1年" and "one year" are
one value). The signal stays narrow, because a false conflict costs an answer:

- a statement gives a value only when it names the code and a term of the question, and states a
  single value of that kind and unit ("3个军种10个国家" says two things, not one count);
- both statements share a term of the question besides the code: they speak of one attribute;
- values in another unit are another attribute (a charging time in hours is no warranty in years);
  dates are left to alignment (a month and a day of that month are no disagreement);
- values the question names itself are its scope; one source stating several values, two scopes.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations

from evidence_loop.policies.conflicts.align import Text
from evidence_loop.policies.conflicts.spans import terms_in
from evidence_loop.policies.lexicon import CN_NUMERAL_CHARS, EN_NUMBER_WORDS
from evidence_loop.policies.question.analysis import Question
from evidence_loop.policies.question.slots import compact, extract_slots, slot_in_text
from evidence_loop.policies.question.values import ValueKind, atoms, statements, to_int
from evidence_loop.policies.types import ConflictCandidate, EvidenceView, Slot, SlotKind, ValueMention

VALUE_KINDS: dict[SlotKind, ValueKind] = {
    "duration": "duration",
    "amount": "amount",
    "percentage": "percentage",
    "date": "date",
    "count": "count",
}
# The number in a spelling of a value: digits, Chinese numerals, a leading English word ("oneyear").
_NUMBER_RE = re.compile(rf"[0-9]+(?:[.,][0-9]+)*|[{CN_NUMERAL_CHARS}]+|^(?:{'|'.join(EN_NUMBER_WORDS)})")


# Kinds compared by code; dates are left to alignment.
SLOT_KINDS: frozenset[ValueKind] = frozenset({"duration", "amount", "percentage", "count"})
# A code is one token mixing letters and digits ("LM-X200", "QUOKKA001X"), not a quarter ("Q1") and
# not a name with a number ("iPhone 11", "Season 17"): those are subjects of news, not part numbers.
_CODE_RE = re.compile(r"(?![Qq][1-4]$)(?=.*[A-Za-z])(?=.*[0-9])[A-Za-z0-9][A-Za-z0-9._/-]*")
_TABLE_LINE_RE = re.compile(r"\s*(?:\||</?(?:table|thead|tbody|tr|th|td)\b)", re.IGNORECASE)


slots_in = lru_cache(maxsize=50_000)(extract_slots)  # a statement's values (sentences repeat across runs)


@dataclass(frozen=True, slots=True)
class _Asked:
    """What the question asks: of which codes, which kinds of value, its own values, its other terms."""

    codes: tuple[Slot, ...]
    kinds: frozenset[ValueKind]
    own: frozenset[str]
    subject: frozenset[str]


@dataclass(frozen=True, slots=True)
class _Stated:
    """One value a statement gives for the code: kind, unit in every spelling, forms, question terms."""

    kind: ValueKind
    unit: frozenset[str]
    forms: frozenset[str]
    terms: frozenset[str]
    mention: ValueMention


def unit_of(slot: Slot) -> frozenset[str]:
    """A value's unit in each of its spellings, the number taken out ("1年", "1 year" -> 年, year)."""
    forms = (slot.norm, *slot.alternatives)
    return frozenset(u for u in (_NUMBER_RE.sub("", form).strip(" -") for form in forms) if u)


def value_place(text: str, value: str) -> tuple[int, int] | None:
    """Where a slot's value stands in a statement (its spaces may be any whitespace)."""
    found = re.search(r"\s+".join(map(re.escape, value.split())), text, re.IGNORECASE)
    return found.span() if found else None


def with_headers(text: str) -> Iterator[tuple[int, int, str]]:
    """Each statement's offsets and what it says: a table row is read with its table's header row."""
    header: str | None = None
    for start, end in statements(text):
        statement = text[start:end]
        if not _TABLE_LINE_RE.match(statement):
            header = None
        elif header is None and (statement.startswith("|") or "<th" in statement.lower()):
            header = statement
        yield start, end, statement if header in (None, statement) else f"{header}\n{statement}"


def _stated(view: EvidenceView, asked: _Asked) -> list[_Stated]:
    """The values of the asked kinds that the view's statements about an asked code give, one per unit."""
    out: list[_Stated] = []
    for start, end, about in with_headers(view.text):
        text = view.text[start:end]
        terms = terms_in([atom.norm for atom in atoms(about)], asked.subject)
        if not terms or not any(slot_in_text(slot, text) for slot in asked.codes):
            continue
        found = []
        for slot in slots_in(text):
            kind, forms, place = VALUE_KINDS.get(slot.kind), frozenset((slot.norm, *slot.alternatives)), None
            if kind in asked.kinds and not forms & asked.own and counted(slot):
                place = value_place(text, slot.value)
            if kind is not None and place is not None:
                offsets = (view.start + start + place[0], view.start + start + place[1])
                quote = text[place[0] : place[1]]
                mention = ValueMention(
                    view.evidence_id, view.doc_id, view.version, quote, compact(quote), *offsets, quote,
                    context_start=view.start + start, context_end=view.start + end,
                )  # fmt: skip
                found.append(_Stated(kind, unit_of(slot), forms, terms, mention))
        out += [v for v in found if sum(1 for o in found if o.kind == v.kind and o.unit & v.unit) == 1]
    return out


def counted(slot: Slot) -> bool:
    """A value whose number reads as one: "八九十年" (the eighties and nineties) is no number of years."""
    number = _NUMBER_RE.search(slot.norm)
    return number is not None and (number.group()[0].isdigit() or to_int(number.group()) is not None)


def _same_slot(a: _Stated, b: _Stated) -> bool:
    return a.kind == b.kind and bool(a.unit & b.unit)


def _disagreement(left: Sequence[_Stated], right: Sequence[_Stated]) -> tuple[_Stated, _Stated] | None:
    """The first value of ``left`` that ``right`` states for the same attribute, with no value in common."""
    for value in left:
        same = [other for other in right if _same_slot(value, other) and value.terms & other.terms]
        ours = [mine for mine in left if _same_slot(value, mine)]
        theirs = [other for other in right if _same_slot(value, other)]
        if same and not any(mine.forms & other.forms for mine in ours for other in theirs):
            return value, same[0]
    return None


def _asked(question: Question) -> _Asked | None:
    """What the question asks of which code, or None when it names no code or asks for no such value."""
    codes = tuple(s for s in question.identifiers if s.kind == "clause" or _CODE_RE.fullmatch(s.value))
    kinds = question.kinds & SLOT_KINDS
    if not codes or not kinds:
        return None
    own = frozenset(form for s in question.slots if s not in codes for form in (s.norm, *s.alternatives))
    names = [compact(slot.value) for slot in codes]
    subject = frozenset(t for t in question.subject_terms if not any(t in name for name in names))
    return _Asked(codes, kinds, own, subject) if subject else None


def slot_candidates(question: Question, texts: Sequence[Text]) -> Iterator[ConflictCandidate]:
    """Pairs of windows from two sources whose values for the question's code disagree."""
    asked = _asked(question)
    if asked is None:
        return
    stated = {
        text.view.evidence_id: _stated(text.view, asked) for text in texts if text.terms & asked.subject
    }
    for left, right in combinations(texts, 2):
        if (left.view.doc_id, left.view.version) == (right.view.doc_id, right.view.version):
            continue  # one source stating two values states two scopes
        pair = _disagreement(stated.get(left.view.evidence_id, ()), stated.get(right.view.evidence_id, ()))
        if pair is not None:
            label = f"{' / '.join(slot.value for slot in asked.codes)}: {pair[0].kind}"
            yield ConflictCandidate(label, pair[0].kind, pair[0].mention, pair[1].mention)
