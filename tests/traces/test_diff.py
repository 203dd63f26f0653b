"""first_divergence: the first step, field path and values where a replay leaves its recording."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from evidence_loop.traces.reading.diff import ABSENT, DEFAULT_VOLATILE, Divergence, first_divergence
from evidence_loop.traces.records.steps import DecidedStep, RecalledStep, TraceStep, parse_step
from tests.traces.conftest import EXAMPLES

Data = dict[str, Any]


def _run() -> list[TraceStep]:
    """A recall of five hits scored 7, 6, 5, 4, 3; a check; an LLM reply; a decision."""
    recalled = EXAMPLES["recalled"]
    assert isinstance(recalled, RecalledStep)
    hits = [{**hit, "score": 7.0 - i} for i, hit in enumerate(recalled.hits)]
    return [
        recalled.model_copy(update={"hits": hits}),
        EXAMPLES["checked"],
        EXAMPLES["llm_reply"],
        DecidedStep(status="answered", why="1 window", outcome={"status": "answered", "run_id": "r-1"}),
    ]


def _edit(steps: list[TraceStep], seq: int, change: Callable[[Data], None]) -> list[TraceStep]:
    """The steps with step ``seq``'s data changed (as a replay that behaved differently would write it)."""
    data = copy.deepcopy(steps[seq].trace_data())
    change(data)
    return [*steps[:seq], parse_step(steps[seq].step, data), *steps[seq + 1 :]]


def _decided(outcome: Data) -> list[TraceStep]:
    return [DecidedStep(status="answered", why="", outcome=outcome)]


def test_identical_runs_do_not_diverge() -> None:
    assert first_divergence(_run(), _run()) is None


def test_a_changed_value_is_reported_with_its_dotted_path_and_both_values() -> None:
    replay = _edit(_run(), 0, lambda d: d["hits"][3].update(score=4.5))
    assert first_divergence(_run(), replay) == Divergence(
        0, "recalled", "data.hits[3].score", 4.0, 4.5, "numbers differ by 0.5"
    )


def test_the_first_of_several_differences_is_reported() -> None:
    replay = _edit(_run(), 1, lambda d: d["missing"][0].update(value="14天"))
    replay = _edit(replay, 3, lambda d: d.update(status="insufficient_evidence"))
    found = first_divergence(_run(), replay)
    assert found is not None
    assert (found.seq, found.path, found.recorded, found.replayed) == (
        1,
        "data.missing[0].value",
        None,
        "14天",
    )


def test_volatile_fields_are_ignored_at_any_depth() -> None:
    replay = _edit(_run(), 2, lambda d: d.update(latency_ms=99.0))
    replay = _edit(replay, 3, lambda d: d["outcome"].update(run_id="r-2", created_at="2025-03-01T00:00:00Z"))
    assert first_divergence(_run(), replay) is None


def test_the_ignore_list_is_a_parameter() -> None:
    replay = _edit(_run(), 2, lambda d: d.update(latency_ms=99.0))
    found = first_divergence(_run(), replay, ignore=DEFAULT_VOLATILE - {"latency_ms"})
    assert found is not None and found.path == "data.latency_ms"
    other_query = _edit(_run(), 0, lambda d: d.update(query="另一个问题"))
    assert first_divergence(_run(), other_query, ignore={"query"}) is None


def test_a_field_missing_from_the_replay_is_reported_as_absent() -> None:
    recorded = _edit(_run(), 0, lambda d: d["hits"][0].update(similarity=0.5))
    found = first_divergence(recorded, _run())
    assert found is not None
    assert (found.path, found.recorded, found.replayed) == ("data.hits[0].similarity", 0.5, ABSENT)


def test_a_field_only_in_the_replay_is_reported() -> None:
    replay = _edit(_run(), 0, lambda d: d["hits"][0].update(similarity=0.5))
    found = first_divergence(_run(), replay)
    assert found is not None
    assert (found.seq, found.path, found.recorded, found.replayed) == (
        0,
        "data.hits[0].similarity",
        ABSENT,
        0.5,
    )


def test_a_shorter_list_is_reported_at_its_first_missing_item() -> None:
    replay = _edit(_run(), 0, lambda d: d["hits"].pop())
    found = first_divergence(_run(), replay)
    assert found is not None
    assert (found.path, found.replayed, found.reason) == (
        "data.hits[4]",
        ABSENT,
        "the recording has 5 items, the replay 4",
    )


def test_a_different_step_is_reported_at_path_step() -> None:
    replay = _run()
    replay[1] = EXAMPLES["slid"]
    assert first_divergence(_run(), replay) == Divergence(
        1, "checked", "step", "checked", "slid", "a different step"
    )


def test_a_replay_that_stops_early_is_a_length_mismatch() -> None:
    found = first_divergence(_run(), _run()[:3])
    assert found == Divergence(3, "decided", "", "decided", ABSENT, "the recording has 4 steps, the replay 3")


def test_a_replay_that_runs_longer_is_a_length_mismatch() -> None:
    found = first_divergence(_run(), [*_run(), EXAMPLES["aborted"]])
    assert found is not None
    assert (found.seq, found.step, found.recorded, found.replayed) == (4, "aborted", ABSENT, "aborted")


def test_floats_are_compared_exactly_by_default() -> None:
    replay = _edit(_run(), 1, lambda d: d.update(score=0.61 + 1e-12))
    assert first_divergence(_run(), replay) is not None


def test_a_tolerance_absorbs_small_float_differences() -> None:
    replay = _edit(_run(), 1, lambda d: d.update(score=0.61 + 1e-12))
    assert first_divergence(_run(), replay, tolerance=1e-9) is None


def test_an_integer_and_an_equal_float_agree_but_a_bool_is_not_a_number() -> None:
    recorded = _decided({"n": 1, "flag": True})
    assert first_divergence(recorded, _decided({"n": 1.0, "flag": True})) is None
    found = first_divergence(recorded, _decided({"n": 1, "flag": 1}))
    assert found is not None and (found.path, found.reason) == ("data.outcome.flag", "a bool became a int")


def test_keys_that_are_not_identifiers_are_quoted_in_the_path() -> None:
    found = first_divergence(_decided({"versions": {"faq.md": "3"}}), _decided({"versions": {"faq.md": "4"}}))
    assert found is not None and found.path == 'data.outcome.versions["faq.md"]'


def test_a_divergence_describes_itself_in_one_line() -> None:
    found = Divergence(2, "checked", "data.score", 0.61, 0.7, "numbers differ")
    assert found.describe() == "event 2 (checked): data.score: recorded 0.61, replayed 0.7 (numbers differ)"
