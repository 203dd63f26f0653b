"""The words a chatbot may show its user for a refusal: every kind of missing piece has them in both
languages, in the question's language, naming what is missing, and never the operator's scores."""

from __future__ import annotations

import re
from typing import get_args

import pytest

from evidence_loop.policies.decision.messages import (
    LANGS,
    MISSING_MESSAGES,
    NAMED_MESSAGES,
    Lang,
    conflict_message,
    language_of,
    missing_message,
    missing_messages,
)
from evidence_loop.policies.types import MissingKind, MissingPiece

KINDS: tuple[MissingKind, ...] = get_args(MissingKind)
CJK = re.compile(r"[\u4e00-\u9fff]")
# what an operator's detail holds: a judge's probability, a threshold, offsets
DETAIL = "the judge gives 0.41; the operating point needs 0.54 (window 120:388)"


def piece(kind: MissingKind, value: str | None = None) -> MissingPiece:
    return MissingPiece(kind, DETAIL, value=value)


@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_of_missing_piece_has_a_message_in_both_languages(kind: MissingKind) -> None:
    assert set(MISSING_MESSAGES.get(kind, {})) == set(LANGS)


def test_the_message_tables_name_no_kind_that_does_not_exist() -> None:
    assert set(MISSING_MESSAGES) <= set(KINDS)
    assert set(NAMED_MESSAGES) <= set(KINDS)


@pytest.mark.parametrize("kind", sorted(NAMED_MESSAGES))
def test_every_message_naming_a_value_is_written_in_both_languages(kind: MissingKind) -> None:
    assert set(NAMED_MESSAGES[kind]) == set(LANGS)
    assert all("{value}" in template for template in NAMED_MESSAGES[kind].values())


@pytest.mark.parametrize("kind", KINDS)
def test_a_chinese_question_gets_a_chinese_message_without_the_scores(kind: MissingKind) -> None:
    message = missing_message(piece(kind), language_of("这个套餐每月多少钱？"))

    assert CJK.search(message)
    assert not re.search(r"[0-9]", message)


@pytest.mark.parametrize("kind", KINDS)
def test_an_english_question_gets_an_english_message_without_the_scores(kind: MissingKind) -> None:
    message = missing_message(piece(kind), language_of("How much is the plan per month?"))

    assert not CJK.search(message)
    assert not re.search(r"[0-9]", message)
    assert message.strip() and message != DETAIL


@pytest.mark.parametrize("lang", LANGS)
def test_an_uncovered_model_number_is_named_in_the_message(lang: Lang) -> None:
    assert "LM-S99" in missing_message(piece("uncovered_slot", "LM-S99"), lang)


@pytest.mark.parametrize("lang", LANGS)
def test_a_missing_referenced_document_is_named_in_the_message(lang: Lang) -> None:
    assert "Price List" in missing_message(piece("unresolved_reference", "Price List"), lang)


def test_the_uncovered_words_of_a_question_are_not_shown_to_the_user() -> None:
    """``no_relevant_evidence`` keeps the words not found in ``value``: internals, not a name."""
    message = missing_message(piece("no_relevant_evidence", "mall bought"), "en")

    assert "mall" not in message


def test_a_side_of_a_comparison_nothing_covers_is_named_as_a_side() -> None:
    side = MissingPiece("uncovered_slot", DETAIL, value="X900", slot_kind="side")

    assert missing_message(side, "en") == "I couldn't find anything about X900, so I can't compare them."


def test_each_ambiguous_piece_names_every_candidate() -> None:
    pieces = [MissingPiece("ambiguous_subject", DETAIL, value=name) for name in ("X200", "X300")]

    assert missing_messages(pieces, "zh") == ["您指的是哪一个：X200还是X300？"] * 2
    assert missing_messages(pieces, "en") == ["Which one do you mean: X200 or X300?"] * 2


@pytest.mark.parametrize(
    ("question", "lang"),
    [("套餐多少钱", "zh"), ("X200 的保修期", "zh"), ("How long?", "en"), ("¿Cuánto?", "en"), ("", "en")],
)
def test_the_message_language_is_chinese_only_for_a_question_with_chinese_characters(
    question: str, lang: Lang
) -> None:
    assert language_of(question) == lang


def test_a_conflict_message_gives_both_values_in_the_question_language() -> None:
    assert conflict_message("90 days", "30 days", "zh") == (
        "帮助文档的说法不一致：一处写的是“90 days”，另一处写的是“30 days”。请联系客服确认。"
    )
