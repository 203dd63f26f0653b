"""Relevance: how much of the question's terms a text covers, and recall scores as 0..1."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from evidence_loop.policies.evidence.coverage import covered_terms, term_share
from evidence_loop.policies.evidence.relevance import lexical_relevance
from evidence_loop.policies.question.analysis import analyse

COVERAGE = [
    (("退款", "期限"), "退款期限为7天。", 1.0),
    (("退款", "期限"), "退款将原路返回。", 0.5),
    (("退款", "期限"), "请联系客服。", 0.0),
    (("refund",), "Refunds are issued within 30 days.", 1.0),  # stemmed on both sides
    (("改期",), "每位学员可改期一次。", 1.0),
    (("改期",), "改期一次需提前申请", 1.0),  # segmented differently: found as a substring
    (("课程改期",), "课程可以改期", 0.0),  # a substring, not a bag of characters
    (("群",), "人群画像的导出", 0.0),  # single characters are not substring-matched
    (("群",), "进入群。", 1.0),  # but count as a token
]


@pytest.mark.parametrize(("terms", "text", "expected"), COVERAGE, ids=[f"{t}|{x}" for t, x, _ in COVERAGE])
def test_term_coverage_is_the_share_of_terms_in_the_text(
    terms: tuple[str, ...], text: str, expected: float
) -> None:
    assert term_share(terms, [text]) == expected


def test_term_coverage_is_one_when_there_are_no_terms() -> None:
    assert term_share((), ["任何文本"]) == 1.0


HALF = 5.0
RECALL_SCORES = [
    (HALF, HALF, 0.5),  # the best hit at the half score is half relevant
    (2.5, 2.5, 1 / 3),  # a fused recall score is at most 2.5
    (15.0, 15.0, 0.75),
    (5.0, 15.0, 0.25),  # a third of a strong best
    (0.0, 10.0, 0.0),
    (-1.0, 10.0, 0.0),
    (8.0, 0.0, 8.0 / 13.0),  # a best below the score is read as the score
]


@pytest.mark.parametrize(("score", "best", "expected"), RECALL_SCORES)
def test_lexical_relevance_scales_scores_to_zero_one(score: float, best: float, expected: float) -> None:
    assert lexical_relevance(score, best, HALF) == pytest.approx(expected)


def test_lexical_relevance_grows_with_the_score_for_a_fixed_best() -> None:
    values = [lexical_relevance(s, 12.0, HALF) for s in (1.0, 4.0, 8.0, 12.0)]
    assert values == sorted(values) and values[-1] < 1.0


def test_a_misspelled_question_word_counts_once_spelled_against_the_corpus() -> None:
    known = {"schedul", "cancel", "view"}

    def spell(terms: Sequence[str]) -> list[str]:
        return ["schedul" if t == "shedul" else t for t in terms]

    question = analyse("How do I shedule a viewing?", spell=spell)
    assert set(question.terms) <= known
    assert covered_terms(question.terms, ["Cancel a scheduled viewing."]) == frozenset(question.terms)


def test_without_spelling_a_misspelled_word_is_not_covered() -> None:
    assert covered_terms(("shedul",), ["Cancel a scheduled viewing."]) == frozenset()
