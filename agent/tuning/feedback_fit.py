"""From reviewers' verdicts to a knowledge base's own judge: ``evloop calibrate --feedback``.

    label_of(verdict, status)          answerable? from a verdict and what the run did (None: no label)
    judged(trace, answerable)          a reviewed run's judge inputs, from its trace
    shortfall(runs)                    how many more reviews of each kind a fit needs
    fit_feedback(runs, answer_rate)    a JudgeModel fitted on the reviewed runs
    cross_validated(runs, rate)        the operating point the fit reaches on runs it did not see
    cross_validated_statuses(...)      each run's status as decided by a fit that did not see it
    recorded_point(runs)               the operating point the current policy reached on the same runs

Nothing is asked again: the signals are the ones each run's last completeness check recorded,
z-scored with the corpus scale its header pinned. A new judge changes only the judge's own call:
a run refused for another missing piece (an uncovered slot, a dangling reference) stays refused,
and a run that stopped on a conflict stays there. Which reviews count (a log and traces that verify,
each reviewer's latest verdict, no disagreement) is ``agent.tuning.feedback_reviews``; which operating point
is taken, ``agent.tuning.feedback_choice``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from evidence_loop.agent.loop.calibrate import FEATURES, Row, fit_judge
from evidence_loop.policies.judge_model import JudgeModel
from evidence_loop.tools.store.calibration import CorpusScale
from evidence_loop.traces import Trace
from evidence_loop.traces.records.steps import CheckedStep

MIN_PER_KIND = 15  # fewer reviews than this of answerable or of unanswerable runs: no fit
FOLDS = 5
ANSWERED, CONFLICT = "answered", "conflicting_evidence"
JUDGE_PIECE = "no_relevant_evidence"  # the missing piece the judge's refusal lists


@dataclass(frozen=True, slots=True)
class ReviewedRun:
    """One reviewed run as the fit reads it."""

    run_id: str
    z: dict[str, float]  # the judge's inputs on the corpus's own scale
    answerable: bool  # the reviewer's label: its evidence should have been answered from
    recorded: str  # the outcome status the run had
    blocked: bool  # another missing piece than the judge's refused it: a new judge does not change it


@dataclass(frozen=True, slots=True)
class OperatingPoint:
    """What a decision rule does on labelled runs."""

    reviews: int
    answer: float  # share of answerable runs answered
    refusal: float  # share of unanswerable runs refused
    correct: float  # share of runs decided as their label says


def label_of(verdict: str, status: str | None) -> bool | None:
    """Whether the run's evidence should have been answered from; None when the verdict says
    nothing about that (a conflict's verdicts, a run that stopped on a conflict judged correct)."""
    if verdict == "correct":
        return None if status in (None, CONFLICT) else status == ANSWERED
    return {"should_have_answered": True, "should_have_refused": False, "wrong_evidence": False}.get(verdict)


def judged(trace: Trace, answerable: bool) -> ReviewedRun | None:
    """The run's judge inputs from its last completeness check and its header's scale."""
    checks = [e.data for e in trace.events if isinstance(e.data, CheckedStep)]
    scale_data = trace.header.judge.get("scale")
    signals = checks[-1].signals if checks else None
    if signals is None or not isinstance(scale_data, dict) or any(n not in signals for n in FEATURES):
        return None
    last, scale = checks[-1], CorpusScale.from_dict(scale_data)
    z = {name: scale.z(name, signals[name]) for name in FEATURES}
    blocked = any(piece["kind"] != JUDGE_PIECE for piece in last.missing)
    status = trace.footer.outcome_status if trace.footer is not None else ""
    return ReviewedRun(trace.header.run_id, z, answerable, status, blocked)


def shortfall(runs: Sequence[ReviewedRun]) -> tuple[int, int]:
    """More reviews needed of runs that should answer, and of runs that should refuse (0: enough)."""
    answerable = sum(r.answerable for r in runs)
    return max(0, MIN_PER_KIND - answerable), max(0, MIN_PER_KIND - (len(runs) - answerable))


def fit_feedback(runs: Sequence[ReviewedRun], l2: float = 1.0) -> JudgeModel:
    rows: list[Row] = [(r.z, r.answerable) for r in runs]
    return fit_judge({"feedback": rows}, l2=l2)


def decided(model: JudgeModel, threshold: float, run: ReviewedRun) -> str:
    """The outcome status a run would have had with ``model`` judging at ``threshold``."""
    if run.recorded == CONFLICT:
        return CONFLICT
    return ANSWERED if model.logit(run.z) >= threshold and not run.blocked else "insufficient_evidence"


def point(runs: Sequence[ReviewedRun], statuses: Sequence[str]) -> OperatingPoint:
    """Answer rate, refusal rate and correct share of ``statuses`` against the runs' labels."""
    answered = [s == ANSWERED for s in statuses]
    pos = [a for a, r in zip(answered, runs, strict=True) if r.answerable]
    neg = [not a for a, r in zip(answered, runs, strict=True) if not r.answerable]
    right = sum(a == r.answerable for a, r in zip(answered, runs, strict=True))
    return OperatingPoint(
        len(runs),
        round(sum(pos) / max(len(pos), 1), 4),
        round(sum(neg) / max(len(neg), 1), 4),
        round(right / max(len(runs), 1), 4),
    )


def recorded_point(runs: Sequence[ReviewedRun]) -> OperatingPoint:
    """The current policy's operating point: what the reviewed runs did."""
    return point(runs, [r.recorded for r in runs])


def cross_validated(
    runs: Sequence[ReviewedRun], answer_rate: float, bias: float = 0.0, l2: float = 1.0, folds: int = FOLDS
) -> OperatingPoint:
    """The operating point of ``cross_validated_statuses``."""
    return point(runs, cross_validated_statuses(runs, answer_rate, bias, l2, folds))


def cross_validated_statuses(
    runs: Sequence[ReviewedRun], answer_rate: float, bias: float = 0.0, l2: float = 1.0, folds: int = FOLDS
) -> list[str]:
    """Each run decided by a judge fitted on the other folds (runs dealt to folds in turn), at the
    threshold for ``answer_rate`` moved by ``bias`` (the policy's refusal bias)."""
    statuses = [""] * len(runs)
    for fold in range(folds):
        held = range(fold, len(runs), folds)
        training = [r for i, r in enumerate(runs) if i % folds != fold]
        model = fit_feedback(training, l2)
        threshold = model.threshold(answer_rate) + bias
        for i in held:
            statuses[i] = decided(model, threshold, runs[i])
    return statuses
