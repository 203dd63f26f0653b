"""The reviews a fit may rest on: a feedback log that verifies, traces that verify, reviewers who agree.

    reviews(traces, since)     each usable reviewed run's judge inputs and label, why each other run
                               was left out, and the log's chain verdict (``InputError`` when the log,
                               or its part from ``since`` on, does not verify)

The rules, in order:

1. The feedback log must verify (``traces.feedback.feedback_chain``): a changed, dropped, re-ordered or
   misfiled record, or a last record gone from under the tail anchor, refuses the fit, since a record
   removed may have superseded one that is kept. With ``since``, only the part of the log from that
   day on must verify (damage before it cannot touch a verdict posted after it). Records after the
   tail anchor (an append cut short) are left out.
2. Each reviewer's latest verdict on a run stands; an earlier one of the same reviewer is superseded.
3. A run whose standing verdicts give different labels (one reviewer says it should have answered,
   another that it should have refused) is left out: reviewers disagree, and neither label is fitted
   on. Verdicts that say nothing about answering (a conflict's) do not disagree with anything.
4. A run is read verified: a trace that fails its chain or its recorded end is left out, and so is a
   verdict that judged another end of the run (its ``run_hash`` is not the trace's final hash).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from evidence_loop.agent.tuning.feedback_fit import ReviewedRun, judged, label_of
from evidence_loop.tools.errors import InputError, NotFoundError, TraceError
from evidence_loop.traces import Trace, TraceStore
from evidence_loop.traces.feedback.feedback import FeedbackRecord, LogRead, by_run, standing
from evidence_loop.traces.feedback.feedback_chain import ChainCheck, check_log

GONE = "whose trace is gone or unreadable"
TAMPERED = "whose trace fails verification"
MOVED_ON = "whose trace no longer ends as reviewed"
NOT_ABOUT = "whose verdict is not about answering"
NO_JUDGE = "the judge did not sit on"
DISAGREE = "whose reviewers disagree"
UNANCHORED = "verdict(s) after the log's anchored tail"


@dataclass(frozen=True, slots=True)
class Reviews:
    """What a fit reads: the usable runs in review order, why the others were left out, the chain."""

    runs: list[ReviewedRun]
    left_out: Counter[str]
    chain: ChainCheck


def reviews(traces: TraceStore, since: date | None = None) -> Reviews:
    """The reviewed runs a fit can use (see the module docstring for the rules)."""
    read = traces.feedback.read_log()
    first = _first_since(read, since)
    chain = check_log(read, first)
    if not chain.ok:
        part = f"its part from {since.isoformat()} on" if since is not None else "the feedback log"
        raise InputError(
            f"{part} does not verify: {chain.reason}; a policy rests only on reviews that verify "
            "(`evloop feedback list` shows the log; with --since DAY only the part posted from DAY on "
            "must verify)"
        )
    kept = read.records[first : len(read.records) - chain.unanchored]
    left_out: Counter[str] = Counter()
    if chain.unanchored:
        left_out[UNANCHORED] = chain.unanchored
    runs = []
    for run_id, history in by_run(kept).items():
        run = _reviewed(traces, run_id, standing(history), left_out)
        if run is not None:
            runs.append(run)
    return Reviews(runs, left_out, chain)


def _first_since(read: LogRead, since: date | None) -> int:
    """The index of the first record posted on ``since`` or later (0 without ``since``)."""
    if since is None:
        return 0
    day = since.isoformat()
    return next((i for i, r in enumerate(read.records) if r.created_at[:10] >= day), len(read.records))


def _reviewed(
    traces: TraceStore, run_id: str, verdicts: Sequence[FeedbackRecord], left_out: Counter[str]
) -> ReviewedRun | None:
    """The run as the fit reads it, or None with the reason counted in ``left_out``."""
    trace = _verified(traces, run_id, left_out)
    if trace is None:
        return None
    final = trace.footer.hash if trace.footer is not None else None
    current = [v for v in verdicts if v.run_hash == final]
    if not current:
        left_out[MOVED_ON] += 1
        return None
    status = trace.footer.outcome_status if trace.footer is not None else None
    labels = {label for v in current if (label := label_of(v.verdict, status)) is not None}
    if len(labels) > 1:
        left_out[DISAGREE] += 1
        return None
    if not labels:
        left_out[NOT_ABOUT] += 1
        return None
    run = judged(trace, labels.pop())
    if run is None:
        left_out[NO_JUDGE] += 1
    return run


def _verified(traces: TraceStore, run_id: str, left_out: Counter[str]) -> Trace | None:
    """The run's trace when its chain and recorded end hold; None (counted) otherwise."""
    try:
        trace = traces.read(run_id)
    except (NotFoundError, TraceError):
        left_out[GONE] += 1
        return None
    if not traces.check(trace).ok:
        left_out[TAMPERED] += 1
        return None
    return trace
