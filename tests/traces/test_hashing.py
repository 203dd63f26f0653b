"""Canonical JSON and the chain hashes: the rules every stored hash depends on."""

from __future__ import annotations

import hashlib
import math

import pytest

from evidence_loop.traces.records.hashing import canonical_json, digest, event_hash, record_hash


def test_canonical_json_sorts_keys_drops_spaces_and_keeps_unicode() -> None:
    assert canonical_json({"b": [1, 2.5], "a": "退款"}) == '{"a":"退款","b":[1,2.5]}'


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.1, "0.1"),
        (1e-07, "1e-07"),
        (2.0, "2.0"),
        (1 / 3, "0.3333333333333333"),
        (10**20, "100000000000000000000"),
    ],
)
def test_canonical_json_writes_numbers_by_repr(value: float, text: str) -> None:
    assert canonical_json([value]) == f"[{text}]"


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_canonical_json_refuses_non_finite_floats(bad: float) -> None:
    with pytest.raises(ValueError, match="NaN and infinities"):
        canonical_json({"score": bad})


def test_canonical_json_names_the_path_of_a_non_json_value() -> None:
    with pytest.raises(TypeError, match=r"value\.hits\[1\]\.span is a set"):
        canonical_json({"hits": [{}, {"span": {1, 2}}]})


def test_canonical_json_refuses_keys_that_are_not_strings() -> None:
    with pytest.raises(TypeError, match="key 3"):
        canonical_json({3: "x"})


def test_digest_is_sha256_of_the_canonical_utf8_text() -> None:
    expected = hashlib.sha256('{"q":"退款"}'.encode()).hexdigest()
    assert digest({"q": "退款"}) == expected


@pytest.mark.parametrize(
    "changed",
    [
        ("other", 0, "recalled", {"k": 1}),
        ("prev", 1, "recalled", {"k": 1}),
        ("prev", 0, "checked", {"k": 1}),
        ("prev", 0, "recalled", {"k": 2}),
    ],
)
def test_event_hash_covers_prev_hash_seq_step_and_data(changed: tuple[str, int, str, dict[str, int]]) -> None:
    assert event_hash(*changed) != event_hash("prev", 0, "recalled", {"k": 1})


def test_event_hash_does_not_depend_on_key_order() -> None:
    assert event_hash("p", 0, "s", {"a": 1, "b": 2}) == event_hash("p", 0, "s", {"b": 2, "a": 1})


def test_record_hash_ignores_the_hash_field_itself() -> None:
    assert record_hash({"a": 1, "hash": "x"}) == record_hash({"a": 1, "hash": "y"}) == digest({"a": 1})
