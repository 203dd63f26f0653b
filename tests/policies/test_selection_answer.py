"""Selecting the evidence windows within the budgets, and picking the answer's units from them."""

from __future__ import annotations

from dataclasses import replace

import pytest

from policies.answer import answer_units
from policies.completeness import WindowCheck, check_window
from policies.config import Policy
from policies.question import Question, analyse
from policies.selection import Checked, select
from tools.parse import parse_document
from tools.types import DocumentInput, Hit, ParsedDocument
from tools.windows import Window

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
ANSWER = Policy(max_answer_sentences=3)


def _scored(doc: ParsedDocument, score: float, *ordinals: int) -> Checked:
    check = WindowCheck(1.0, 1.0, 1.0, 1.0, score, (), (), ())
    return Checked(Window(doc.doc_id, doc.version, ordinals), doc, check, 1.0)


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


def test_answer_units_prefer_the_unit_that_holds_the_asked_slot(warranty: ParsedDocument) -> None:
    question = analyse("How long is the LM-S10 warranty?")
    item = _checked(question, warranty, (1, 2, 3))
    assert [u.ordinal for _, u in answer_units(question, [item], Policy(max_answer_sentences=1))] == [2]


def test_answer_units_come_in_document_order(warranty: ParsedDocument) -> None:
    question = analyse("How long is the LM-S10 warranty?")
    item = _checked(question, warranty, (1, 2, 3))
    assert [u.ordinal for _, u in answer_units(question, [item], ANSWER)] == [2, 3]


def test_answer_units_are_capped_at_max_answer_sentences(warranty: ParsedDocument) -> None:
    question = analyse("warranty repairs shipping products")
    item = _checked(question, warranty, (1, 2, 3, 4, 5))
    assert len(answer_units(question, [item], Policy(max_answer_sentences=2))) == 2


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
