"""Comparisons: the named sides of a question that compares things, and which evidence speaks for each.

"What is the difference between the Standard and the Premium plan", "标准会员和尊享会员有什么区别",
"compare A with B", "A vs B", "A 与 B 哪个更划算": an answer needs evidence for every side, and one
page about one side is half an answer. The sides are read off the question's text with the rest
of the question (``policies/question/sides.py``); this module says which window speaks for which side
(:func:`covers`); selection pins a window for a side the evidence lacks, the decision names a side
nothing covers as an ``uncovered_slot``, and the wider recall searches for that side's name with the
question's other words (:func:`side_query`).

A window speaks for a side when its document's title or its section path names the side, or, when
those name no side, when one of its units names it: a Standard-plan page that says once "upgrade to
Premium" is no evidence about Premium; a page or a table about both speaks for both. A page whose
title names the kind of thing compared but none of the sides ("Premium plan" when the Standard and the
Family plan are compared) is about another one of that kind and speaks for none.
"""

from __future__ import annotations

import warnings
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

from evidence_loop.policies.evidence.coverage import covered_terms
from evidence_loop.policies.question.sides import Side
from evidence_loop.tools.types import ParsedDocument
from evidence_loop.tools.windows import Window, units_of

if TYPE_CHECKING:
    from evidence_loop.policies.config import Policy
    from evidence_loop.policies.evidence.checked import Checked
    from evidence_loop.policies.question.analysis import Question


def sides_to_cover(question: Question, policy: Policy) -> tuple[Side, ...]:
    """The sides the loop reads evidence for: the question's, none while ``compare_sides`` is off."""
    return question.sides if policy.compare_sides else ()


def names_side(side: Side, text: str) -> bool:
    """The text holds every term of the side (CJK terms as substrings, as coverage reads them)."""
    return _holds(side.terms, text)


def _holds(terms: Sequence[str], text: str) -> bool:
    return len(covered_terms(terms, (text,))) == len(terms)


def _labels(window: Window, doc: ParsedDocument) -> list[str]:
    sections = {u.section_id for u in units_of(window, doc)}
    return [doc.title, *(" ".join(doc.sections[s].path) for s in sorted(sections))]


def covers(side: Side, sides: Sequence[Side], window: Window, doc: ParsedDocument) -> bool:
    """Whether the window speaks for the side: its title or section path names it; or, when those
    name no side nor the kind compared, one of its units names it."""
    labels = _labels(window, doc)
    labelled = [s for s in sides if any(names_side(s, label) for label in labels)]
    if labelled:
        return side in labelled
    if side.head and any(_holds(side.head, label) for label in labels):
        return False  # a page about another one of the kind compared ("Premium plan" for Standard and Family)
    return any(names_side(side, u.text) for u in units_of(window, doc))


def sides_of(sides: Sequence[Side], item: Checked) -> tuple[Side, ...]:
    """The sides one window speaks for."""
    return tuple(s for s in sides if covers(s, sides, item.window, item.doc))


def uncovered_sides(sides: Sequence[Side], items: Sequence[Checked]) -> tuple[Side, ...]:
    """The sides no window of ``items`` speaks for."""
    covered = {s.name for item in items for s in sides_of(sides, item)}
    return tuple(s for s in sides if s.name not in covered)


def side_query(text: str, sides: Sequence[Side], missing: Collection[str]) -> str:
    """The question searched again for the ``missing`` sides: the names of the sides already found
    taken out, so that the question's other words and the missing side's name lead the recall."""
    for side in sides:
        if side.name not in missing:
            text = text.replace(side.name, " ")
    return " ".join(text.split())


def __getattr__(name: str) -> object:
    """Names renamed in 0.2.0, kept through 0.2.x with a DeprecationWarning (docs/versioning.md)."""
    if name == "compared":  # deprecated alias
        message = f"{__name__}.{name} is renamed sides_to_cover; the old name goes in 0.3.0"
        warnings.warn(message, DeprecationWarning, stacklevel=2)
        return sides_to_cover
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
