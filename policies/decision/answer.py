"""The extractive answer: which units of the evidence state what is asked.

Every selected unit is quoted whole, so every sentence of the answer has exact offsets. A sentence
a document addresses to an AI system (``policies.evidence.directives``) is never quoted, whatever it says.

With ``quote_stating`` (the shipped policy) the answer quotes by what the question wants
(``policies.question.shape``), over the candidates of ``policies.decision.quotes`` (each unit's
relevance, the value it states, the units it carries: a row's header, an item's intro):

    fact          the best unit, among those stating a value of the kind the question's measure
                  asks for when one scores near the best ("60 minutes" for "how long"), and up to
                  ``quote_max_facts`` in all that say as much (``_joining``)
    procedure,    the passage around the best unit of the best section (``policies.decision.passage``);
    list,         a procedure's best list, whole, in order, with its intro, when it scores within
    explanation,  ``quote_list_share`` of the best unit; beside anything but a whole procedure,
    yes_no,       the best units of up to ``quote_further_windows`` other windows that say as much
    "what is X"
    comparison    a fact, then a unit for each side the others do not speak for

A unit "says as much" as the best when it scores within ``quote_join_share`` of it and names
``quote_about_share`` of what it names: a neighbour's sentence ("Export links stay valid for 7
days." beside a password-reset link) names other things, and the row of the plan beside the asked
one never joins. Evidence with nothing to quote (only headings) answers nothing: the outcome is a
refusal (``unquotable``), never an empty answer. Without ``quote_stating`` (records made before it)
each window's units are ranked by the question's slots and words they name, as then.
"""

from __future__ import annotations

from collections.abc import Sequence

from evidence_loop.policies.config import Policy
from evidence_loop.policies.decision.passage import asks, best_list, best_passage, list_of, passage
from evidence_loop.policies.decision.quotes import Quote, candidates, term_weight, unquotable_dateline
from evidence_loop.policies.evidence.checked import Checked
from evidence_loop.policies.evidence.comparison import sides_of, sides_to_cover
from evidence_loop.policies.evidence.coverage import covered_terms, uncovered_slots
from evidence_loop.policies.evidence.directives import addressed_to_model
from evidence_loop.policies.question.analysis import Question
from evidence_loop.policies.question.places import askable_places, names_place
from evidence_loop.policies.question.shape import Shape
from evidence_loop.policies.question.values import ALL_KINDS
from evidence_loop.policies.types import MissingPiece
from evidence_loop.tools.types import Unit
from evidence_loop.tools.windows import units_of

ANSWER_KINDS = frozenset({"sentence", "list_item", "table_row", "code"})


def _unit_value(question: Question, unit: Unit, seeds: frozenset[int]) -> tuple[int, int, int]:
    slots = len(question.slots) - len(uncovered_slots(question.slots, (unit.text,)))
    terms = len(covered_terms(question.terms, (unit.text,)))
    return (slots, terms, int(unit.ordinal in seeds))


Pick = tuple[int, Unit, tuple[int, int, int]]


def _side_units(
    question: Question,
    items: Sequence[Checked],
    ranked: Sequence[Pick],
    chosen: Sequence[Pick],
    policy: Policy,
) -> list[Pick]:
    """For a comparison, the best unit of a window speaking for each side the ``chosen`` units do not
    quote: an answer about two plans cites both (beyond ``max_answer_sentences`` if need be)."""
    sides = sides_to_cover(question, policy)
    added: list[Pick] = []
    for side in sides:
        holders = {i for i, item in enumerate(items) if side in sides_of(sides, item)}
        if any(p[0] in holders for p in (*chosen, *added)):
            continue
        best = next((p for p in ranked if p[0] in holders), None)
        if best is not None:
            added.append(best)
    return added


def answer_units(
    question: Question, items: Sequence[Checked], policy: Policy, shape: Shape = "fact"
) -> list[tuple[int, Unit]]:
    """(evidence index, unit) pairs, in the order the answer reads them."""
    if policy.quote_stating:
        return quoted_units(question, shape, items, policy)
    return _ranked_units(question, items, policy)


def _ranked_units(question: Question, items: Sequence[Checked], policy: Policy) -> list[tuple[int, Unit]]:
    """Before ``quote_stating``: each window's best unit, then more units that add slots, capped;
    for a comparison, a unit for each side."""
    picked: list[Pick] = []
    for index, item in enumerate(items):
        seeds = frozenset(h.unit.ordinal for h in item.window.seeds)
        units = [
            u
            for u in units_of(item.window, item.doc)
            if u.kind in ANSWER_KINDS
            and not (policy.screen_directives and addressed_to_model(u.text, policy.screen_hidden))
        ]
        scored = [(u, _unit_value(question, u, seeds)) for u in units]
        scored = [(u, v) for u, v in scored if v[0] or v[1] or v[2]]
        scored.sort(key=lambda uv: (-uv[1][0], -uv[1][1], -uv[1][2], uv[0].ordinal))
        for unit, value in scored[: policy.answer_units_per_window]:
            picked.append((index, unit, value))
    picked.sort(key=lambda p: (-p[2][0], -p[2][1], -p[2][2], p[0], p[1].ordinal))
    ranked = list(picked)
    if picked:
        # A unit from a weaker window joins only when it says about as much of the question as the best one.
        top, share = picked[0][2], policy.answer_join_share
        picked = [
            p for p in picked if p[0] == picked[0][0] or (p[2][0] >= top[0] and p[2][1] >= top[1] * share)
        ]
    chosen = picked[: policy.max_answer_sentences]
    chosen += _side_units(question, items, ranked, chosen, policy)
    chosen.sort(key=lambda p: (p[0], p[1].ordinal))
    return [(index, unit) for index, unit, _ in chosen]


PASSAGE_SHAPES: frozenset[Shape] = frozenset({"procedure", "list", "explanation", "yes_no"})


def quoted_units(
    question: Question, shape: Shape, items: Sequence[Checked], policy: Policy
) -> list[tuple[int, Unit]]:
    """The units that state what is asked, as the question's shape wants them (the table above)."""
    found = candidates(question, items, policy)
    if (placed := _place_answer(question, shape, found, policy)) is not None:
        return [(placed.index, u) for u in placed.units]
    quotes = [q for q in found if q.relevance > 0]
    if not quotes:
        return []
    if shape in PASSAGE_SHAPES or (shape == "fact" and question.kinds == ALL_KINDS):
        picked = _passage_units(question, shape, quotes, items, policy)
    else:
        picked = [(q.index, u) for q in _facts(question, quotes, policy) for u in q.units]
    picked += [(q.index, u) for q in _sides(question, items, quotes, picked, policy) for u in q.units]
    return _in_reading_order([(i, u) for i, u in picked if not unquotable_dateline(u, question, policy)])


def _place_answer(question: Question, shape: Shape, quotes: Sequence[Quote], policy: Policy) -> Quote | None:
    """For a yes/no question about a place, with ``quote_place_first``: the best quote naming every
    place asked, or a region holding it ("港澳台地区暂不支持配送" for "能寄到香港吗"), which answers
    it alone (naming the place asked is what makes it relevant, whatever words it shares); None
    otherwise."""
    if not policy.quote_place_first or shape != "yes_no":
        return None
    places = askable_places(question.text)
    if not places:
        return None
    return next(
        (q for q in quotes if all(names_place(" ".join(u.text for u in q.units), p) for p in places)), None
    )


def _passage_units(
    question: Question, shape: Shape, quotes: Sequence[Quote], items: Sequence[Checked], policy: Policy
) -> list[tuple[int, Unit]]:
    """The passage around the anchor (a procedure's best list when near the best), then, unless it
    is a whole procedure, what further windows say as much."""
    anchor = best_passage(question, quotes, items, policy)
    if shape == "procedure":
        listed = best_list(quotes, items, anchor)
        if listed is not None and listed.relevance >= policy.quote_list_share * anchor.relevance:
            anchor = listed
    picked = [(anchor.index, u) for u in passage(items[anchor.index], anchor, policy, shape)]
    if shape == "procedure" and list_of(items[anchor.index].doc, anchor.unit.ordinal):
        return picked  # a procedure quoted whole is the answer
    return picked + [(q.index, u) for q in _further(question, quotes, anchor, policy) for u in q.units]


def _facts(question: Question, quotes: Sequence[Quote], policy: Policy) -> list[Quote]:
    """The best quote (among those stating the asked measure and scoring within ``quote_join_share``
    of the best, when any does; a FAQ's question line asks, it states nothing) and, up to
    ``quote_max_facts`` in all, those that say as much: within ``quote_join_share`` of it, about the
    same thing, at most ``quote_further_units`` from one window and from ``quote_further_windows``
    windows besides its own (another source may put it better); never the row beside it."""
    stating = [q for q in quotes if q.states and q.relevance >= policy.quote_join_share * quotes[0].relevance]
    pool = stating or [q for q in quotes if not asks(q.unit.text)] or list(quotes)
    best = pool[0]
    return [best, *_joining(question, pool[1:], best, {best.index: 1}, policy.quote_max_facts - 1, policy)]


def _further(question: Question, quotes: Sequence[Quote], anchor: Quote, policy: Policy) -> list[Quote]:
    """Beside a passage, the best ``quote_further_units`` quotes of up to ``quote_further_windows``
    other windows that say as much as its anchor: the same answer may be put better in another article."""
    others = [q for q in quotes if q.index != anchor.index]
    limit = policy.quote_further_windows * policy.quote_further_units
    return _joining(question, others, anchor, {anchor.index: policy.quote_further_units}, limit, policy)


def _joining(
    question: Question, pool: Sequence[Quote], best: Quote, taken: dict[int, int], limit: int, policy: Policy
) -> list[Quote]:
    """Quotes of ``pool`` (best first) that join ``best``: within ``quote_join_share`` of its
    relevance, about the same thing, not a sibling row of it, at most ``quote_further_units`` a
    window (``taken`` counts those already quoted) and ``quote_further_windows`` windows besides the
    best's, ``limit`` in all."""
    named, joined = term_weight(question, best.covered), list[Quote]()
    windows = 1 + policy.quote_further_windows  # the best's window and the further ones
    for quote in pool:
        if len(joined) >= limit or quote.relevance < policy.quote_join_share * best.relevance:
            break
        if not _about(question, quote, best, named, policy):
            continue  # about something else: a neighbour's sentence, another article
        if _sibling(quote, best) and not quote.covered >= best.covered:
            continue  # the row of the plan beside the asked one
        if _rival(question, quote, best, named, policy):
            continue  # another article's value of the asked kind, for a thing the best's is not
        count = taken.get(quote.index, 0)
        if count >= policy.quote_further_units or (count == 0 and len(taken) >= windows):
            continue
        taken[quote.index] = count + 1
        joined.append(quote)
    return joined


def _about(question: Question, quote: Quote, best: Quote, named: float, policy: Policy) -> bool:
    """A quote names ``quote_about_share`` of what the best quote names (``named``: its weight): it
    speaks of the same thing, not of a neighbour that shares a word or two."""
    if named <= 0:
        return False  # the best names none of the question's words: nothing says what "the same" is
    return term_weight(question, quote.covered & best.covered) >= policy.quote_about_share * named


def _rival(question: Question, quote: Quote, best: Quote, named: float, policy: Policy) -> bool:
    """Another window's value of the asked kind, beside a best quote stating one, naming less than
    ``quote_rival_share`` of what the best names ("Export links stay valid for 7 days." beside "Open
    the reset link ... expires after 60 minutes."): a neighbour's value, not the same answer again."""
    if quote.index == best.index or not (quote.states and best.states):
        return False
    return term_weight(question, quote.covered & best.covered) < policy.quote_rival_share * named


def _sibling(quote: Quote, best: Quote) -> bool:
    """Two rows of one table, or two items of one list."""
    unit, other = quote.unit, best.unit
    same_doc = quote.index == best.index or (unit.doc_id, unit.version) == (other.doc_id, other.version)
    return same_doc and unit.link is not None and unit.link == other.link


def _sides(
    question: Question,
    items: Sequence[Checked],
    quotes: Sequence[Quote],
    picked: Sequence[tuple[int, Unit]],
    policy: Policy,
) -> list[Quote]:
    """For a comparison, the best quote of a window speaking for each side the picked units do not."""
    sides = sides_to_cover(question, policy)
    added: list[Quote] = []
    for side in sides:
        holders = {i for i, item in enumerate(items) if side in sides_of(sides, item)}
        if any(i in holders for i, _ in picked) or any(q.index in holders for q in added):
            continue
        best = next((q for q in quotes if q.index in holders), None)
        if best is not None:
            added.append(best)
    return added


def _in_reading_order(picked: Sequence[tuple[int, Unit]]) -> list[tuple[int, Unit]]:
    """Each unit once; the windows in the order their first unit was picked, each in document order."""
    first: dict[int, int] = {}
    seen: dict[tuple[int, int], Unit] = {}
    for index, unit in picked:
        first.setdefault(index, len(first))
        seen.setdefault((index, unit.ordinal), unit)
    return [
        (index, unit) for (index, _), unit in sorted(seen.items(), key=lambda kv: (first[kv[0][0]], kv[0][1]))
    ]


NOTHING_TO_QUOTE = (
    "the evidence found states nothing that answers the question (only headings or page furniture)"
)


def unquotable(units: Sequence[tuple[int, Unit]], policy: Policy) -> list[MissingPiece]:
    """The refusal of evidence with nothing to quote: an answer without a quote is no answer."""
    if units or not policy.quote_stating:
        return []
    return [MissingPiece("no_relevant_evidence", NOTHING_TO_QUOTE)]
