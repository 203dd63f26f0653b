"""The expansion profile of an evaluation: how far the answered questions' evidence grew, and where
the characters went (``evloop eval`` prints it per set and mode).

Each answered question falls in one bin, the first that holds:

    at the budget   its evidence is within a runner-up's budget of the outcome budget: no other
                    window would have fitted (Policy.outcome_budget - Policy.runner_budget)
    seed alone      no window of the evidence's documents took a growth step
    one step        one kept step in all (a parent step, a slide)
    several steps   more

Steps are the ``slid`` steps the run recorded in the documents its evidence cites (a runner-up's
regrowth in the same document counts), so the profile reads the loop's own record, not a guess.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from evidence_loop.agent.outcome import Outcome
from evidence_loop.policies.config import Policy
from evidence_loop.traces.records.steps import SlidStep

BINS = ("seed alone", "one step", "several steps", "at the budget")


@dataclass(frozen=True, slots=True)
class Growth:
    """What one answered run's evidence took: kept growth steps, characters."""

    steps: int
    chars: int

    def as_record(self) -> dict[str, int]:
        return {"steps": self.steps, "chars": self.chars}


def growth(outcome: Outcome, slid: Iterable[SlidStep]) -> Growth:
    """The kept steps in the documents the outcome's evidence cites, and the evidence's characters."""
    cited = {(e.doc_id, e.version) for e in outcome.evidence}
    steps = sum(1 for step in slid if (step.doc_id, step.version) in cited)
    return Growth(steps, sum(e.end - e.start for e in outcome.evidence))


def bin_of(grown: Growth, policy: Policy) -> str:
    if grown.chars > policy.outcome_budget - policy.runner_budget:
        return "at the budget"
    return BINS[min(grown.steps, 2)]


@dataclass(frozen=True, slots=True)
class Bin:
    share: float  # of the answered questions
    mean_chars: float


def profile(rows: Iterable[Mapping[str, object]], policy: Policy) -> tuple[int, dict[str, Bin]]:
    """The answered result lines (with their ``expansion`` record) by bin: count answered, bins."""
    binned: dict[str, list[int]] = {name: [] for name in BINS}
    for row in rows:
        record = row.get("expansion")
        if row.get("status") != "answered" or not isinstance(record, dict):
            continue
        grown = Growth(int(record["steps"]), int(record["chars"]))
        binned[bin_of(grown, policy)].append(grown.chars)
    answered = sum(len(chars) for chars in binned.values())
    return answered, {
        name: Bin(len(chars) / answered if answered else 0.0, sum(chars) / len(chars) if chars else 0.0)
        for name, chars in binned.items()
    }
