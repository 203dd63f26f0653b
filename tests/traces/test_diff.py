"""first_divergence: the first step, field path and values where a replay leaves its recording."""

from __future__ import annotations

import copy
from typing import Any

from traces.diff import ABSENT, DEFAULT_VOLATILE, Divergence, first_divergence
from traces.schema import TraceEvent

Events = list[dict[str, Any]]


def _run() -> Events:
    hits = [{"doc_id": "faq", "version": "3", "score": 7.0 - i, "start": 10 * i} for i in range(5)]
    return [
        {"step": "recalled", "data": {"query": "退款", "hits": hits, "latency_ms": 3.2}},
        {"step": "checked", "data": {"score": 0.61, "missing": [{"kind": "slot", "value": "7天"}]}},
        {"step": "decided", "data": {"status": "answered", "run_id": "r-1"}},
    ]


def test_identical_runs_do_not_diverge() -> None:
    assert first_divergence(_run(), _run()) is None


def test_a_changed_value_is_reported_with_its_dotted_path_and_both_values() -> None:
    replay = _run()
    replay[0]["data"]["hits"][3]["score"] = 4.5
    assert first_divergence(_run(), replay) == Divergence(
        0, "recalled", "data.hits[3].score", 4.0, 4.5, "numbers differ by 0.5"
    )


def test_the_first_of_several_differences_is_reported() -> None:
    replay = _run()
    replay[1]["data"]["missing"][0]["value"] = "14天"
    replay[2]["data"]["status"] = "insufficient_evidence"
    found = first_divergence(_run(), replay)
    assert found is not None
    assert (found.seq, found.path, found.recorded, found.replayed) == (
        1,
        "data.missing[0].value",
        "7天",
        "14天",
    )


def test_volatile_fields_are_ignored_at_any_depth() -> None:
    replay = _run()
    replay[0]["data"]["latency_ms"] = 99.0
    replay[2]["data"]["run_id"] = "r-2"
    replay[1]["data"]["missing"][0]["created_at"] = "2025-03-01T00:00:00Z"
    assert first_divergence(_run(), replay) is None


def test_the_ignore_list_is_a_parameter() -> None:
    replay = _run()
    replay[0]["data"]["latency_ms"] = 99.0
    found = first_divergence(_run(), replay, ignore=DEFAULT_VOLATILE - {"latency_ms"})
    assert found is not None and found.path == "data.latency_ms"
    assert first_divergence(_run(), _run(), ignore={"query"}) is None


def test_a_field_missing_from_the_replay_is_reported_as_absent() -> None:
    replay = _run()
    del replay[1]["data"]["missing"][0]["kind"]
    found = first_divergence(_run(), replay)
    assert found is not None
    assert (found.path, found.recorded, found.replayed) == ("data.missing[0].kind", "slot", ABSENT)


def test_a_field_only_in_the_replay_is_reported() -> None:
    replay = _run()
    replay[2]["data"]["why"] = "new field"
    found = first_divergence(_run(), replay)
    assert found is not None
    assert (found.seq, found.path, found.recorded, found.replayed) == (2, "data.why", ABSENT, "new field")


def test_a_shorter_list_is_reported_at_its_first_missing_item() -> None:
    replay = _run()
    replay[0]["data"]["hits"].pop()
    found = first_divergence(_run(), replay)
    assert found is not None
    assert (found.path, found.replayed, found.reason) == (
        "data.hits[4]",
        ABSENT,
        "the recording has 5 items, the replay 4",
    )


def test_a_different_step_is_reported_at_path_step() -> None:
    replay = _run()
    replay[1]["step"] = "slid"
    assert first_divergence(_run(), replay) == Divergence(
        1, "checked", "step", "checked", "slid", "a different step"
    )


def test_a_replay_that_stops_early_is_a_length_mismatch() -> None:
    found = first_divergence(_run(), _run()[:2])
    assert found == Divergence(2, "decided", "", "decided", ABSENT, "the recording has 3 steps, the replay 2")


def test_a_replay_that_runs_longer_is_a_length_mismatch() -> None:
    longer = [*_run(), {"step": "outcome", "data": {}}]
    found = first_divergence(_run(), longer)
    assert found is not None
    assert (found.seq, found.step, found.recorded, found.replayed) == (3, "outcome", ABSENT, "outcome")


def test_floats_are_compared_exactly_by_default() -> None:
    replay = _run()
    replay[1]["data"]["score"] = 0.61 + 1e-12
    assert first_divergence(_run(), replay) is not None


def test_a_tolerance_absorbs_small_float_differences() -> None:
    replay = _run()
    replay[1]["data"]["score"] = 0.61 + 1e-12
    assert first_divergence(_run(), replay, tolerance=1e-9) is None


def test_an_integer_and_an_equal_float_agree_but_a_bool_is_not_a_number() -> None:
    recorded = [{"step": "x", "data": {"n": 1, "flag": True}}]
    assert first_divergence(recorded, [{"step": "x", "data": {"n": 1.0, "flag": True}}]) is None
    found = first_divergence(recorded, [{"step": "x", "data": {"n": 1, "flag": 1}}])
    assert found is not None and (found.path, found.reason) == ("data.flag", "a bool became a int")


def test_keys_that_are_not_identifiers_are_quoted_in_the_path() -> None:
    recorded = [{"step": "x", "data": {"versions": {"faq.md": "3"}}}]
    replayed = [{"step": "x", "data": {"versions": {"faq.md": "4"}}}]
    found = first_divergence(recorded, replayed)
    assert found is not None and found.path == 'data.versions["faq.md"]'


def test_trace_events_and_dicts_can_be_compared() -> None:
    recorded = [TraceEvent(seq=0, step="checked", data={"score": 0.5}, prev_hash="p", hash="h")]
    assert first_divergence(recorded, [{"step": "checked", "data": {"score": 0.5}, "hash": "other"}]) is None


def test_inputs_are_not_modified() -> None:
    recorded, replayed = _run(), _run()
    replayed[0]["data"]["hits"].pop()
    before = copy.deepcopy((recorded, replayed))
    first_divergence(recorded, replayed)
    assert (recorded, replayed) == before


def test_a_divergence_describes_itself_in_one_line() -> None:
    found = Divergence(2, "checked", "data.score", 0.61, 0.7, "numbers differ")
    assert found.describe() == "event 2 (checked): data.score: recorded 0.61, replayed 0.7 (numbers differ)"
