"""Conflict candidates from the second, wider lookup: the statement that answers against other
documents' statements close to it in meaning (``Policy.conflict_wider_k``).

The screen by meaning (``policies.conflicts.meaning``) compares what the evidence holds, and the
evidence holds what is close to the question. "How long till I get my money back" reaches "Refunds
are paid back ... within 5 business days" and not the FAQ's "Refunds usually reach your card within
10 business days": its words are not the question's. Once a unit answers (it is quoted and states a
value of the asked kind), the loop looks up a few units of other documents by that unit's own words
and e5 vector (``agent.loop.wider``), and here each of their statements is paired with the answering
one when

- it is close to the answering statement: its cosine with the answer's vector, on the answer's own
  scale (0 at the corpus mean, 1 at the answer itself), is at least ``Anchor.closeness``;
- it gives one value of the asked kind in the answer's measure, and the two differ (no value of that
  measure in the two windows agrees), their sizes of one order;
- the two statements share a word of the answering statement besides the value's unit, and their
  pages are scoped alike.

The pairs go to the screen (one document, different models, places, plans, numbered things) and the
rules or the LLM check, as every other candidate does.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from evidence_loop.policies.conflicts.align import Text
from evidence_loop.policies.conflicts.meaning import (
    Said,
    apart,
    asked_kinds,
    differ,
    said_values,
    scoped_alone,
    values_in,
)
from evidence_loop.policies.question.analysis import Question, subject_terms
from evidence_loop.policies.question.scopes import scope_names
from evidence_loop.policies.types import ConflictCandidate, EvidenceView

if TYPE_CHECKING:
    from evidence_loop.tools.search.dense import UnitCosines

_PER_ANSWER = 4  # candidates the answering statement may give


@dataclass(frozen=True, slots=True)
class Anchor:
    """The statement that answers: its unit (doc_id, version, ordinal) and text, every readable
    unit's cosine with its vector, how close (on its scale) another statement must be, and the
    factor two sizes of one thing stay within."""

    unit: tuple[str, str, int]
    text: str
    cosines: UnitCosines
    closeness: float
    ratio: float = 30.0


def states_asked(question: Question, text: str) -> bool:
    """The text gives a value of the kind the question asks (a duration for "how long")."""
    kinds = asked_kinds(question.text)
    own = _own(question)
    return bool(kinds) and any(True for _ in values_in(text, kinds, own, question.subject_terms))


def anchored_candidates(
    question: Question, texts: Sequence[Text], anchor: Anchor
) -> Iterator[tuple[ConflictCandidate, str | None]]:
    """Pairs of the answering statement's value with a close statement's of another document, each
    with None when it is a candidate for the screen, or why it was set aside."""
    kinds = asked_kinds(question.text)
    holder = _holder(texts, anchor.unit)
    if not kinds or holder is None:
        return
    own, words = _own(question), subject_terms(anchor.text)
    ours = [s for s in said_values(holder, anchor.cosines, 0.0, kinds, own, words) if s.unit == anchor.unit]
    asked = frozenset((n.kind, n.key) for n in scope_names(question.text))
    given = 0
    for text in texts:
        view = text.view
        if (view.doc_id, view.version) == anchor.unit[:2]:
            continue  # one document's two values are two scopes of it
        theirs = said_values(view, anchor.cosines, anchor.closeness, kinds, own, words)
        for a, b, reason in _pairs(ours, theirs, asked, anchor.ratio):
            if given >= _PER_ANSWER:
                return
            given += 1
            label = " ".join(sorted(a.terms & b.terms))
            yield ConflictCandidate(f"{label}: {a.kind}", a.kind, a.mention, b.mention), reason


def _pairs(
    ours: Sequence[Said], theirs: Sequence[Said], asked: frozenset[tuple[str, str]], ratio: float
) -> Iterator[tuple[Said, Said, str | None]]:
    """The answer's values and another window's that differ in one measure, none of it agreeing,
    with why a pair is no disagreement (None: it may be one)."""
    for a in ours:
        same = [b for b in theirs if b.kind == a.kind and b.measure == a.measure]
        if not same or any(not differ(a, b) for b in same):
            continue
        b = same[0]
        yield a, b, _apart_reason(a, b, asked, ratio)


def _apart_reason(a: Said, b: Said, asked: frozenset[tuple[str, str]], ratio: float) -> str | None:
    """Why the answering statement and a close one state no one attribute, or None."""
    if a.terms.isdisjoint(b.terms):
        return "the close statement shares no word of the answering one: another attribute"
    if scoped_alone(a, b, asked):
        names = sorted(f"{kind} '{key}'" for kind, key in (a.scopes ^ b.scopes) - asked)
        return f"one page is scoped to {', '.join(names)} and the other is not: two rules"
    if apart(a, b, ratio):
        return f"the sizes are more than {ratio:g} times apart: two things measured"
    return None


def _holder(texts: Sequence[Text], unit: tuple[str, str, int]) -> EvidenceView | None:
    """The window holding the answering unit, if the conflict check reads it."""
    for text in texts:
        view = text.view
        if (view.doc_id, view.version) == unit[:2] and any(o == unit[2] for o, _, _ in view.units):
            return view
    return None


def _own(question: Question) -> frozenset[str]:
    """The question's own values (a value it names is no answer to it)."""
    return frozenset(form for s in question.slots for form in (s.norm, *s.alternatives))
