"""What each unit of the evidence says about the question: the answer's candidates, best first.

A unit is a candidate quote when it states something (not a heading, a table's header row alone,
the page's title repeated, a unit with no word, or a sentence addressed to a model) and is not about
a look-alike of the asked model (its paragraph's opening names "Cam C100" for a question on the
C200). Each candidate carries:

- **context**: the units quoted with it, before it: a table row's header row (a row is read by its
  header); a list item's intro, or the sentence opening its paragraph, when that names what the
  unit lacks of the question ("To reset your password:" above "Open the reset link ...", "Cam
  C200: the Reset key is under the cover." before "Hold it for 10 seconds.");
- **covered**: the question's terms the unit, its context or its place (the document's title and
  the section path above it) names; a term named only by the place counts ``quote_place_weight``;
- **relevance**: that IDF-weighted share read together with the unit's cosine with the question
  on the question's own scale (``quote_semantic_weight``; words alone without unit vectors), times
  its window's score over the best window's (to the power ``quote_window_weight``);
- **states**: whether it states a value of the kind the question's measure asks for ("60
  minutes" for "how long", "$30" for "how much is"), a value the question does not write itself;
  for an English "who"/"where", a name.

Whether the answer quotes a candidate is ``policies.decision.answer``'s call.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from evidence_loop.policies.config import Policy
from evidence_loop.policies.evidence.checked import Checked
from evidence_loop.policies.evidence.coverage import covered_terms
from evidence_loop.policies.evidence.directives import addressed_to_model
from evidence_loop.policies.evidence.slot_scope import about_other
from evidence_loop.policies.lexicon import DATELINE_OPENINGS, MONTHS, PAGE_FURNITURE, UPDATE_ASKS
from evidence_loop.policies.question.analysis import Question
from evidence_loop.policies.question.slots import extract_slots
from evidence_loop.policies.question.values import (
    MIN_STATEMENT_ATOMS,
    SENTENCE_ENDS,
    ValueKind,
    atoms,
    is_number_part,
    statements,
)
from evidence_loop.tools.tokenize import CJK_CHARS, normalize
from evidence_loop.tools.types import ParsedDocument, Unit
from evidence_loop.tools.windows import own_ordinals

QUOTABLE_KINDS = frozenset({"sentence", "list_item", "table_row", "code"})
# the kind of value a slot of a text is (a model, a clause or a quoted name is no measure)
_MEASURED: dict[str, ValueKind] = {k: k for k in ("amount", "duration", "date", "percentage", "count")}
_BARE_NUMBER = re.compile(r"(?<![A-Za-z0-9.])\d+(?:[.,]\d+)?(?![A-Za-z0-9])")  # "1269万人" too
_WORDS = re.compile(rf"[^\W\d_]|[{CJK_CHARS}]")
_MARKUP = re.compile(r"[#|*_\-:>\s]+")


@dataclass(frozen=True, slots=True)
class Quote:
    """A unit the answer may quote, with the units quoted with it and what it says about the question."""

    index: int  # the evidence window it comes from
    unit: Unit
    context: tuple[Unit, ...]  # quoted with it, before it: a row's header row, an item's intro
    relevance: float
    covered: frozenset[str]  # the question's terms it names, with its context and its place
    states: bool  # states a value of the kind the question's measure asks for

    @property
    def units(self) -> tuple[Unit, ...]:
        return (*self.context, self.unit)


def furniture(unit: Unit, doc: ParsedDocument) -> bool:
    """A unit that states nothing: a heading, a header row alone, the page's title repeated, no word,
    a footer or a "was this helpful" line (``lexicon.PAGE_FURNITURE``)."""
    if unit.kind not in QUOTABLE_KINDS:
        return True
    text, title = _bare(unit.text), _bare(doc.title)
    if not _WORDS.search(text) or any(phrase in text for phrase in PAGE_FURNITURE):
        return True
    return bool(title) and (text == title or text.startswith(title + " "))


def dateline(text: str) -> bool:
    """A line saying when the page was written ("Last updated: 10 January 2026", "更新于
    2025-09-18"): it opens with ``lexicon.DATELINE_OPENINGS`` and holds a digit."""
    normal = normalize(text).strip()
    return normal.startswith(DATELINE_OPENINGS) and any(c.isdigit() for c in normal)


def unquotable_dateline(unit: Unit, question: Question, policy: Policy) -> bool:
    """A dateline, with ``quote_no_datelines``, when the question does not ask when the page was
    updated (``lexicon.UPDATE_ASKS``): it states nothing a customer asked."""
    if not policy.quote_no_datelines or not dateline(unit.text):
        return False
    asked = normalize(question.text)
    return not any(word in asked for word in UPDATE_ASKS)


@lru_cache(maxsize=100_000)
def _bare(text: str) -> str:
    """A text without markup marks, normalised: how a title and its repetition compare."""
    return _MARKUP.sub(" ", normalize(text)).strip()


@lru_cache(maxsize=50_000)
def stated_kinds(text: str, own: frozenset[str] = frozenset()) -> frozenset[ValueKind]:
    """The kinds of value a text's statements state (any spelling: "60 minutes", "三年", "$30",
    "2021年3月"), a bare number as a count when nothing else in its statement measures; a value
    made only of the question's own numbers (``own``), and a statement saying little besides its
    numbers (a dateline "Aug 26, 2021 ..."), left out. Richer than ``values.stated_values`` (digits
    only), which the completeness check reads as it did."""
    kinds: set[ValueKind] = set()
    for start, end in statements(text):
        piece = text[start:end]
        if (
            sum(1 for a in atoms(piece) if a.norm.isalnum() and not is_number_part(a.norm))
            < MIN_STATEMENT_ATOMS
        ):
            continue
        found = {
            _MEASURED[slot.kind]
            for slot in extract_slots(piece)
            if slot.kind in _MEASURED and not _own_value(slot.value, own)
        }
        if not found and any(m.group().replace(",", "") not in own for m in _BARE_NUMBER.finditer(piece)):
            found.add("count")  # a bare number, when nothing else says what it measures
        kinds.update(found)
    return frozenset(kinds)


def _own_value(value: str, own: frozenset[str]) -> bool:
    """A value written only with the question's own numbers ("2021" for a question about 2021)."""
    digits = set(re.findall(r"\d+", value))
    return bool(digits) and digits <= own


_CJK = re.compile(f"[{CJK_CHARS}]")
_CAPITALISED = re.compile(r"(?<![\w'’])[A-Z][\w'’.-]*")


def _names(text: str) -> frozenset[str]:
    """Capitalised words a Latin text writes inside its statements (not opening one): names, as
    far as the script shows them; never a month."""
    found: set[str] = set()
    for start, end in statements(text, SENTENCE_ENDS):
        for match in _CAPITALISED.finditer(text, start, end):
            word = match.group().rstrip(".").lower()
            if match.start() > start and word not in MONTHS:
                found.add(word)
    return frozenset(found)


def states_measure(question: Question, texts: Sequence[str]) -> bool:
    """True when one of the texts states a value of the kind the question's measure asks for, or,
    for an English question asking who or where, a name the question does not write."""
    if question.measure:
        return any(stated_kinds(t, question.own_numbers) & question.measure for t in texts)
    if question.kinds == {"named"} and not _CJK.search(question.text):  # a Chinese name shows no capital
        asked = {w.lower() for w in re.findall(r"[\w'’.-]+", question.text)}
        return any(_names(t) - asked for t in texts)
    return False


def lead_in(doc: ParsedDocument, unit: Unit) -> tuple[Unit, ...]:
    """The sentence that opens ``unit``'s paragraph (no line break between them), when another one
    does: "Cam C200: the Reset key is under the cover." before "Press it for 10 seconds." says
    whose key it is."""
    if unit.kind != "sentence":
        return ()
    opening = unit
    while opening.ordinal > 0:
        before = doc.units[opening.ordinal - 1]
        if before.kind != "sentence" or before.section_id != unit.section_id:
            break
        if "\n" in doc.text[before.end : opening.start]:
            break
        opening = before
    return () if opening is unit else (opening,)


def context_of(
    unit: Unit, doc: ParsedDocument, ordinals: frozenset[int], question: Question
) -> tuple[Unit, ...]:
    """The units a quote of ``unit`` carries, when the window holds them: a row's header row; an
    item's intro, or a sentence's lead-in in its paragraph, when it names a question term the unit
    does not (what the unit is about)."""
    if unit.kind == "table_row":
        return (doc.units[unit.link],) if unit.link is not None and unit.link in ordinals else ()
    if unit.kind == "list_item" and unit.link is not None and doc.units[unit.link].kind != "list_item":
        scope: tuple[Unit, ...] = (doc.units[unit.link],)
    else:
        scope = lead_in(doc, unit)
    if not scope or any(u.ordinal not in ordinals for u in scope):
        return ()
    return scope if covers(question, [u.text for u in scope]) - covers(question, (unit.text,)) else ()


@lru_cache(maxsize=200_000)
def _covers(terms: tuple[str, ...], text: str) -> frozenset[str]:
    return covered_terms(terms, (text,))


def covers(question: Question, texts: Sequence[str]) -> frozenset[str]:
    """The question's terms the texts name (a union over texts, each text's read once per question)."""
    found: frozenset[str] = frozenset()
    for text in texts:
        found |= _covers(question.terms, text)
    return found


def term_weight(question: Question, terms: frozenset[str]) -> float:
    """The IDF-weighted share of the question's terms that ``terms`` holds (each term 1 without weights)."""
    if not question.terms:
        return 0.0
    weights = question.weights or (1.0,) * len(question.terms)
    total = sum(weights)
    return (
        sum(w for t, w in zip(question.terms, weights, strict=True) if t in terms) / total if total else 0.0
    )


def _place(doc: ParsedDocument, unit: Unit) -> tuple[str, ...]:
    return (doc.title, *doc.sections[unit.section_id].path)


def _read(question: Question, lexical: float, unit: Unit, policy: Policy) -> float:
    """A unit's lexical share read together with its cosine on the question's scale, when known."""
    cosines = question.cosines
    if cosines is None or (cosine := cosines.best((unit,))) is None:
        return lexical
    semantic = cosines.similarities.relative(cosine)
    return (1 - policy.quote_semantic_weight) * lexical + policy.quote_semantic_weight * semantic


def heading_relevance(question: Question, doc: ParsedDocument, section_id: int, policy: Policy) -> float:
    """How well a section's own heading names the question (its words and, with vectors, its cosine);
    0 for a section without a heading unit."""
    own = own_ordinals(doc, section_id)
    if not own or (heading := doc.units[own[0]]).kind != "heading":
        return 0.0
    return _read(question, term_weight(question, covers(question, (heading.text,))), heading, policy)


def quote_of(question: Question, index: int, item: Checked, unit: Unit, lead: float, policy: Policy) -> Quote:
    """One unit of a window read as a candidate quote; ``lead`` is the best window's score, which
    the window's own score is read against (``quote_window_weight``)."""
    doc = item.doc
    context = context_of(unit, doc, frozenset(item.window.ordinals), question)
    linked = (doc.units[unit.link].text,) if unit.kind == "table_row" and unit.link is not None else ()
    own = covers(question, (unit.text, *linked, *(u.text for u in context)))
    placed = covers(question, _place(doc, unit)) - own
    lexical = term_weight(question, own) + policy.quote_place_weight * term_weight(question, placed)
    relevance = _read(question, lexical, unit, policy)
    states = states_measure(question, (unit.text,))
    standing = min(1.0, item.check.score / lead) if lead > 0 else 1.0
    relevance *= max(standing, 0.0) ** policy.quote_window_weight
    return Quote(index, unit, context, relevance, own | placed, states)


def _scope(doc: ParsedDocument, quote: Quote) -> tuple[Unit, ...]:
    """What names a quote's subject: its paragraph's lead-in, its context and itself."""
    return (*lead_in(doc, quote.unit), *quote.units)


def candidates(question: Question, items: Sequence[Checked], policy: Policy) -> list[Quote]:
    """Every unit of the evidence that states something and is not about another identifier than the
    question's, read as a quote; best first (ties: the better window, then document order)."""
    found: list[Quote] = []
    lead = max((item.check.score for item in items), default=0.0)
    for index, item in enumerate(items):
        doc = item.doc
        for ordinal in item.window.ordinals:
            unit = doc.units[ordinal]
            if furniture(unit, doc) or unquotable_dateline(unit, question, policy):
                continue
            if policy.screen_directives and addressed_to_model(unit.text, policy.screen_hidden):
                continue
            quote = quote_of(question, index, item, unit, lead, policy)
            if question.identifiers and about_other(
                question.identifiers, [u.text for u in _scope(doc, quote)]
            ):
                continue  # about a look-alike of the asked model: another subject
            found.append(quote)
    return sorted(found, key=lambda q: (-q.relevance, q.index, q.unit.ordinal))
