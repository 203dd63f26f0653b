"""The outcome's signals are written under their own names; the name outcomes recorded before 0.2.0
("bm25") still reads."""

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


def test_the_lexical_score_is_written_under_its_own_name() -> None:
    written = SIGNALS.model_dump(mode="json")
    assert (written["lexical_score"], "bm25" in written) == (2.5, False)


def test_signals_written_read_back_the_same() -> None:
    assert Signals.model_validate(SIGNALS.model_dump(mode="json")) == SIGNALS


def test_signals_recorded_under_the_old_name_bm25_still_read() -> None:
    old = SIGNALS.model_dump(mode="json")
    old["bm25"] = old.pop("lexical_score")
    assert Signals.model_validate(old) == SIGNALS


def test_the_api_schema_names_the_field_lexical_score() -> None:
    schema = Outcome.model_json_schema(mode="serialization")["$defs"]["Signals"]["properties"]
    assert "lexical_score" in schema and "bm25" not in schema
