"""The outcome's signals keep the field names recorded traces and API clients read."""

from __future__ import annotations

from evidence_loop.agent.outcome import Outcome, Signals

SIGNALS = Signals(
    relevance=0.333,
    lexical_score=2.5,
    coverage=1.0,
    slot_coverage=1.0,
    boundary=1.0,
    score=0.8,
    recalls=1,
    slides=0,
)


def test_the_lexical_score_is_written_as_bm25_the_name_traces_recorded() -> None:
    written = SIGNALS.model_dump(mode="json")
    assert (written["bm25"], "lexical_score" in written) == (2.5, False)


def test_signals_written_under_the_recorded_name_read_back_the_same() -> None:
    assert Signals.model_validate(SIGNALS.model_dump(mode="json")) == SIGNALS


def test_the_api_schema_names_the_field_bm25() -> None:
    schema = Outcome.model_json_schema(mode="serialization")["$defs"]["Signals"]["properties"]
    assert "bm25" in schema and "lexical_score" not in schema
