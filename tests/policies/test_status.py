"""A follow-up that may stand for several things is asked back before anything else stops the run."""

from __future__ import annotations

from evidence_loop.policies.decision.status import asked_back, status_of
from evidence_loop.policies.types import MissingPiece

WHICH = MissingPiece(kind="ambiguous_subject", detail="LM-S10 or LM-S20", value="LM-S10")
GAP = MissingPiece(kind="uncovered_slot", detail="no warranty period", value="warranty")


def test_ambiguity_pieces_lead_the_missing_ones_and_unblock_the_conflicts() -> None:
    missing, blocking = asked_back([WHICH], [GAP], True)
    assert (missing, blocking, status_of(missing, blocking)) == ([WHICH, GAP], False, "insufficient_evidence")


def test_without_ambiguity_a_blocking_conflict_still_stops_the_run() -> None:
    missing, blocking = asked_back([], [GAP], True)
    assert (missing, status_of(missing, blocking)) == ([GAP], "conflicting_evidence")
