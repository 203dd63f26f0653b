"""Conflict candidates by the asked attribute: two documents giving what the question asks different
values in different words (``policies.conflicts.slots`` reads a code's values stated with the code).

Alignment (``policies.conflicts.candidates``) only sees one statement written twice. "When you cancel,
we keep your workspace data for 90 days after cancellation" and "Your workspace data is kept for 30
days after cancellation" share no run long enough to align, yet state one attribute of one thing.
The signal stays narrow, because a false conflict costs an answer:

- the question asks for a number of a kind in so many words ("多久" a duration, "多少钱" an amount,
  "how many codes" a count: ``ATTRIBUTE_KIND_CUES``);
- a statement gives a value when it holds a term of the question and states one value of the asked
  kind and unit (the end of a range, "90-105美元", is none); a sentence stating several
  ("满99元包邮，不满99元收取运费10元") is read clause by clause; a table row is read with its header
  row, an FAQ's answer with the question above it;
- it names every value the question names (its scope: "2020年"); its window, headings or title name
  every model number the question names;
- two statements speak of one attribute when they share two terms of the question (one of a question
  of two) and their words are
  alike (two at least and a quarter of them, numbers, units and the glue around a value aside);
- other values on both sides that the other side lacks are other conditions ("满1年不满10年的" /
  "满10年不满20年的"): two scopes, not one disagreement; a date a statement applies from is no
  condition (``policies.conflicts.screen`` reads it as a supersession);
- the two are in two documents, in one unit, with no value in common.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import combinations

from evidence_loop.policies.conflicts.align import Text
from evidence_loop.policies.conflicts.reads import ASKS_BACK_RE, Read, counted_things, range_end
from evidence_loop.policies.conflicts.settle import dated_from
from evidence_loop.policies.conflicts.slots import (
    VALUE_KINDS,
    counted,
    slots_in,
    unit_of,
    value_place,
    with_headers,
)
from evidence_loop.policies.conflicts.spans import terms_in
from evidence_loop.policies.lexicon import (
    ATTRIBUTE_GLUE_WORDS,
    ATTRIBUTE_KIND_CUES,
    UNIT_ATTRIBUTE_WORDS,
)
from evidence_loop.policies.question.analysis import Question
from evidence_loop.policies.question.slots import compact, slot_in_text
from evidence_loop.policies.question.values import atoms
from evidence_loop.policies.types import ConflictCandidate, EvidenceView, Slot, ValueMention
from evidence_loop.tools.tokenize import index_tokens

_CLAUSE_RE = re.compile(r"[^，,；;]+")
_KIND_CUES = {kind: re.compile("|".join(cues), re.IGNORECASE) for kind, cues in ATTRIBUTE_KIND_CUES.items()}
_SIMILAR = 0.25  # the share of their words two statements of one attribute share (Dice)
_SHARED_WORDS = 2  # words two statements share to speak of one attribute
_SHARED_TERMS = 2  # ... of them the question's
_NAMING_UNIT_RE = re.compile("|".join(UNIT_ATTRIBUTE_WORDS), re.IGNORECASE)
_ABOVE_CHARS = 200  # an FAQ question this far above a window, in its section, is the one it answers


@dataclass(frozen=True, slots=True)
class _Asked:
    """What the question asks: the kinds of value, its own values, its terms."""

    kinds: frozenset[str]
    own: tuple[Slot, ...]
    own_forms: frozenset[str]
    terms: frozenset[str]
    codes: tuple[Slot, ...] = ()  # the model numbers it names, each a term too ("D50")


@dataclass(frozen=True, slots=True)
class _Context:
    """What a window's statements are about beyond their own words: question terms its page names,
    and the FAQ question just above it."""

    terms: frozenset[str]
    above: str


@dataclass(frozen=True, slots=True)
class _Value:
    """One value a statement gives: kind, unit in every spelling, forms, the question terms and words
    of what it says, the statement's other values, and where it stands."""

    kind: str
    unit: frozenset[str]
    forms: frozenset[str]
    terms: frozenset[str]
    words: frozenset[str]
    others: frozenset[str]
    mention: ValueMention


def attribute_candidates(question: Question, texts: Sequence[Text]) -> Iterator[ConflictCandidate]:
    """Pairs of windows from two documents whose statements give the asked attribute values of one
    kind and unit with none in common (the module's rules)."""
    kinds = asked_kinds(question.text)
    if not kinds:
        return
    forms = frozenset(form for s in question.slots for form in (s.norm, *s.alternatives))
    codes = question.identifiers
    own = tuple(slot for slot in question.slots if slot not in codes)
    asked = _Asked(kinds, own, forms, question.subject_terms, tuple(codes))
    need = min(_SHARED_TERMS, (len(question.subject_terms) + 1) // 2)  # one of a two-word question
    named = frozenset(code.norm for code in codes) & question.subject_terms  # on both sides' pages
    stated = {
        text.view.evidence_id: _values(text.view, asked, _context(text.view, texts, asked, named))
        for text in texts
        if _read_at_all(text, asked) and _about_codes(text.view, codes)
    }
    for left, right in combinations(texts, 2):
        if left.view.doc_id == right.view.doc_id:
            continue  # one document stating two values states two scopes
        ours, theirs = stated.get(left.view.evidence_id, ()), stated.get(right.view.evidence_id, ())
        pair = _disagreement(ours, theirs, need)
        if pair is not None:
            label = " ".join(sorted(pair[0].terms & pair[1].terms))
            yield ConflictCandidate(
                f"{label}: {pair[0].kind}", pair[0].kind, pair[0].mention, pair[1].mention
            )


def _about_codes(view: EvidenceView, codes: Sequence[Slot]) -> bool:
    """The window, its headings or its title name every code the question names (a model number):
    a statement on the H10's page need not repeat "H10"."""
    where = "\n".join((view.text, *view.section, view.title))
    return all(slot_in_text(code, where) for code in codes)


def _context(view: EvidenceView, texts: Sequence[Text], asked: _Asked, named: frozenset[str]) -> _Context:
    """What a window's page says its statements are about: the question terms of its headings, title
    and scope sentence, the model numbers the question names (``_about_codes`` holds them to it), and
    the FAQ question the nearest window above it in its section asks (a unit of its own)."""
    said = "\n".join((*view.section, view.title, view.scope))
    above, nearest = "", _ABOVE_CHARS + 1
    for text in texts:
        other = text.view
        same = (other.doc_id, other.version, other.section) == (view.doc_id, view.version, view.section)
        if same and 0 <= view.start - other.end < nearest:
            nearest = view.start - other.end
            last = [other.text[a:b] for a, b, _ in with_headers(other.text)][-1:]
            above = last[0] if last and ASKS_BACK_RE.search(last[0]) else ""
    return _Context(terms_in([a.norm for a in atoms(said)], asked.terms) | named, above)


def asked_kinds(question: str) -> frozenset[str]:
    """The kinds of number the question asks for in so many words (``ATTRIBUTE_KIND_CUES``): "how long"
    a duration, "多少钱" an amount, "how many codes" a count; none for "what" alone."""
    return frozenset(kind for kind, cue in _KIND_CUES.items() if cue.search(question))


def _statements(text: str, above: str = "") -> Iterator[tuple[int, int, str]]:
    """Each statement's offsets and what it says: a table row with its header row, an FAQ's answer
    with the question above it (``above``: the one a window just above asks)."""
    asked_above = above
    for start, end, about in with_headers(text):
        statement = text[start:end]
        yield start, end, f"{asked_above}\n{about}" if asked_above else about
        asked_above = statement if ASKS_BACK_RE.search(statement) else ""


def _read_at_all(text: Text, asked: _Asked) -> bool:
    """A window holding a question term, a model number it names or a unit naming an attribute."""
    return bool(text.terms or _codes_in(text.view.text, asked) or _NAMING_UNIT_RE.search(text.view.text))


def _codes_in(text: str, asked: _Asked) -> frozenset[str]:
    """The question's model numbers ``text`` names, as terms ("d50")."""
    return frozenset(code.norm for code in asked.codes if slot_in_text(code, text)) & asked.terms


def _line(text: str, start: int, end: int) -> str:
    """The line a statement stands on (a list item says what its sentences are about)."""
    head = text.rfind("\n", 0, start) + 1
    tail = text.find("\n", end)
    return text[head : tail if tail >= 0 else len(text)]


def _values(view: EvidenceView, asked: _Asked, context: _Context) -> list[_Value]:
    """The values of the asked kinds the view's statements about the question give, one per unit
    (clause by clause in a statement that gives several); a statement's terms are those of it, its
    line and its page (``_context``)."""
    out: list[_Value] = []
    for start, end, about in _statements(view.text, context.above):
        text = view.text[start:end]
        own = terms_in([atom.norm for atom in atoms(about)], asked.terms) | _codes_in(about, asked)
        if not (own or _NAMING_UNIT_RE.search(text)) or not all(slot_in_text(s, text) for s in asked.own):
            continue
        line = terms_in([atom.norm for atom in atoms(_line(view.text, start, end))], asked.terms)
        terms = own | line | context.terms
        found = [_stated(view, start, text, asked)]
        if len(found[0]) > 1:  # several values of one kind: read each clause on its own
            found = [_stated(view, start + c.start(), c.group(), asked) for c in _CLAUSE_RE.finditer(text)]
        words = frozenset(index_tokens(about))
        for v in (v for group in found for v in group if _alone(v, group)):
            named = [w for unit in v.unit for w in UNIT_ATTRIBUTE_WORDS.get(unit.lower(), ())]
            also = terms_in(named, asked.terms) if named else frozenset()
            if own or also:
                said = words | frozenset(named)  # the attribute the unit names, in both languages
                out.append(_Value(v.kind, v.unit, v.forms, terms | also, said, v.others, v.mention))
    return out


def _alone(value: _Value, group: Sequence[_Value]) -> bool:
    """The statement (or clause) gives no other value of that kind and unit."""
    return sum(1 for o in group if o.kind == value.kind and o.unit & value.unit) == 1


_CLOCK_RE = re.compile(
    r"(?<![0-9])(?P<a>[01]?[0-9]|2[0-4])[:：](?P<b>[0-5][0-9])\s*(?:–|—|-|~|～|至|到|to)\s*"
    r"(?P<c>[01]?[0-9]|2[0-4])[:：](?P<d>[0-5][0-9])(?![0-9])",
    re.IGNORECASE,
)


def _reads(text: str, asked: _Asked) -> Iterator[Read]:
    """The values of the asked kinds ``text`` gives: the slots it names (``policies.question.slots``),
    opening hours ("9:00–21:00") and counted things the question names ("10 backup codes")."""
    for slot in slots_in(text):
        kind, forms = VALUE_KINDS.get(slot.kind), frozenset((slot.norm, *slot.alternatives))
        if slot.kind == "model" and unit_of(slot) & UNIT_ATTRIBUTE_WORDS.keys():
            kind = "count"  # "内置5200mAh可充电" read as a model number: a measure in a unit
        place = value_place(text, slot.value)
        if kind not in asked.kinds or forms & asked.own_forms or not counted(slot) or place is None:
            continue
        if not range_end(text, place[0]):  # "90-105美元", "1–3个工作日": a range, no value
            yield Read(str(kind), unit_of(slot), forms, place)
    if "hours" in asked.kinds:
        for found in _CLOCK_RE.finditer(text):
            a, b, c, d = found.group("a", "b", "c", "d")
            yield Read("hours", _HOURS, frozenset({f"{int(a):02d}:{b}-{int(c):02d}:{d}"}), found.span())
    if "count" in asked.kinds:
        yield from counted_things(text, asked.terms)


_HOURS = frozenset({"hours"})


def _stated(view: EvidenceView, start: int, text: str, asked: _Asked) -> list[_Value]:
    """The values of the asked kinds ``text`` (at ``start`` in the view) gives, with its other values."""
    values = slots_in(text)
    out = []
    for read in _reads(text, asked):
        at, to = view.start + start + read.span[0], view.start + start + read.span[1]
        quote = text[read.span[0] : read.span[1]]
        mention = ValueMention(
            view.evidence_id, view.doc_id, view.version, quote, compact(quote), at, to, quote,
            context_start=view.start + start, context_end=view.start + start + len(text),
        )  # fmt: skip
        others = frozenset(
            o.norm
            for o in values
            if not {o.norm, *o.alternatives} & read.forms
            and not ({o.norm} & asked.own_forms)
            and not dated_from(text, o)
            and not _inside(text, o.value, read.span)
        )
        out.append(_Value(read.kind, read.unit, read.forms, frozenset(), frozenset(), others, mention))
    return out


def _inside(text: str, value: str, span: tuple[int, int]) -> bool:
    """The slot's value lies within the read value's span (the "2.4" of "2.4 GHz" read as a count)."""
    at = text.find(value)
    return at >= 0 and span[0] <= at and at + len(value) <= span[1]


def _disagreement(left: Sequence[_Value], right: Sequence[_Value], need: int) -> tuple[_Value, _Value] | None:
    """The first value of ``left`` that ``right`` states for the same attribute in the same unit and
    under no other condition, with no value of that unit in common."""
    for value in left:
        same = [other for other in right if _one_attribute(value, other, need)]
        ours = [mine for mine in left if _same_unit(value, mine)]
        theirs = [other for other in right if _same_unit(value, other)]
        if same and not any(mine.forms & other.forms for mine in ours for other in theirs):
            return value, same[0]
    return None


def _same_unit(a: _Value, b: _Value) -> bool:
    return a.kind == b.kind and bool(a.unit & b.unit)


def _one_attribute(a: _Value, b: _Value, need: int) -> bool:
    """Same kind and unit, ``need`` question terms in common, and the statements' words alike (two shared,
    a quarter of them), with no other condition apart."""
    units = a.unit | b.unit
    if not _same_unit(a, b) or len(_content(a.terms & b.terms, units, numbers=True)) < need:
        return False
    if a.others - b.others and b.others - a.others:
        return False
    mine, theirs = _content(a.words, units), _content(b.words, units)
    shared = len(mine & theirs)
    return shared >= _SHARED_WORDS and 2 * shared >= _SIMILAR * (len(mine) + len(theirs))


def _content(words: frozenset[str], units: frozenset[str], numbers: bool = False) -> frozenset[str]:
    """Words that say something of the attribute: not numbers (unless ``numbers``: a term the question
    writes, "400"), not the values' unit ("days", "天"), not the glue around a value ("after", "后")."""
    return frozenset(
        w
        for w in words
        if (numbers or not any(c.isdigit() for c in w))
        and w not in units
        and f"{w}s" not in units
        and w not in ATTRIBUTE_GLUE_WORDS
        and not any(len(unit) > 1 and not unit.isascii() and unit in w for unit in units)  # "工作日内"
    )
