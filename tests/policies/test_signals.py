"""The signals an outcome reports, read off the selected evidence."""

from __future__ import annotations

import pytest

from evidence_loop.policies.decision.judge import JudgeVerdict
from evidence_loop.policies.decision.signals import EvidenceSignals, evidence_signals
from evidence_loop.policies.evidence.checked import Checked, WindowCheck
from evidence_loop.policies.question.analysis import analyse
from evidence_loop.tools.parse import parse_document
from evidence_loop.tools.types import DocumentInput, Hit, ParsedDocument
from evidence_loop.tools.windows import Window

FILLER = " ".join(f"Sentence number {i:02d}." for i in range(10)) + "\n"
QUESTION = analyse("Which sentence number?")


@pytest.fixture(scope="module")
def filler() -> ParsedDocument:
    return parse_document(DocumentInput("f", FILLER, title="F"))


def _window(doc: ParsedDocument, score: float, seed_scores: tuple[float, ...], *ordinals: int) -> Checked:
    hits = tuple(Hit(doc.units[o], s, 0) for o, s in zip(ordinals, seed_scores, strict=False))
    check = WindowCheck(0.3, 0.8, 1.0, 0.75, score, (), (), (), cosine=0.9)
    return Checked(Window(doc.doc_id, doc.version, ordinals, hits), doc, check, 1.0)


def test_without_evidence_every_score_is_zero() -> None:
    assert evidence_signals(QUESTION, [], None) == EvidenceSignals(
        0.0, 0.0, 0.0, 0.0, 0.0, 0.0, None, None, None
    )


def test_the_lead_window_speaks_for_the_evidence_and_the_best_seed_anywhere_in_it(
    filler: ParsedDocument,
) -> None:
    lead, other = _window(filler, 0.7, (1.2,), 0, 1), _window(filler, 0.5, (2.5,), 5)
    signals = evidence_signals(QUESTION, [lead, other], None)
    assert (signals.relevance, signals.coverage, signals.slot_coverage, signals.boundary, signals.score) == (
        0.3,
        0.8,
        1.0,
        0.75,
        0.7,
    )
    assert signals.lexical_score == 2.5
    assert signals.semantic is None  # lexical recall: the question has no cosines


def test_the_judge_reports_its_probability_and_the_one_its_operating_point_needs(
    filler: ParsedDocument,
) -> None:
    verdict = JudgeVerdict(probability=0.8, logit=1.386294, threshold=0.0, answer=True)
    signals = evidence_signals(QUESTION, [_window(filler, 0.7, (1.0,), 0)], verdict)
    assert (signals.judge, signals.judge_threshold) == (0.8, 0.5)
