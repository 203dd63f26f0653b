"""The policy a trace pins: every outcome-changing number is a field, and old records keep their hash."""

from __future__ import annotations

import pytest

from evidence_loop.policies.config import ADDED_LATER, WERE_CONSTANTS, Policy, record_digest
from evidence_loop.policies.conflicts.candidates import ConflictRules
from evidence_loop.policies.presets import MODES

# The hashes policies had before their constants became fields (commit dfe228a): every trace
# recorded under one of them pins it. A deliberate change of a default changes one of these (and
# `python -m tests.agent.golden_runs` rewrites the golden traces). A rule added since is recorded
# with the record (ADDED_LATER reads a record without it as the rule off), so the shipped record is
# the one of dfe228a plus these fields, and its hash changes with them.
RULES_ADDED_SINCE: dict[str, object] = {
    "compare_sides": True,
    "shape_reading": True,
    "shape_sure_score": 0.6,
    "shape_list_chars": 2500,
    "shape_section_chars": 2500,
    "shape_docs": 3,
    "shape_docs_ratio": 0.6,
    "shape_outcome_chars": 3000,
    "screen_hidden": True,
    "refuse_contentless": True,
    "followups": True,
    "followup_turns": 8,
    "followup_doc_boost": 0.5,
    "followup_prior_k": 1,
    "followup_kinds": True,
    "attribute_values": True,
    "conflict_scopes": True,
    "conflict_scope_chars": 600,
    "quote_stating": True,
    "quote_semantic_weight": 0.5,
    "quote_place_weight": 0.5,
    "quote_window_weight": 1.0,
    "quote_heading_weight": 0.3,
    "quote_join_share": 0.5,
    "quote_about_share": 0.35,
    "quote_rival_share": 0.5,
    "quote_list_share": 0.8,
    "quote_passage_chars": 2500,
    "quote_further_windows": 4,
    "quote_further_units": 2,
    "quote_max_facts": 5,
    "identifier_slots": True,
    "informative_terms": True,
    "context_weight": 0.25,
    "absent_things": True,
    "refuse_absent_names": True,
    "deferring_references": True,
    "reference_defer_share": 0.65,
    "value_signal": True,
    "quote_procedure_chars": 4000,
    "quote_skip_datelines": True,
    "quote_no_datelines": True,
    "quote_place_first": True,
    "refuse_absent_places": True,
    "conflict_meaning": False,
    "conflict_meaning_closeness": 0.7,
    "conflict_meaning_best": 0.8,
    "conflict_meaning_pair": 0.82,
    "conflict_meaning_ratio": 30.0,
    "conflict_numbered": True,
    "conflict_wider_k": 4,
    "conflict_wider_closeness": 0.6,
}
RECORDED_HASHES = {
    "adaptive": "4db54ea529f9741b6ad441ad76c64279f4e977d99ce75bada2ee591de57b0ab1",
    "seed": "19812b3deff891583fb769f04faff5f905ab26fd2b73cf8734973c86d4a03109",
    "window": "df3aa1e70a47c8e5e5d82f4f0c3dae7cfad5d8163b88e2e1ff00f2a15af59044",
    "parent": "0ebc0d19b6c2c8abdd2062c08fdbcd51929bfb8b885424be4eb3792bea21a540",
}


@pytest.mark.parametrize("mode", MODES)
def test_a_shipped_policy_keeps_the_hash_it_had_before_its_constants_became_fields(mode: str) -> None:
    record = Policy(mode=mode).as_dict()  # type: ignore[arg-type]
    assert {k: record[k] for k in RULES_ADDED_SINCE} == RULES_ADDED_SINCE
    before = {k: v for k, v in record.items() if k not in RULES_ADDED_SINCE}
    assert record_digest(before) == RECORDED_HASHES[mode]


def test_a_rule_added_since_reads_as_off_from_a_record_without_it() -> None:
    old = {k: v for k, v in Policy().as_dict().items() if k not in RULES_ADDED_SINCE}
    rebuilt = Policy.from_dict(old)
    assert {name: getattr(rebuilt, name) for name in RULES_ADDED_SINCE} == {
        name: ADDED_LATER[name] for name in RULES_ADDED_SINCE
    }
    assert (rebuilt.compare_sides, rebuilt.shape_reading) == (False, False)
    assert Policy.from_dict(Policy().as_dict()) == Policy()
    assert Policy.from_dict(old).shape_reading is False


def test_a_field_that_was_a_constant_is_recorded_only_when_it_is_set_otherwise() -> None:
    assert set(Policy().as_dict()) & set(WERE_CONSTANTS) == set()
    assert Policy(fusion_weight=1.0).as_dict()["fusion_weight"] == 1.0


def test_a_field_that_was_a_constant_defaults_to_that_constant() -> None:
    assert {name: getattr(Policy(), name) for name in WERE_CONSTANTS} == WERE_CONSTANTS


def test_a_record_rebuilds_the_policy_it_was_made_from() -> None:
    changed = Policy(fusion_weight=1.0, conflict_min_context=6, window_budget=600)
    assert Policy.from_dict(changed.as_dict()) == changed
    assert Policy.from_dict(Policy().as_dict()) == Policy()


def test_a_record_from_before_a_constant_became_a_field_runs_with_the_constant() -> None:
    recorded = {k: v for k, v in Policy().as_dict().items() if k not in ADDED_LATER}
    rebuilt = Policy.from_dict(recorded)
    assert {name: getattr(rebuilt, name) for name in WERE_CONSTANTS} == WERE_CONSTANTS


def test_a_constant_field_can_be_overridden_from_text() -> None:
    policy = Policy().with_overrides({"typo_min_chars": "4", "answer_join_share": "0.5"})
    assert (policy.typo_min_chars, policy.answer_join_share) == (4, 0.5)


CONFLICT_FIELDS = (
    "min_context",
    "max_value_atoms",
    "merge_gap",
    "min_question_terms",
    "max_term_mismatch",
    "min_statement_words",
    "polarity_reach",
    "min_sentence_similarity",
)


def test_the_conflict_candidate_rules_are_the_policys() -> None:
    # distinct values, each within its field's range (a similarity is at most 1)
    values = [(i + 20) / (100 if n.endswith("similarity") else 1) for i, n in enumerate(CONFLICT_FIELDS)]
    values = [int(v) if v >= 1 else v for v in values]
    policy = Policy(
        **{f"conflict_{n}": v for n, v in zip(CONFLICT_FIELDS, values, strict=True)}, rival_ids=False
    )  # type: ignore[arg-type]
    rules = ConflictRules.of(policy)
    assert [getattr(rules, n) for n in CONFLICT_FIELDS] == values
    assert (rules.rival_ids, rules.slot_values) == (False, True)
