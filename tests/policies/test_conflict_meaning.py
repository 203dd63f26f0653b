"""Two statements close in meaning to the question, in two documents, giving values of the asked kind
that differ are a conflict candidate whatever their words (policies.conflicts.meaning); one value
written in two units is none, and a statement far from the question is no side."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from evidence_loop.policies.config import Policy
from evidence_loop.policies.conflicts.candidates import CandidateScan, ConflictRules, find_candidates
from evidence_loop.policies.question.analysis import analyse
from evidence_loop.policies.types import EvidenceView
from evidence_loop.tools.search.dense import QuestionSimilarities, UnitCosines

# conflict_meaning is off in the shipped policy (docs/models.md says why); these tests turn it on
MEANING = replace(Policy(), conflict_meaning=True)
CODE_Q = "how long does the login code from the text message last?"
BY_TEXT = "Login codes sent by text expire after 10 minutes."
BY_SMS = "Each code you get by SMS works for 5 minutes only."
FAR = "Our office is closed on public holidays."


def _vector(*weights: float) -> np.ndarray:
    v = np.zeros(8, dtype=np.float32)
    v[: len(weights)] = weights
    return v / np.linalg.norm(v)


def scan(
    question: str,
    left: str,
    right: str,
    near: tuple[float, float] = (1.0, 1.0),
    policy: Policy | None = None,
) -> CandidateScan:
    """Two one-unit documents and a far unit; ``near``: how much each side's vector leans to the
    question's (1: all the way)."""
    q = _vector(1.0)
    rows = [_vector(n, 1.0 - n + 0.05, 0.1 * i) for i, n in enumerate(near)]
    rows += [_vector(0.0, 0.0, 0.0, 1.0) for _ in range(6)]  # the rest of the corpus, far from it
    matrix = np.stack(rows).astype(np.float32)
    values = matrix @ q
    similarities = QuestionSimilarities(
        values, float(values.mean()), float(values.std()), float(values.max())
    )
    positions = {(f"doc-{i}", "1", 0): i for i in range(len(rows))}
    cosines = UnitCosines(similarities, positions, matrix)
    views = [
        EvidenceView(f"e{i}", f"doc-{i}", "1", True, (), 0, len(text), text, units=((0, 0, len(text)),))
        for i, text in enumerate((left, right))
    ]
    return find_candidates(analyse(question, cosines=cosines), views, ConflictRules.of(policy or MEANING))


def values(found: CandidateScan) -> list[tuple[str, str]]:
    return [(c.left.value, c.right.value) for c in found.candidates]


def test_two_statements_worded_apart_and_close_in_meaning_are_a_candidate() -> None:
    assert values(scan(CODE_Q, BY_TEXT, BY_SMS)) == [("10 minutes", "5 minutes")]


def test_before_the_rule_the_same_two_statements_gave_no_candidate() -> None:
    old = Policy.from_dict({})  # a policy recorded before conflict_meaning

    assert values(scan(CODE_Q, BY_TEXT, BY_SMS, policy=old)) == []


@pytest.mark.parametrize(
    ("left", "right"),
    [
        (
            "Backups of your router settings are kept for 30 days.",
            "Router settings backups are retained for one month.",
        ),
        (
            "Refund requests are accepted within 14 days of purchase.",
            "You can ask for a refund up to two weeks after you buy.",
        ),
        ("The warranty on the router lasts 12 months.", "The router warranty lasts one year."),
    ],
    ids=["30-days-one-month", "14-days-two-weeks", "12-months-one-year"],
)
def test_one_value_written_in_two_units_is_no_candidate(left: str, right: str) -> None:
    assert values(scan("How long does it last?", left, right)) == []


def test_a_statement_far_from_the_question_is_no_side() -> None:
    assert values(scan(CODE_Q, BY_TEXT, BY_SMS, near=(1.0, 0.05))) == []


def test_sizes_of_two_orders_are_two_things_not_one_value() -> None:
    wait = "Wait 2 minutes for the code to arrive."
    keep = "Codes you were sent are kept in the log for 30 days."

    assert values(scan("How long does the code take?", wait, keep)) == []
