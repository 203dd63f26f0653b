"""Calibrating the sufficiency judge: a corpus's own scale without labels, and the model from labels.

    self_calibrate(snapshot, controller)     CorpusScale: signals of pseudo-questions, document hidden
    ScaleKeeper(controller)                  the store's after-write step: measure when due
    refresh_scale(store, controller)         measure again now when the corpus is new or changed much
    judge_gap(snapshot, scale, controller)   why the calibrated judge cannot sit on a corpus, if it cannot
    labelled_rows(snapshot, controller, questions, scale)   judge inputs and labels of a labelled set
    fit_judge(rows_by_set)                   a JudgeModel (logistic regression), each set weighing alike

The scale is what makes one model serve every knowledge base: each signal enters the judge as a
z-score against what the same corpus gives a question whose answer is not in it (tools.store.calibration).
Only documents everyone may read are drawn, so the scale says nothing about restricted ones.

Every way documents come in (``evloop ingest``, ``reindex``, ``delete``, the HTTP routes,
``Service``, a PostgreSQL replica) writes through a store that holds a ``ScaleKeeper``: the scale is
measured inside the write that makes it due and committed with that generation.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from evidence_loop.agent.loop.controller import Controller
from evidence_loop.policies.decision.judge import RAW_SIGNALS
from evidence_loop.policies.decision.pseudo import distinct_drawable, pseudo_questions
from evidence_loop.policies.judge_model import JudgeModel
from evidence_loop.tools.search.snapshot import Snapshot
from evidence_loop.tools.store.calibration import CorpusScale
from evidence_loop.tools.store.folder import Store
from evidence_loop.traces.records.steps import CheckedStep, TraceStep

SAMPLES = 200
MIN_SAMPLES = 20  # fewer distinct readable sentences than this: no scale, the lexical rule decides
DRIFT = 0.25  # measure again once the corpus has grown or shrunk by this share of its units
FEATURES = ("semantic_top", "semantic_window", "coverage", "score", "slot_coverage")
# signals a policy may add, fitted on when every question of the fit has them (policies.decision.judge)
LATER_FEATURES = ("absent", "unstated")
ANSWER_RATES = (0.80, 0.85, 0.90, 0.93, 0.95, 0.97, 0.99)

Row = tuple[dict[str, float], bool]
Progress = Callable[[int, int], None]  # (pseudo-questions asked, of how many)


class _LastSignals:
    """A recorder that keeps the judge's inputs of a run's last completeness check."""

    def __init__(self) -> None:
        self.signals: dict[str, float] | None = None

    def record(self, step: TraceStep) -> None:
        if isinstance(step, CheckedStep):
            self.signals = dict(step.signals) if step.signals is not None else None


def run_signals(
    controller: Controller,
    snapshot: Snapshot,
    question: str,
    vector: npt.NDArray[np.float32],
    groups: Sequence[str] = (),
) -> dict[str, float] | None:
    """The judge's inputs for one question, the judge itself not sitting (no scale)."""
    recorder = _LastSignals()
    controller.ask(snapshot, question, groups, recorder=recorder, vector=vector)
    return recorder.signals


def self_calibrate(
    snapshot: Snapshot,
    controller: Controller,
    samples: int = SAMPLES,
    seed: int = 0,
    progress: Progress | None = None,
) -> CorpusScale | None:
    """The corpus's scale: mean and spread of each signal over pseudo-questions asked with their
    document hidden. None without vectors, or when the corpus has too few sentences to draw."""
    identity = controller.embedder_for(snapshot)
    if controller.embedder is None or identity is None:
        return None
    units = snapshot.public_units()
    if distinct_drawable(units, MIN_SAMPLES) < MIN_SAMPLES:
        return None  # a few short articles: their repeats would make any spread look narrow
    drawn = pseudo_questions(units, samples, seed)
    vectors = controller.embedder.queries([q for _, q in drawn])
    rows = []
    for done, ((doc_id, question), vector) in enumerate(zip(drawn, vectors, strict=True), start=1):
        signals = run_signals(controller, snapshot.hiding([doc_id]), question, vector)
        if signals is not None:
            rows.append(signals)
        if progress is not None:
            progress(done, len(drawn))
    if len(rows) < MIN_SAMPLES:
        return None
    names = [n for n in sorted(rows[0]) if n not in RAW_SIGNALS]
    table = np.array([[r[n] for n in names] for r in rows], dtype=np.float64)
    spread = zip(names, table.mean(axis=0).tolist(), table.std(axis=0).tolist(), strict=True)
    measured = tuple((n, round(m, 6), round(s, 6)) for n, m, s in spread)
    return CorpusScale(measured, len(rows), snapshot.generation, snapshot.unit_count, identity.key)


def needs_scale(scale: CorpusScale | None, snapshot: Snapshot) -> bool:
    """Never measured, measured with another embedder's vectors, or on a corpus much smaller or
    larger than this one."""
    if scale is None:
        return True
    made_by = snapshot.embedder
    if scale.embedder and made_by is not None and scale.embedder != made_by.key:
        return True
    return abs(snapshot.unit_count - scale.units) > DRIFT * max(scale.units, 1)


class ScaleKeeper:
    """The corpus's scale measured again whenever a write makes it due
    (``tools.store.calibration.ScaleMeter``).

    ``progress(done, total)`` is told each pseudo-question asked, for a bar on the command line.
    ``measured`` is the last scale it measured (None: it measured none).
    """

    def __init__(self, controller: Controller, progress: Progress | None = None) -> None:
        self.controller = controller
        self.progress = progress
        self.measured: CorpusScale | None = None

    def __call__(
        self, snapshot: Snapshot, current: CorpusScale | None, *, force: bool = False
    ) -> CorpusScale | None:
        if not force and not needs_scale(current, snapshot):
            return None
        scale = self_calibrate(snapshot, self.controller, progress=self.progress)
        if scale is not None:
            self.measured = scale
        return scale


def refresh_scale(store: Store, controller: Controller, *, force: bool = False) -> CorpusScale | None:
    """Measure and record the scale of the store's current corpus when it is due (or ``force``)."""
    return store.measure_scale(ScaleKeeper(controller), force=force)


@dataclass(frozen=True, slots=True)
class JudgeGap:
    """Why the calibrated judge cannot decide on a corpus, and what repairs it."""

    reason: str
    repair: Literal["embedder", "reindex", "calibrate", "grow"]


def judge_gap(snapshot: Snapshot, scale: CorpusScale | None, controller: Controller) -> JudgeGap | None:
    """Why the calibrated judge cannot decide on this corpus (the lexical rule then does), or None
    when it can, or when there is nothing to decide on yet (an empty corpus)."""
    policy = controller.policy
    if policy.judge is None or not policy.dense_recall or snapshot.unit_count == 0:
        return None  # a policy that turns the judge or vectors off chose the lexical rule
    if controller.embedder is None:
        return JudgeGap("no embedder is configured (EVLOOP_EMBEDDER=none)", "embedder")
    if controller.embedder_for(snapshot) is None:
        return JudgeGap("the index has no vectors of the configured embedder", "reindex")
    if scale is not None:
        return None
    if distinct_drawable(snapshot.public_units(), MIN_SAMPLES) < MIN_SAMPLES:
        return JudgeGap(
            f"the knowledge base holds fewer than {MIN_SAMPLES} sentences everyone may read, too few "
            "to measure its scale on",
            "grow",
        )
    return JudgeGap("the knowledge base has no measured scale (written by an older evloop)", "calibrate")


def labelled_rows(
    snapshot: Snapshot,
    controller: Controller,
    questions: Iterable[Mapping[str, Any]],
    scale: CorpusScale,
    progress: Progress | None = None,
) -> list[Row]:
    """(z-scored judge inputs, answerable?) for each question expecting an answer or a refusal;
    ``progress(done, total)`` after each."""
    asked = [q for q in questions if q.get("expect") in ("answer", "refuse")]
    assert controller.embedder is not None
    vectors = controller.embedder.queries([str(q["question"]) for q in asked])
    rows: list[Row] = []
    for done, (q, vector) in enumerate(zip(asked, vectors, strict=True), start=1):
        if progress is not None:
            progress(done - 1, len(asked))
        groups = [str(g) for g in q.get("groups") or []]
        signals = run_signals(controller, snapshot, str(q["question"]), vector, groups)
        if signals is not None:
            names = (*FEATURES, *(n for n in LATER_FEATURES if n in signals))
            rows.append(({n: scale.z(n, signals[n]) for n in names}, q["expect"] == "answer"))
    return rows


def _logistic(
    x: npt.NDArray[np.float64], y: npt.NDArray[np.float64], w: npt.NDArray[np.float64], l2: float
) -> npt.NDArray[np.float64]:
    """Weighted, L2-regularised logistic regression by Newton's method (the intercept unpenalised)."""
    z = np.c_[np.ones(len(x)), x]
    beta = np.zeros(z.shape[1])
    penalty = l2 * np.diag(np.r_[0.0, np.ones(z.shape[1] - 1)])
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-z @ beta))
        gradient = z.T @ (w * (p - y)) + penalty @ beta
        hessian = (z * (w * p * (1 - p))[:, None]).T @ z + penalty
        step = np.linalg.solve(hessian, gradient)
        beta -= step
        if float(np.abs(step).max()) < 1e-9:
            break
    return beta


def fit_judge(rows_by_set: Mapping[str, Sequence[Row]], l2: float = 1.0) -> JudgeModel:
    """A judge fitted on labelled sets, each set weighing the same however many questions it has.

    The operating points are the thresholds that answer each of ``ANSWER_RATES`` of the answerable
    questions, every set again weighing the same.
    """
    features = fitted_features(rows_by_set)
    xs, ys, ws = [], [], []
    for rows in rows_by_set.values():
        for z, label in rows:
            xs.append([z[n] for n in features])
            ys.append(1.0 if label else 0.0)
            ws.append(1.0 / len(rows))
    x, y, w = np.array(xs), np.array(ys), np.array(ws)
    w = w * len(w) / w.sum()
    beta = _logistic(x, y, w, l2)
    logits = np.c_[np.ones(len(x)), x] @ beta
    answerable = y == 1
    operating = tuple(
        (rate, round(_weighted_quantile(logits[answerable], w[answerable], 1 - rate), 6))
        for rate in ANSWER_RATES
    )
    weights = tuple(round(float(b), 6) for b in beta[1:])
    return JudgeModel(features, weights, round(float(beta[0]), 6), operating, tuple(rows_by_set))


def fitted_features(rows_by_set: Mapping[str, Sequence[Row]]) -> tuple[str, ...]:
    """``FEATURES`` and each later signal every row has (a fit on runs of an older policy has none)."""
    rows = [z for set_rows in rows_by_set.values() for z, _ in set_rows]
    return (*FEATURES, *(n for n in LATER_FEATURES if rows and all(n in z for z in rows)))


def _weighted_quantile(values: npt.NDArray[np.float64], weights: npt.NDArray[np.float64], q: float) -> float:
    order = np.argsort(values)
    cumulative = np.cumsum(weights[order]) / weights.sum()
    index = int(np.searchsorted(cumulative, q))
    return float(values[order][min(index, len(values) - 1)])


def auc(scores: Sequence[float], labels: Sequence[bool]) -> float:
    """The probability that an answerable question outscores an unanswerable one (ties count half)."""
    pos = [s for s, y in zip(scores, labels, strict=True) if y]
    neg = [s for s, y in zip(scores, labels, strict=True) if not y]
    if not pos or not neg:
        return math.nan
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg))
