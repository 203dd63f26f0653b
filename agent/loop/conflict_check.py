"""The conflict check wired into the loop: deterministic candidates, then an adjudicator.

Candidates come from ``policies.conflicts.candidates`` (pure). Each is judged by the LLM adjudicator when one
is configured, otherwise (or when it fails) by the rule-based adjudicator in
``policies.conflicts.adjudication``. Every verdict is recorded in the trace with who decided it and why; no
LLM call is made when there is no candidate.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial

from evidence_loop.agent.loop.runtime import ConflictReport, Recorder
from evidence_loop.agent.outcome import Citation, Conflict, ConflictSide
from evidence_loop.policies.config import Policy
from evidence_loop.policies.conflicts.adjudication import adjudicate_by_rules, conflict_outcome
from evidence_loop.policies.conflicts.candidates import CandidateScan, ConflictRules, find_candidates
from evidence_loop.policies.conflicts.wider import Anchor, anchored_candidates
from evidence_loop.policies.question.analysis import Question
from evidence_loop.policies.types import ConflictCandidate, ConflictVerdict, EvidenceView, ValueMention
from evidence_loop.traces.records.steps import (
    ConflictScanStep,
    ConflictStep,
    ScannedRecord,
    ValueRecord,
    parse_step,
)


@dataclass(frozen=True, slots=True)
class Adjudication:
    """What an adjudicator returns: one verdict per candidate, the calls it made, its records."""

    verdicts: tuple[ConflictVerdict, ...]
    llm_calls: int = 0
    records: tuple[Mapping[str, object], ...] = ()
    fallback_reason: str | None = None


Adjudicator = Callable[[str, Sequence[ConflictCandidate], Sequence[EvidenceView]], Adjudication]


def rules_adjudicator(
    question: str, candidates: Sequence[ConflictCandidate], views: Sequence[EvidenceView]
) -> Adjudication:
    """The offline default: conservative rules, no model."""
    return Adjudication(tuple(adjudicate_by_rules(c, views) for c in candidates))


def _citation(n: int, side: ValueMention, views: Mapping[str, EvidenceView]) -> Citation:
    view = views[side.evidence_id]
    return Citation(
        n=n,
        evidence_id=side.evidence_id,
        doc_id=side.doc_id,
        version=side.version,
        section=list(view.section),
        start=side.start,
        end=side.end,
        quote=side.quote,
    )


def as_conflict(verdict: ConflictVerdict, views: Mapping[str, EvidenceView]) -> Conflict:
    """A verdict as the outcome shows it: each side's value with its citation."""
    c = verdict.candidate
    return Conflict(
        slot=c.slot,
        values=[
            ConflictSide(value=c.left.value, citation=_citation(1, c.left, views)),
            ConflictSide(value=c.right.value, citation=_citation(2, c.right, views)),
        ],
        verdict=verdict.verdict,
        adjudicator=verdict.adjudicator,
        reason=verdict.reason,
        scope=verdict.scope,
    )


def _value(side: ValueMention) -> ValueRecord:
    return {
        "value": side.value,
        "doc_id": side.doc_id,
        "version": side.version,
        "start": side.start,
        "end": side.end,
    }


def _step(verdict: ConflictVerdict) -> ConflictStep:
    c = verdict.candidate
    return ConflictStep(
        slot=c.slot,
        kind=c.kind,
        values=[_value(c.left), _value(c.right)],
        verdict=verdict.verdict,
        adjudicator=verdict.adjudicator,
        reason=verdict.reason,
        scope=verdict.scope,
    )


def _scan_step(scan: CandidateScan) -> ConflictScanStep:
    dropped: list[ScannedRecord] = [
        {
            "slot": d.candidate.slot,
            "kind": d.candidate.kind,
            "values": [_value(d.candidate.left), _value(d.candidate.right)],
            "dropped": d.reason,
        }
        for d in scan.dropped
    ]
    return ConflictScanStep(candidates=len(scan.candidates) + len(scan.resolved), dropped=dropped)


class ConflictChecker:
    """The ``ConflictCheck`` seam: scan, adjudicate (LLM or rules), record, report."""

    def __init__(self, adjudicator: Adjudicator | None = None, rules: ConflictRules | None = None) -> None:
        self.adjudicator = adjudicator or rules_adjudicator
        self.rules = rules or ConflictRules.of(Policy())

    def under(self, policy: Policy) -> ConflictChecker:
        """The same check with the candidate rules a policy sets (the controller binds its own)."""
        return ConflictChecker(self.adjudicator, ConflictRules.of(policy))

    def __call__(
        self,
        question: Question,
        views: Sequence[EvidenceView],
        recorder: Recorder,
        anchor: Anchor | None = None,
    ) -> ConflictReport:
        """``anchor``: the statement that answers, for the wider lookup's pairs (``agent.loop.wider``)."""
        anchored = None if anchor is None else partial(anchored_candidates, anchor=anchor)
        scan = find_candidates(question, views, self.rules, anchored)
        adjudication = (
            self.adjudicator(question.text, scan.candidates, views) if scan.candidates else Adjudication(())
        )
        if scan.dropped:  # what was set aside and why, before the verdicts on what was not
            recorder.record(_scan_step(scan))
        for record in adjudication.records:  # requests and replies as tools.models.llm_client keeps them
            recorder.record(parse_step(str(record["step"]), dict(record)))
        verdicts = (*scan.resolved, *adjudication.verdicts)
        for verdict in verdicts:
            recorder.record(_step(verdict))
        by_id = {v.evidence_id: v for v in views}
        return ConflictReport(
            conflicts=tuple(as_conflict(v, by_id) for v in verdicts),
            blocking=conflict_outcome(verdicts),
            llm_calls=adjudication.llm_calls,
        )
