"""The passage an answer quotes around its anchor, for a question that wants more than one value.

A procedure is answered with its whole list, in order, with its intro ("To reset your password:"
and every step); a list question with its list; an explanation or a yes/no with the passage that
says it. The anchor is the best quote of the best section (``best_passage``: a section's best quote
read with how well its own heading names the question). Around it, within ``quote_passage_chars``:

    1. its section's own units, or, on a FAQ page, its entry (from the question the entry opens
       with to the next question): a help-centre section is one answer ("Location services use
       ... / From Settings, tap Location. / Tap to turn on ...");
    2. else the whole list it belongs to or introduces (intro, every item, the note after);
    3. else the units next to it in its section, after it first, while they fit;

after the intros of the sections above it (what the passage is part of), as room allows. Only what
the evidence window holds is quoted (every quote is cited in the evidence); the page's furniture
(headings, a title repeated) never is.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from evidence_loop.policies.config import Policy
from evidence_loop.policies.decision.quotes import Quote, dateline, furniture, heading_relevance
from evidence_loop.policies.evidence.checked import Checked
from evidence_loop.policies.evidence.reading import intros_above, list_root, whole_list
from evidence_loop.policies.question.analysis import Question
from evidence_loop.policies.question.shape import Shape
from evidence_loop.tools.types import ParsedDocument, Unit
from evidence_loop.tools.windows import section_ordinals

_ASKS = re.compile(r"[?？]\W*$")  # a unit that is itself a question: a FAQ entry opens with one


def _chars(units: Sequence[Unit]) -> int:
    return sum(u.end - u.start for u in units)


def list_of(doc: ParsedDocument, ordinal: int) -> tuple[int, ...]:
    """The whole list a unit is an item of or introduces (intro, items, the note after); () if none."""
    root = list_root(doc, ordinal)
    return whole_list(doc, root) if root is not None else ()


def _kept(item: Checked, ordinals: Sequence[int]) -> list[Unit]:
    """The units of ``ordinals`` the window holds and that state something, in document order."""
    held = set(item.window.ordinals)
    doc = item.doc
    return [doc.units[o] for o in sorted(set(ordinals)) if o in held and not furniture(doc.units[o], doc)]


def asks(text: str) -> bool:
    """A unit that is itself a question ("Can I pay on delivery?"): a FAQ entry opens with one."""
    return bool(_ASKS.search(text))


def entry(units: Sequence[Unit], at: int) -> list[Unit]:
    """The units of a FAQ entry holding ordinal ``at``: from the question before it (or at it) to the
    next question; all of ``units`` when fewer than two of them ask."""
    opens = [i for i, u in enumerate(units) if asks(u.text)]
    if len(opens) < 2:
        return list(units)
    here = next((i for i, u in enumerate(units) if u.ordinal >= at), len(units) - 1)
    start = max((i for i in opens if i <= here), default=0)
    end = min((i for i in opens if i > here), default=len(units))
    return list(units[start:end])


def _around(units: Sequence[Unit], anchor: Quote, limit: int) -> list[Unit]:
    """The anchor with its context, then the units nearest to it (after it first on a tie), while
    they fit ``limit``."""
    at = anchor.unit.ordinal
    taken = list(anchor.units)
    size = _chars(taken)
    for unit in sorted(
        (u for u in units if u not in taken), key=lambda u: (abs(u.ordinal - at), u.ordinal < at)
    ):
        size += len(unit.text)
        if size > limit:
            break
        taken.append(unit)
    return sorted(taken, key=lambda u: u.ordinal)


def _body(item: Checked, anchor: Quote, limit: int) -> list[Unit]:
    """The anchor's section (or FAQ entry), else its list, else its neighbours, within ``limit``."""
    doc, section_id = item.doc, anchor.unit.section_id
    own = entry(
        _kept(item, [o for o in item.window.ordinals if doc.units[o].section_id == section_id]),
        anchor.unit.ordinal,
    )
    if own and _chars(own) <= limit:
        return own
    listed = _kept(item, list_of(doc, anchor.unit.ordinal))
    if listed and _chars(listed) <= limit:
        return listed
    return _around(own or list(anchor.units), anchor, limit)


def _procedure(item: Checked, anchor: Quote, limit: int) -> list[Unit]:
    """The whole section the anchor sits in, its subsections too (a procedure's steps often sit in
    paragraphs, notes and sub-steps under their own headings), or its FAQ entry, as far as the
    window holds it; [] when that exceeds ``limit``."""
    doc = item.doc
    whole = entry(_kept(item, section_ordinals(doc, anchor.unit.section_id)), anchor.unit.ordinal)
    return whole if _chars(whole) <= limit else []


def passage(item: Checked, anchor: Quote, policy: Policy, shape: Shape = "fact") -> list[Unit]:
    """The units quoted around ``anchor``, after the intros of the sections above it the window
    holds (with ``quote_skip_datelines``, never a page's dateline); for a procedure, with
    ``quote_procedure_chars``, the whole section it sits in."""
    body: list[Unit] = []
    if shape == "procedure" and policy.quote_procedure_chars:
        body = _procedure(item, anchor, policy.quote_procedure_chars)
    body = body or _body(item, anchor, policy.quote_passage_chars)
    room = policy.quote_passage_chars - _chars(body)
    above = _kept(item, intros_above(item.doc, anchor.unit.section_id))
    intros = [u for u in above if u not in body and not asks(u.text)]  # a FAQ's first question is no intro
    if policy.quote_skip_datelines:
        intros = [u for u in intros if not dateline(u.text)]
    taken: list[Unit] = []
    for unit in sorted(intros, key=lambda u: -u.ordinal):  # the nearest section's intro first
        if len(unit.text) <= room:
            taken.append(unit)
            room -= len(unit.text)
    return sorted([*taken, *body], key=lambda u: u.ordinal)


def best_list(quotes: Sequence[Quote], items: Sequence[Checked], anchor: Quote) -> Quote | None:
    """The best quote of the anchor's window that is an item or the intro of a list (quotes best first)."""
    return next(
        (q for q in quotes if q.index == anchor.index and list_of(items[q.index].doc, q.unit.ordinal)), None
    )


def best_passage(
    question: Question, quotes: Sequence[Quote], items: Sequence[Checked], policy: Policy
) -> Quote:
    """The best quote of the best section: a section's best quote read together with how well its
    own heading names the question (``quote_heading_weight``): "Connecting with a component cable"
    answers "how do I connect a component cable" better than one apt sentence elsewhere."""
    best: dict[tuple[int, int], Quote] = {}
    for quote in quotes:
        best.setdefault((quote.index, quote.unit.section_id), quote)
    weight = policy.quote_heading_weight

    def score(key: tuple[int, int]) -> float:
        heading = heading_relevance(question, items[key[0]].doc, key[1], policy)
        return (1 - weight) * best[key].relevance + weight * heading

    top = max(best, key=lambda key: (score(key), -key[0]))
    return best[top]
