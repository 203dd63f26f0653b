"""The signals an outcome reports: the scores that decided it, read off the selected evidence.

The lead window (the first selected) speaks for the evidence: its relevance, coverage, slot
coverage, boundary completeness and score. Beside them, the best recall score of any seed inside
the evidence, the lead window's semantic similarity (hybrid recall only) and the judge's verdict
when it sat.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from evidence_loop.policies.decision.judge import JudgeVerdict, probability
from evidence_loop.policies.evidence.checked import Checked
from evidence_loop.policies.question.analysis import Question


@dataclass(frozen=True, slots=True)
class EvidenceSignals:
    """The evidence's signals; ``agent.outcome.Signals`` adds the run's counts to them."""

    relevance: float
    # the best lexical recall score of a seed hit in the evidence: unit BM25 over the best unit's
    # plus ``fusion_weight`` times passage BM25 over the best passage's (tools.search.snapshot), not raw BM25
    lexical_score: float
    coverage: float
    slot_coverage: float
    boundary: float
    score: float
    semantic: float | None  # the lead window's best cosine with the question; None with lexical recall
    judge: float | None  # the judge's probability that the evidence answers; None when it did not sit
    judge_threshold: float | None  # the probability the operating point needs


def evidence_signals(
    question: Question, selected: Sequence[Checked], verdict: JudgeVerdict | None
) -> EvidenceSignals:
    """The signals of the selected evidence (zeros when there is none)."""
    lead = selected[0].check if selected else None
    return EvidenceSignals(
        relevance=lead.relevance if lead else 0.0,
        lexical_score=max((h.score for c in selected for h in c.window.seeds), default=0.0),
        coverage=lead.coverage if lead else 0.0,
        slot_coverage=lead.slot_coverage if lead else 0.0,
        boundary=lead.boundary if lead else 0.0,
        score=lead.score if lead else 0.0,
        semantic=lead.cosine if lead and question.cosines is not None else None,
        judge=verdict.probability if verdict else None,
        judge_threshold=probability(verdict.threshold) if verdict else None,
    )
