"""``fit_judge`` keeps a signal that says the evidence lacks something only while it weighs against
answering: a flag that fires on answerable questions more than on unanswerable ones is left out."""

from __future__ import annotations

import random

from evidence_loop.agent.loop.calibrate import FEATURES, Row, fit_judge


def _rows(seed: int, flag_on_answerable: float, flag_on_unanswerable: float) -> list[Row]:
    rng = random.Random(seed)
    rows: list[Row] = []
    for n in range(400):
        answerable = n % 3 != 0
        z = {f: rng.gauss(0.8 if answerable else -0.8, 1.0) for f in FEATURES}
        rate = flag_on_answerable if answerable else flag_on_unanswerable
        z["unstated"] = 0.0
        z["other_scope"] = 1.0 if rng.random() < rate else 0.0
        z["absent"] = 0.0
        rows.append((z, answerable))
    return rows


def test_a_flag_firing_on_unanswerable_questions_weighs_against_answering() -> None:
    model = fit_judge({"a": _rows(1, 0.02, 0.5)})
    weights = dict(zip(model.features, model.weights, strict=True))
    assert weights["other_scope"] < 0


def test_a_flag_firing_on_answerable_questions_is_left_out_of_the_fit() -> None:
    model = fit_judge({"a": _rows(2, 0.5, 0.02)})
    assert "other_scope" not in model.features
    assert model.features[: len(FEATURES)] == FEATURES
