"""The expansion profile counts what the loop recorded: growth steps in the cited documents and the
evidence's characters, binned for the answered questions only."""

from __future__ import annotations

from dataclasses import replace

from evidence_loop.agent.loop.controller import Controller
from evidence_loop.agent.tuning.evaluate import Asker
from evidence_loop.agent.tuning.expansion import BINS, Growth, bin_of, profile
from evidence_loop.policies.config import Policy
from evidence_loop.tools.search.snapshot import Snapshot

POLICY = Policy()
WARRANTY = "How long is the warranty on the tablet?"


def _line(snapshot: Snapshot, policy: Policy, question: str) -> dict[str, object]:
    ask = Asker(Controller(policy), snapshot)
    outcome = ask(question, ["public"])
    assert outcome.status == "answered", outcome.missing
    line = ask.extra(outcome)
    expansion = line["expansion"]
    assert isinstance(expansion, dict)
    assert expansion["chars"] == sum(e.end - e.start for e in outcome.evidence)
    return line


def test_the_seed_mode_takes_no_step_and_the_full_loop_grows(sample_snapshot: Snapshot) -> None:
    seed = _line(sample_snapshot, Policy(mode="seed"), WARRANTY)["expansion"]
    grown = _line(sample_snapshot, POLICY, WARRANTY)["expansion"]
    assert isinstance(seed, dict) and isinstance(grown, dict)
    assert seed["steps"] == 0
    assert grown["steps"] >= 1 and grown["chars"] > seed["chars"]


def test_a_refusal_has_no_expansion_and_is_not_binned(sample_snapshot: Snapshot) -> None:
    ask = Asker(Controller(POLICY), sample_snapshot)
    outcome = ask("火星基地的停车费是多少？", ["public"])
    assert outcome.status != "answered"
    assert "expansion" not in ask.extra(outcome)


def test_bins_put_the_budget_first_then_count_steps() -> None:
    edge = POLICY.outcome_budget - POLICY.runner_budget
    assert bin_of(Growth(0, 100), POLICY) == "seed alone"
    assert bin_of(Growth(1, 100), POLICY) == "one step"
    assert bin_of(Growth(7, edge), POLICY) == "several steps"
    assert bin_of(Growth(0, edge + 1), POLICY) == "at the budget"
    wider = replace(POLICY, outcome_budget=POLICY.outcome_budget * 2)
    assert bin_of(Growth(0, edge + 1), wider) == "seed alone"


def test_the_profile_shares_and_means_cover_the_answered_lines() -> None:
    rows = [
        {"status": "answered", "expansion": {"steps": 0, "chars": 100}},
        {"status": "answered", "expansion": {"steps": 0, "chars": 300}},
        {"status": "answered", "expansion": {"steps": 3, "chars": 900}},
        {"status": "insufficient_evidence"},
    ]
    answered, bins = profile(rows, POLICY)
    assert answered == 3
    assert bins["seed alone"].share == 2 / 3 and bins["seed alone"].mean_chars == 200
    assert bins["several steps"].share == 1 / 3 and bins["one step"].share == 0
    assert sum(b.share for b in bins.values()) == 1 and list(bins) == list(BINS)
