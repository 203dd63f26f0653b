"""Calibrating the sufficiency judge: a corpus's own scale without labels, and the model from labels.

    self_calibrate(snapshot, controller)     CorpusScale: signals of pseudo-questions, document hidden
    refresh_scale(store, controller)         measure again when the corpus is new or changed much
    labelled_rows(snapshot, controller, questions, scale)   judge inputs and labels of a labelled set
    fit_judge(rows_by_set)                   a JudgeModel (logistic regression), each set weighing alike

The scale is what makes one model serve every knowledge base: each signal enters the judge as a
z-score against what the same corpus gives a question whose answer is not in it (tools.calibration).
Only documents everyone may read are drawn, so the scale says nothing about restricted ones.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from evidence_loop.agent.controller import Controller
from evidence_loop.policies.judge_model import JudgeModel
from evidence_loop.policies.pseudo import pseudo_questions
from evidence_loop.tools.calibration import CorpusScale
from evidence_loop.tools.snapshot import Snapshot
from evidence_loop.tools.store import Store
from evidence_loop.traces.steps import CheckedStep, TraceStep

SAMPLES = 200
MIN_SAMPLES = 20  # fewer readable sentences than this: no scale, the lexical rule decides
DRIFT = 0.25  # measure again once the corpus has grown or shrunk by this share of its units
FEATURES = ("semantic_top", "semantic_window", "coverage", "score", "slot_coverage")
ANSWER_RATES = (0.80, 0.85, 0.90, 0.93, 0.95, 0.97, 0.99)

Row = tuple[dict[str, float], bool]


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
    snapshot: Snapshot, controller: Controller, samples: int = SAMPLES, seed: int = 0
) -> CorpusScale | None:
    """The corpus's scale: mean and spread of each signal over pseudo-questions asked with their
    document hidden. None without vectors, or when the corpus has too few sentences to draw."""
    if controller.embedder is None or controller.embedder_for(snapshot) is None:
        return None
    drawn = pseudo_questions(snapshot.public_units(), samples, seed)
    if len(drawn) < MIN_SAMPLES:
        return None
    vectors = controller.embedder.queries([q for _, q in drawn])
    rows = []
    for (doc_id, question), vector in zip(drawn, vectors, strict=True):
        signals = run_signals(controller, snapshot.hiding([doc_id]), question, vector)
        if signals is not None:
            rows.append(signals)
    if len(rows) < MIN_SAMPLES:
        return None
    names = sorted(rows[0])
    table = np.array([[r[n] for n in names] for r in rows], dtype=np.float64)
    spread = zip(names, table.mean(axis=0).tolist(), table.std(axis=0).tolist(), strict=True)
    measured = tuple((n, round(m, 6), round(s, 6)) for n, m, s in spread)
    return CorpusScale(measured, len(rows), snapshot.generation, snapshot.unit_count)


def needs_scale(scale: CorpusScale | None, snapshot: Snapshot) -> bool:
    """Never measured, or measured on a corpus much smaller or larger than this one."""
    if scale is None:
        return True
    return abs(snapshot.unit_count - scale.units) > DRIFT * max(scale.units, 1)


def refresh_scale(store: Store, controller: Controller, *, force: bool = False) -> CorpusScale | None:
    """Measure and record the scale of the store's current corpus when it is due (or ``force``)."""
    snapshot = store.snapshot()
    current = store.scale()
    if not force and not needs_scale(current, snapshot):
        return current
    scale = self_calibrate(snapshot, controller)
    if scale is not None:
        store.save_scale(scale)
    return scale if scale is not None else current


def labelled_rows(
    snapshot: Snapshot,
    controller: Controller,
    questions: Iterable[Mapping[str, Any]],
    scale: CorpusScale,
) -> list[Row]:
    """(z-scored judge inputs, answerable?) for each question expecting an answer or a refusal."""
    asked = [q for q in questions if q.get("expect") in ("answer", "refuse")]
    assert controller.embedder is not None
    vectors = controller.embedder.queries([str(q["question"]) for q in asked])
    rows: list[Row] = []
    for q, vector in zip(asked, vectors, strict=True):
        groups = [str(g) for g in q.get("groups") or []]
        signals = run_signals(controller, snapshot, str(q["question"]), vector, groups)
        if signals is not None:
            rows.append(({n: scale.z(n, signals[n]) for n in FEATURES}, q["expect"] == "answer"))
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
    xs, ys, ws = [], [], []
    for rows in rows_by_set.values():
        for z, label in rows:
            xs.append([z[n] for n in FEATURES])
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
    return JudgeModel(FEATURES, weights, round(float(beta[0]), 6), operating, tuple(rows_by_set))


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
