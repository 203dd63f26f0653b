"""A policy validates every field where it is made, and each error names the field (and the file)."""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path

import pytest

from evidence_loop import InputError, load_policy_file
from evidence_loop.policies.config import ADDED_LATER, Policy
from evidence_loop.tools.errors import PolicyError


@pytest.mark.parametrize(
    ("field", "text"),
    [
        ("compare_sides", "flase"),
        ("shape_reading", "enabled"),
        ("mode", "bogus"),
        ("seed_k", "0"),
        ("window_budget", "-5"),
        ("window_budget", "4k"),
        ("fill_chars", "1.5"),
        ("w_rerank", "2"),
        ("min_coverage", "nan"),
        ("fusion_weight", "inf"),
    ],
)
def test_a_bad_override_is_an_error_that_names_the_field(field: str, text: str) -> None:
    with pytest.raises(PolicyError, match=field) as caught:
        Policy().with_overrides({field: text})
    assert caught.value.field == field and isinstance(caught.value, InputError)


@pytest.mark.parametrize(
    ("text", "value"),
    [("on", True), ("TRUE", True), ("1", True), ("off", False), ("no", False), ("0", False)],
)
def test_a_boolean_takes_the_fixed_words(text: str, value: bool) -> None:
    assert Policy().with_overrides({"compare_sides": text}).compare_sides is value


def test_a_mode_is_taken_by_its_name() -> None:
    assert Policy().with_overrides({"mode": "seed"}).preset.growth == "seed"


@pytest.mark.parametrize(
    ("field", "value"), [("compare_sides", "yes"), ("seed_k", 2.5), ("seed_k", True), ("w_slots", -0.1)]
)
def test_a_policy_made_in_code_is_checked_too(field: str, value: object) -> None:
    with pytest.raises(PolicyError, match=field):
        Policy(**{field: value})  # type: ignore[arg-type]


def test_every_value_a_recorded_policy_could_hold_is_accepted() -> None:
    """The shipped policy, each mode, and every rule added later as an old record reads it."""
    assert Policy.from_dict(dict(ADDED_LATER)) is not None
    for mode in ("seed", "window", "parent", "adaptive"):
        assert Policy.from_dict(Policy(mode=mode).as_dict()) == Policy(mode=mode)


def test_every_field_is_a_known_kind() -> None:
    """A field added later must be a bool, a whole number, a number, the mode or the judge."""
    kinds = {type(f.default) for f in fields(Policy)}
    assert kinds <= {bool, int, float, str, type(Policy().judge)}


def _policy_file(tmp_path: Path, body: object) -> Path:
    path = tmp_path / "policy.json"
    path.write_text(json.dumps(body), encoding="utf-8")
    return path


def test_a_policy_file_with_a_bad_field_names_the_file_and_the_field(tmp_path: Path) -> None:
    path = _policy_file(tmp_path, {"policy": {"compare_sides": "flase"}})
    with pytest.raises(PolicyError) as caught:
        load_policy_file(path)
    error = caught.value
    assert (error.path, error.field) == (str(path), "compare_sides")
    assert str(path) in str(error) and "compare_sides" in str(error)


def test_a_policy_file_takes_json_values(tmp_path: Path) -> None:
    path = _policy_file(tmp_path, {"policy": {"compare_sides": False, "window_budget": 600}})
    policy = load_policy_file(path)
    assert (policy.compare_sides, policy.window_budget) == (False, 600)


def test_an_unreadable_policy_file_is_an_input_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "policy.json"
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(InputError, match=r"policy\.json"):
        load_policy_file(path)
