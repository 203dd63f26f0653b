"""Expand first, rerank after: which grown windows a cross-encoder reads, what it is shown, and how
its score enters each window's evidence score."""

from __future__ import annotations

import pytest

from evidence_loop.policies.config import ADDED_LATER, Policy
from evidence_loop.policies.decision.rerank import rerank_pool, rerank_text, reranked
from evidence_loop.policies.evidence.checked import Checked, WindowCheck
from evidence_loop.policies.evidence.completeness import with_rerank
from evidence_loop.tools.parse import parse_document
from evidence_loop.tools.types import DocumentInput, ParsedDocument
from evidence_loop.tools.windows import Window

FILLER = " ".join(f"Sentence number {i:02d}." for i in range(10)) + "\n"
RERANK = Policy(rerank_k=2, rerank_chars=30, w_rerank=0.5)


@pytest.fixture(scope="module")
def filler() -> ParsedDocument:
    return parse_document(DocumentInput("f", FILLER, title="F"))


def _scored(doc: ParsedDocument, score: float, *ordinals: int) -> Checked:
    check = WindowCheck(1.0, 1.0, 1.0, 1.0, score, (), (), ())
    return Checked(Window(doc.doc_id, doc.version, ordinals), doc, check, 1.0)


def test_a_rerank_score_enters_the_evidence_score_with_its_weight() -> None:
    check = WindowCheck(1.0, 1.0, 1.0, 1.0, 0.6, (), (), ())
    assert (with_rerank(check, 0.8, RERANK).score, with_rerank(check, 0.8, RERANK).rerank) == (1.0, 0.8)


def test_a_second_rerank_score_replaces_the_first_rather_than_adding_to_it() -> None:
    check = WindowCheck(1.0, 1.0, 1.0, 1.0, 0.6, (), (), ())
    again = with_rerank(with_rerank(check, 0.8, RERANK), 0.2, RERANK)
    assert (again.score, again.rerank) == (0.7, 0.2)


def test_the_pool_is_the_best_windows_by_their_score_before_reranking(filler: ParsedDocument) -> None:
    a, b, c = _scored(filler, 0.5, 0), _scored(filler, 0.9, 4), _scored(filler, 0.7, 8)
    # a was lifted by an earlier reranking; without it, it is the weakest of the three
    lifted = Checked(a.window, a.doc, with_rerank(a.check, 1.0, RERANK), a.best)
    assert [p.window.first for p in rerank_pool([lifted, b, c], RERANK)] == [4, 8]


def test_the_reranker_reads_a_window_one_unit_a_line_cut_to_the_policys_length(
    filler: ParsedDocument,
) -> None:
    text = rerank_text(_scored(filler, 0.5, 0, 1), RERANK)
    assert text == "Sentence number 00.\nSentence n"


def test_reranked_windows_keep_their_order_and_the_rest_have_no_rerank_value(filler: ParsedDocument) -> None:
    items = [_scored(filler, 0.5, 0), _scored(filler, 0.9, 4), _scored(filler, 0.7, 8)]
    pool = rerank_pool(items, RERANK)
    out = reranked(items, pool, [0.0, 1.0], RERANK)
    assert [(c.window.first, c.check.score, c.check.rerank) for c in out] == [
        (0, 0.5, None),
        (4, 0.9, 0.0),
        (8, 1.2, 1.0),
    ]


def test_a_policy_recorded_before_reranking_replays_with_it_off() -> None:
    recorded = {k: v for k, v in Policy().as_dict().items() if k not in ADDED_LATER}
    policy = Policy.from_dict(recorded)
    assert (policy.rerank_k, policy.w_rerank) == (0, 0.0)
