"""Which operating point ``calibrate --feedback`` takes by default: a fit only when its gain holds up."""

from __future__ import annotations

import random

import pytest

from evidence_loop.agent.loop.calibrate import ANSWER_RATES, FEATURES
from evidence_loop.agent.tuning.feedback_choice import choose, curve, wilson
from evidence_loop.agent.tuning.feedback_fit import ReviewedRun


def runs_of(recorded: list[tuple[bool, str]], seed: int = 7) -> list[ReviewedRun]:
    """Reviewed runs whose signals separate the labels (answerable high, unanswerable low, with noise),
    each with the status the current policy gave it."""
    rng = random.Random(seed)
    made = []
    for i, (answerable, status) in enumerate(recorded):
        centre = 1.0 if answerable else -1.0
        z = {name: centre + rng.gauss(0.0, 0.6) for name in FEATURES}
        made.append(ReviewedRun(f"run-{i}", z, answerable, status, blocked=False))
    return made


def status(answer: bool) -> str:
    return "answered" if answer else "insufficient_evidence"


def test_a_fit_that_decides_many_more_runs_right_is_chosen_and_says_why() -> None:
    # the current policy answered everything: every unanswerable run was wrong
    runs = runs_of([(i % 2 == 0, "answered") for i in range(120)])
    found = curve(runs)
    choice = choose(found)
    assert choice.rate is not None
    chosen = next(p for p in found.points if p.rate == choice.rate)
    assert chosen.holds and chosen.gain > 0.2
    assert chosen.point.correct == max(p.point.correct for p in found.points if p.holds)
    assert f"chose the fit at rate {choice.rate:g}" in choice.reason and "above 0" in choice.reason


def test_when_the_current_policy_decides_every_run_right_it_is_kept() -> None:
    runs = runs_of([(i % 2 == 0, status(i % 2 == 0)) for i in range(120)])
    found = curve(runs)
    assert all(p.gain <= 0 and not p.holds for p in found.points)
    choice = choose(found)
    assert choice.rate is None and choice.reason.startswith("kept the current policy")


def test_a_small_gain_on_few_reviews_keeps_the_current_policy() -> None:
    # the current policy got 2 of 40 runs wrong; a fit may get them right, but 2 runs prove nothing
    recorded = [(i % 2 == 0, status((i % 2 == 0) != (i < 2))) for i in range(40)]
    found = curve(runs_of(recorded))
    best = max(found.points, key=lambda p: p.gain)
    assert best.gain > 0 and not best.holds
    assert choose(found).rate is None


def test_the_more_rates_are_tried_the_lower_each_gains_bound() -> None:
    runs = runs_of([(i % 2 == 0, "answered") for i in range(60)])
    alone = curve(runs, rates=[0.9]).points[0]
    among = next(p for p in curve(runs, rates=ANSWER_RATES).points if p.rate == 0.9)
    assert alone.gain == among.gain and among.gain_low < alone.gain_low


def test_each_point_carries_intervals_around_its_answer_and_refusal_rates() -> None:
    found = curve(runs_of([(i % 3 != 0, "answered") for i in range(90)]))
    for p in found.points:
        assert p.answer[0] <= p.point.answer <= p.answer[1]
        assert p.refusal[0] <= p.point.refusal <= p.refusal[1]
    assert found.current_answer[0] <= found.current.answer <= found.current_answer[1]


@pytest.mark.parametrize(
    ("hits", "n", "interval"),
    [(0, 10, (0.0, 0.2775)), (10, 10, (0.7225, 1.0)), (5, 10, (0.2366, 0.7634)), (0, 0, (0.0, 1.0))],
)
def test_the_wilson_interval_of_a_share(hits: int, n: int, interval: tuple[float, float]) -> None:
    assert wilson(hits, n) == pytest.approx(interval, abs=1e-4)
