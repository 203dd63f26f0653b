"""Selecting the evidence windows within the budgets, and picking the answer's units from them."""

from __future__ import annotations

from dataclasses import replace

import pytest

from evidence_loop.policies.config import Policy
from evidence_loop.policies.decision.answer import answer_units
from evidence_loop.policies.evidence.checked import Checked, WindowCheck
from evidence_loop.policies.evidence.completeness import check_window, with_rerank
from evidence_loop.policies.evidence.selection import (
    conflict_extras,
    regrown,
    select,
    shortlist,
    statement_span,
)
from evidence_loop.policies.question.analysis import Question, analyse
from evidence_loop.tools.parse import parse_document
from evidence_loop.tools.types import DocumentInput, Hit, ParsedDocument
from evidence_loop.tools.windows import Window

# Ten sentences of 19 characters each (plus a space between), so budgets are easy to count.
FILLER = " ".join(f"Sentence number {i:02d}." for i in range(10)) + "\n"

WARRANTY = """# Warranty

Our products are well made. The LM-S10 has a three year warranty. The warranty covers parts.
Repairs take five days. Shipping is free.
"""
# 0 heading | 1 well made | 2 LM-S10 three year | 3 covers parts | 4 repairs | 5 shipping


@pytest.fixture(scope="module")
def filler() -> ParsedDocument:
    return parse_document(DocumentInput("f", FILLER, title="F"))


@pytest.fixture(scope="module")
def warranty() -> ParsedDocument:
    return parse_document(DocumentInput("w", WARRANTY, format="markdown", title="Warranty"))


# Explicit numbers, so the specification does not drift with the shipped defaults.
SELECT = Policy(max_windows=3, outcome_budget=2400, window_keep_ratio=0.6)
# the answer as records made before quote_stating read it (policies.decision.answer; the rule since is
# specified in test_answer_quotes.py)
ANSWER = Policy(max_answer_sentences=3, quote_stating=False)


def _scored(doc: ParsedDocument, score: float, *ordinals: int) -> Checked:
    check = WindowCheck(1.0, 1.0, 1.0, 1.0, score, (), (), ())
    return Checked(Window(doc.doc_id, doc.version, ordinals), doc, check, 1.0)


def _seeded(doc: ParsedDocument, score: float, *ordinals: int) -> Checked:
    """A scored window seeded by its first unit."""
    item = _scored(doc, score, *ordinals)
    return replace(item, window=replace(item.window, seeds=(Hit(doc.units[ordinals[0]], 1.0, 0),)))


def _firsts(items: list[Checked]) -> list[int]:
    return [c.window.first for c in items]


def _checked(
    question: Question, doc: ParsedDocument, ordinals: tuple[int, ...], seeds: tuple[int, ...] = ()
) -> Checked:
    hits = tuple(Hit(doc.units[o], 5.0, r) for r, o in enumerate(seeds))
    window = Window(doc.doc_id, doc.version, ordinals, hits)
    return Checked(window, doc, check_window(question, window, doc, 5.0, Policy()), 5.0)


def test_the_fixture_units_are_nineteen_characters_each(filler: ParsedDocument) -> None:
    assert [len(u.text) for u in filler.units] == [19] * 10


def test_select_puts_the_best_window_first(filler: ParsedDocument) -> None:
    items = [_scored(filler, 0.6, 0), _scored(filler, 0.9, 4), _scored(filler, 0.7, 8)]
    assert _firsts(select(items, SELECT)) == [4, 8, 0]


def test_select_breaks_score_ties_by_position(filler: ParsedDocument) -> None:
    items = [_scored(filler, 0.8, 8), _scored(filler, 0.8, 0)]
    assert _firsts(select(items, SELECT)) == [0, 8]


def test_select_drops_windows_far_below_the_best(filler: ParsedDocument) -> None:
    items = [_scored(filler, 0.9, 0), _scored(filler, 0.5, 4)]  # floor is 0.9 * 0.6 = 0.54
    assert _firsts(select(items, SELECT)) == [0]


def test_select_keeps_at_most_max_windows(filler: ParsedDocument) -> None:
    items = [_scored(filler, 0.9 - i / 100, i * 2) for i in range(5)]
    assert _firsts(select(items, replace(SELECT, max_windows=2))) == [0, 2]


def test_select_skips_a_window_that_would_overrun_the_outcome_budget(filler: ParsedDocument) -> None:
    items = [_scored(filler, 0.9, 0, 1), _scored(filler, 0.8, 4, 5), _scored(filler, 0.7, 8)]
    # 39 + 39 characters would be 78 > 70; the 19-character window still fits
    assert _firsts(select(items, replace(SELECT, outcome_budget=70))) == [0, 8]


def test_select_always_keeps_the_best_window_even_over_budget(filler: ParsedDocument) -> None:
    items = [_scored(filler, 0.9, 0, 1, 2, 3)]
    assert _firsts(select(items, replace(SELECT, outcome_budget=10))) == [0]


def test_select_keeps_pinned_windows_first_even_below_the_floor(filler: ParsedDocument) -> None:
    best, weak = _scored(filler, 0.9, 0), _scored(filler, 0.1, 6)
    assert _firsts(select([best, weak], SELECT, pinned=[weak])) == [6, 0]


FILL = replace(SELECT, fill_ratio=0.4, fill_chars=40)


def test_a_factoid_question_also_reads_a_weaker_window_while_its_evidence_is_short(
    filler: ParsedDocument,
) -> None:
    items = [_scored(filler, 0.9, 0), _scored(filler, 0.5, 4)]  # below 0.54, above 0.9 * 0.4 = 0.36
    assert _firsts(select(items, FILL, factoid=True)) == [0, 4]  # 19 + 19 characters <= 40
    assert _firsts(select(items, FILL)) == [0]  # a how-to question does not


def test_a_factoid_question_stops_filling_at_fill_chars(filler: ParsedDocument) -> None:
    items = [_scored(filler, 0.9, 0), _scored(filler, 0.5, 4), _scored(filler, 0.45, 8)]
    assert _firsts(select(items, FILL, factoid=True)) == [0, 4]  # a third would make 57 > 40


def test_a_factoid_question_does_not_read_windows_below_the_fill_ratio(filler: ParsedDocument) -> None:
    items = [_scored(filler, 0.9, 0), _scored(filler, 0.3, 4)]
    assert _firsts(select(items, FILL, factoid=True)) == [0]


def test_select_of_nothing_is_nothing() -> None:
    assert select([], SELECT) == []


SHORTLIST = Policy(lead_windows=2, max_windows=4, runner_budget=200)


def test_the_lead_windows_are_kept_as_grown_and_the_next_ones_are_runners_up(filler: ParsedDocument) -> None:
    items = [_scored(filler, 0.9 - i / 10, i * 2) for i in range(5)]
    lead, runners = shortlist(items, SHORTLIST)
    assert (_firsts(lead), _firsts(runners)) == ([0, 2], [4, 6])


@pytest.mark.parametrize("policy", [replace(SHORTLIST, mode="parent"), replace(SHORTLIST, runner_budget=0)])
def test_an_ablation_or_no_runner_budget_shortlists_the_lead_windows_only(
    filler: ParsedDocument, policy: Policy
) -> None:
    items = [_scored(filler, 0.9 - i / 10, i * 2) for i in range(5)]
    assert [_firsts(part) for part in shortlist(items, policy)] == [[0, 2], []]


def test_a_regrown_runner_up_keeps_the_rerank_score_of_its_passage_as_grown(filler: ParsedDocument) -> None:
    grown = _scored(filler, 0.5, 4, 5, 6)
    grown = replace(grown, check=with_rerank(grown.check, 0.8, Policy()))
    short = regrown(grown, _scored(filler, 0.4, 5), Policy())
    assert short.check.rerank == 0.8
    assert short.check.score == with_rerank(_scored(filler, 0.4, 5).check, 0.8, Policy()).score


def test_the_conflict_check_also_reads_close_windows_up_to_the_pool_size(filler: ParsedDocument) -> None:
    items = [_seeded(filler, score, i * 2) for i, score in enumerate((0.9, 0.8, 0.5, 0.2))]
    policy = Policy(conflict_pool_ratio=0.3, conflict_pool_max=3)
    # 0.2 is below 0.9 * 0.3; the pool holds the selected window and two more
    assert _firsts(conflict_extras(items, items[:1], policy)) == [2, 4]
    assert _firsts(conflict_extras(items, items[:1], replace(policy, conflict_pool_max=1))) == []


def test_the_conflict_check_does_not_read_a_selected_runner_ups_original_again(
    filler: ParsedDocument,
) -> None:
    original, other = _seeded(filler, 0.9, 2, 3), _seeded(filler, 0.8, 6)
    short = _seeded(filler, 0.5, 2)  # the runner-up regrown from the same seed
    assert _firsts(conflict_extras([original, other], [short], Policy())) == [6]


def test_a_disagreement_is_looked_for_where_a_window_speaks_to_the_question(warranty: ParsedDocument) -> None:
    question = analyse("Does the warranty cover repairs?")  # 2: warranty; 3: warranty, covers; 4: repairs
    units = warranty.units[1:6]
    assert statement_span(question, units, Policy()) == (warranty.units[2].start, warranty.units[4].end)
    assert statement_span(question, units, Policy(statement_term_share=1.0)) == (
        warranty.units[3].start,
        warranty.units[3].end,
    )


def test_answer_units_prefer_the_unit_that_holds_the_asked_slot(warranty: ParsedDocument) -> None:
    question = analyse("How long is the LM-S10 warranty?")
    item = _checked(question, warranty, (1, 2, 3))
    assert [
        u.ordinal for _, u in answer_units(question, [item], replace(ANSWER, max_answer_sentences=1))
    ] == [2]


def test_answer_units_come_in_document_order(warranty: ParsedDocument) -> None:
    question = analyse("How long is the LM-S10 warranty?")
    item = _checked(question, warranty, (1, 2, 3))
    assert [u.ordinal for _, u in answer_units(question, [item], ANSWER)] == [2, 3]


def test_answer_units_are_capped_at_max_answer_sentences(warranty: ParsedDocument) -> None:
    question = analyse("warranty repairs shipping products")
    item = _checked(question, warranty, (1, 2, 3, 4, 5))
    assert len(answer_units(question, [item], replace(ANSWER, max_answer_sentences=2))) == 2


def test_answer_units_skip_units_that_say_nothing_of_the_question(warranty: ParsedDocument) -> None:
    question = analyse("How long do repairs take?")
    item = _checked(question, warranty, (1, 2, 3, 4, 5))
    assert [u.ordinal for _, u in answer_units(question, [item], ANSWER)] == [4]


def test_answer_units_never_quote_a_heading(warranty: ParsedDocument) -> None:
    question = analyse("warranty")
    item = _checked(question, warranty, (0, 1, 2, 3))
    assert all(u.kind != "heading" for _, u in answer_units(question, [item], ANSWER))


def test_answer_units_keep_the_evidence_index_of_their_window(warranty: ParsedDocument) -> None:
    question = analyse("How long is the LM-S10 warranty?")
    other = _checked(question, warranty, (5,))
    item = _checked(question, warranty, (2,))
    assert [(i, u.ordinal) for i, u in answer_units(question, [other, item], ANSWER)] == [(1, 2)]


def test_answer_units_follow_evidence_order_across_windows(warranty: ParsedDocument) -> None:
    question = analyse("repairs warranty")
    first = _checked(question, warranty, (4,))
    second = _checked(question, warranty, (3,))
    assert [(i, u.ordinal) for i, u in answer_units(question, [first, second], ANSWER)] == [(0, 4), (1, 3)]
