"""How much of the evidence's surroundings the question's shape needs (``policies.question.shape``).

The loop grows each seed window until the question's words and gaps are covered: enough for one
value, not for an answer spread over a passage. Once the evidence is chosen and judged, the shape
says how much more of it to hand back:

    fact           as selected: one value sits in one short passage, more is noise
    procedure      each lead window grows to its whole list (the intro, every step, the note after)
                   and, when it fits, its whole section, with the intro of its section and of each
                   section above it (what the steps are part of); the other windows are kept while
                   the evidence fits ``shape_outcome_chars``
    yes_no         as a procedure: a help centre says yes by the steps that do it ("Can I reset the
                   TV?" is answered by the reset section), and a rule's yes by its whole clause
    list           each lead window grows to every item under its list's intro
    explanation    the best windows of several documents, up to the outcome budget, ordered by
                   document (its best one first)
    comparison     as selected (each side's evidence is read by the comparison's own rule)

How far a lead window grows follows from how sure the evidence is: a lead window scoring at least
``shape_sure_score`` reads its section up to ``shape_section_chars``, a weaker one only its list
(``shape_list_chars``); the runners-up stay as regrown. The judge and the missing pieces have sat on
the evidence as selected, so the shape changes what is read, never whether the loop answers.
"""

from __future__ import annotations

from collections.abc import Sequence

from evidence_loop.policies.config import Policy
from evidence_loop.policies.evidence.checked import Checked
from evidence_loop.policies.evidence.completeness import check_window
from evidence_loop.policies.evidence.selection import rank, regrown
from evidence_loop.policies.evidence.slot_scope import on_subject
from evidence_loop.policies.question.analysis import Question
from evidence_loop.policies.question.shape import Shape
from evidence_loop.tools.types import ParsedDocument
from evidence_loop.tools.windows import (
    Window,
    char_count,
    own_ordinals,
    section_chars,
    section_ordinals,
    with_units,
    without_units,
)

NARROW: frozenset[Shape] = frozenset({"fact", "comparison"})


def list_root(doc: ParsedDocument, ordinal: int) -> int | None:
    """The intro of the outermost list a unit belongs to (a nested item's link is its parent item)."""
    unit = doc.units[ordinal]
    seen = {ordinal}
    while unit.kind == "list_item" and unit.link is not None and unit.link not in seen:
        seen.add(unit.link)
        unit = doc.units[unit.link]
    return unit.ordinal if unit.kind != "list_item" else None


def whole_list(doc: ParsedDocument, intro: int) -> tuple[int, ...]:
    """The intro, every item after it (nested ones too) and the note right after the last item,
    within the intro's section; () when no list follows the intro."""
    units = doc.units
    section = units[intro].section_id
    ordinals = [intro]
    at = intro + 1
    while at < len(units) and units[at].kind == "list_item" and units[at].section_id == section:
        ordinals.append(at)
        at += 1
    if len(ordinals) == 1 or list_root(doc, ordinals[1]) != intro:
        return ()
    if at < len(units) and units[at].kind == "sentence" and units[at].section_id == section:
        ordinals.append(at)  # the note after the steps ("The TV restarts when it is done.")
    return tuple(ordinals)


def lists_of(doc: ParsedDocument, window: Window) -> tuple[int, ...]:
    """Every unit of the lists the window holds an item of, or announces with its last unit."""
    intros: set[int] = set()
    for ordinal in window.ordinals:
        root = list_root(doc, ordinal)
        if root is not None and root != ordinal:
            intros.add(root)
    after = window.last + 1
    if after < len(doc.units) and list_root(doc, after) in window.ordinals:
        intros.add(window.last)
    return tuple(o for intro in sorted(intros) for o in whole_list(doc, intro))


def section_intro(doc: ParsedDocument, section_id: int) -> tuple[int, ...]:
    """The section's heading and its own first sentence (not a subsection's): what it is about."""
    own = own_ordinals(doc, section_id)
    heading = tuple(o for o in own[:1] if doc.units[o].kind == "heading")
    first = next((o for o in own if doc.units[o].kind == "sentence"), None)
    return heading if first is None else (*heading, first)


def intros_above(doc: ParsedDocument, section_id: int) -> tuple[int, ...]:
    """The section's intro and the intro of every section above it: a step read without the
    chapter's opening ("You can change the picture settings ...") misses what it is part of."""
    ordinals: list[int] = []
    at: int | None = section_id
    while at is not None and at != 0:
        ordinals.extend(section_intro(doc, at))
        at = doc.sections[at].parent_id
    return tuple(ordinals)


def grown_for(shape: Shape, item: Checked, sure: bool, policy: Policy) -> Window:
    """One lead window grown as the shape needs, within the shape's budget (else as it was)."""
    window, doc = item.window, item.doc
    listed = with_units(window, lists_of(doc, window))
    if char_count(listed, doc) > policy.shape_list_chars:
        listed = window
    if shape == "list" or not sure:
        return listed
    section_id = doc.units[window.first].section_id
    whole = with_units(listed, intros_above(doc, section_id))
    if section_chars(doc, section_id) <= policy.shape_section_chars:
        whole = with_units(whole, section_ordinals(doc, section_id))
    return whole if char_count(whole, doc) <= policy.shape_section_chars else listed


def _regrown(question: Question, item: Checked, window: Window, policy: Policy) -> Checked:
    if window.ordinals == item.window.ordinals:
        return item
    # the reranker read the window as selected; its score stays (as with a regrown runner-up)
    return regrown(
        item,
        Checked(window, item.doc, check_window(question, window, item.doc, item.best, policy), item.best),
        policy,
    )


def by_document(items: Sequence[Checked]) -> list[Checked]:
    """The windows grouped by document, documents in the order of their best window, each
    document's windows in text order."""
    order: dict[tuple[str, str], int] = {}
    for item in items:
        order.setdefault(item.window.key, len(order))
    return sorted(items, key=lambda c: (order[c.window.key], c.window.first))


def several_documents(
    question: Question, selected: Sequence[Checked], items: Sequence[Checked], policy: Policy
) -> list[Checked]:
    """An explanation's evidence: the selected windows, then the best window of each further
    document scoring within ``shape_docs_ratio`` of the best, up to ``shape_docs`` documents and the
    outcome budget; grouped by document."""
    chosen = list(selected)
    used = sum(char_count(c.window, c.doc) for c in chosen)
    docs = {c.window.key for c in chosen}
    best = max((c.check.score for c in chosen), default=0.0)
    for item in rank(on_subject(question, items, policy)):
        if len(docs) >= policy.shape_docs or item.check.score < best * policy.shape_docs_ratio:
            break
        size = char_count(item.window, item.doc)
        if item.window.key in docs or used + size > policy.outcome_budget:
            continue
        chosen.append(item)
        docs.add(item.window.key)
        used += size
    return by_document(chosen)


def read_for_shape(
    shape: Shape, question: Question, selected: Sequence[Checked], items: Sequence[Checked], policy: Policy
) -> list[Checked]:
    """The evidence as the shape needs it read (the module's table); as selected when the rule is
    off (``shape_reading``), the preset reads whole windows only (an ablation), or the shape reads
    narrowly."""
    if not (policy.shape_reading and policy.preset.reads_shape) or not selected or shape in NARROW:
        return list(selected)
    if shape == "explanation":
        return several_documents(question, selected, items, policy)
    shape = "procedure" if shape == "yes_no" else shape
    sure = selected[0].check.score >= policy.shape_sure_score
    lead, rest = selected[: policy.lead_windows], selected[policy.lead_windows :]
    grown = [_regrown(question, c, grown_for(shape, c, sure, policy), policy) for c in lead]
    return within(grown, _outside(rest, grown), policy.shape_outcome_chars)


def within(kept: Sequence[Checked], more: Sequence[Checked], budget: int) -> list[Checked]:
    """``kept``, then as many of ``more`` in order as fit ``budget`` characters in all."""
    out, used = list(kept), sum(char_count(c.window, c.doc) for c in kept)
    for item in more:
        size = char_count(item.window, item.doc)
        if used + size <= budget:
            out.append(item)
            used += size
    return out


def _outside(rest: Sequence[Checked], grown: Sequence[Checked]) -> list[Checked]:
    """The other windows without the units a grown lead window now holds (a window left with none
    goes): the same text is handed back once."""
    out: list[Checked] = []
    for item in rest:
        taken = {o for g in grown if g.window.key == item.window.key for o in g.window.ordinals}
        if not taken & set(item.window.ordinals):
            out.append(item)
        elif (left := without_units(item.window, taken)).ordinals:
            out.append(Checked(left, item.doc, item.check, item.best))
    return out
