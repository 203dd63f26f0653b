"""Which point `evloop calibrate --feedback` takes when not told: the fit's, only when it holds up.

    curve(runs, bias, l2)     each answer rate's 5-fold cross-validated point, with 95% intervals
                              for its answer and refusal rates and its gain over the current policy
    choose(curve)             the rate to write, or None to keep the current policy, and why

The fitted judge is worth writing only when it decides more reviewed runs right than the current
policy did on the same runs, and by more than chance would. Each run is decided twice: as it went
(the current policy) and by a judge fitted on the other folds. The gain is the mean of the paired
differences (+1 a run only the fit decides right, -1 one only the current policy does); its
uncertainty is their standard error. Several rates are tried, so each is tested at 95% shared
among them (Bonferroni: one-sided at 0.05 / number of rates). A rate's gain holds up when that
lower bound is above zero; of the rates whose gain holds up, the one deciding the most runs right
is taken (a tie goes to the higher rate, which refuses less). None holding up keeps the current
policy. The answer and refusal rates carry Wilson intervals, so a team sees how far a small set of
reviews pins them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

from evidence_loop.agent.loop.calibrate import ANSWER_RATES
from evidence_loop.agent.tuning.feedback_fit import (
    ANSWERED,
    FOLDS,
    OperatingPoint,
    ReviewedRun,
    cross_validated_statuses,
    point,
)

ALPHA = 0.05  # shared among the rates tried: the chance of taking a fit that is no better
INTERVAL_Z = NormalDist().inv_cdf(0.975)  # the curve's two-sided 95% intervals


@dataclass(frozen=True, slots=True)
class CurvePoint:
    """One answer rate's cross-validated point, how far the reviews pin it, and its gain."""

    rate: float
    point: OperatingPoint
    answer: tuple[float, float]  # 95% interval of the answer rate
    refusal: tuple[float, float]  # 95% interval of the refusal rate
    gain: float  # correct share minus the current policy's, on the same runs
    gain_low: float  # the gain's lower bound (one-sided, ALPHA shared among the rates)

    @property
    def holds(self) -> bool:
        return self.gain_low > 0.0


@dataclass(frozen=True, slots=True)
class Curve:
    """The current policy's point and each rate's; ``current_answer``/``_refusal`` its intervals."""

    current: OperatingPoint
    current_answer: tuple[float, float]
    current_refusal: tuple[float, float]
    points: list[CurvePoint]


@dataclass(frozen=True, slots=True)
class Choice:
    rate: float | None  # None: keep the current policy
    reason: str


def wilson(hits: int, n: int, z: float = INTERVAL_Z) -> tuple[float, float]:
    """The Wilson score interval of a share ``hits / n`` (0 to 1 when there is nothing to count)."""
    if n == 0:
        return 0.0, 1.0
    p = hits / n
    middle = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return round(max(0.0, middle - half), 4), round(min(1.0, middle + half), 4)


def rate_intervals(runs: Sequence[ReviewedRun], statuses: Sequence[str]) -> tuple[tuple[float, float], ...]:
    """95% intervals of the answer rate and of the refusal rate of ``statuses``."""
    answered = [s == ANSWERED for s in statuses]
    pos = [a for a, r in zip(answered, runs, strict=True) if r.answerable]
    neg = [not a for a, r in zip(answered, runs, strict=True) if not r.answerable]
    return wilson(sum(pos), len(pos)), wilson(sum(neg), len(neg))


def paired_gain(runs: Sequence[ReviewedRun], fitted: Sequence[str], z: float) -> tuple[float, float]:
    """The mean paired difference in right decisions (fitted minus recorded) and its lower bound."""
    diffs = [
        ((f == ANSWERED) == r.answerable) - ((r.recorded == ANSWERED) == r.answerable)
        for f, r in zip(fitted, runs, strict=True)
    ]
    n = len(diffs)
    mean = sum(diffs) / n
    spread = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (n - 1)) if n > 1 else math.inf
    return round(mean, 4), round(mean - z * spread / math.sqrt(n), 4)


def curve(
    runs: Sequence[ReviewedRun],
    bias: float = 0.0,
    l2: float = 1.0,
    rates: Sequence[float] = ANSWER_RATES,
    folds: int = FOLDS,
) -> Curve:
    """Every rate's cross-validated point against the current policy's, on the same runs."""
    recorded = [r.recorded for r in runs]
    z = NormalDist().inv_cdf(1 - ALPHA / len(rates))
    points = []
    for rate in rates:
        statuses = cross_validated_statuses(runs, rate, bias, l2, folds)
        answer, refusal = rate_intervals(runs, statuses)
        gain, low = paired_gain(runs, statuses, z)
        points.append(CurvePoint(rate, point(runs, statuses), answer, refusal, gain, low))
    current_answer, current_refusal = rate_intervals(runs, recorded)
    return Curve(point(runs, recorded), current_answer, current_refusal, points)


def choose(found: Curve) -> Choice:
    """The rate whose gain holds up and decides the most runs right, or the current policy."""
    holding = [p for p in found.points if p.holds]
    best = max(found.points, key=lambda p: (p.point.correct, p.rate))
    if not holding:
        return Choice(
            None,
            f"kept the current policy: no fitted point decides more reviewed runs right by more than "
            f"chance would (the best, rate {best.rate:g}, decides {best.point.correct:.3f} right against "
            f"the current {found.current.correct:.3f}: gain {best.gain:+.3f}, lower bound "
            f"{best.gain_low:+.3f}, not above 0)",
        )
    chosen = max(holding, key=lambda p: (p.point.correct, p.rate))
    return Choice(
        chosen.rate,
        f"chose the fit at rate {chosen.rate:g}: it decides {chosen.point.correct:.3f} of the reviewed "
        f"runs right against the current {found.current.correct:.3f} (gain {chosen.gain:+.3f}, lower "
        f"bound {chosen.gain_low:+.3f}, above 0), answering {chosen.point.answer:.3f} of the runs that "
        f"should be answered and refusing {chosen.point.refusal:.3f} of those that should be refused",
    )
