"""What text and JSON every door takes (tools.inputs): the one check, its limits and its words."""

from __future__ import annotations

import json

import pytest

from evidence_loop.tools.errors import DecodeError, InputError
from evidence_loop.tools.inputs import (
    MAX_JSON_DEPTH,
    JsonInputError,
    check_unicode,
    decode_utf8,
    parse_json,
    unicode_fault,
)

SURROGATE_WORDS = "a lone surrogate U+D800 at character 4 is not Unicode text; send UTF-8 text"


def nested(levels: int) -> str:
    return "[" * levels + "]" * levels


def test_a_lone_surrogate_is_named_with_its_code_point_and_place() -> None:
    assert unicode_fault("abc \ud800 def") == SURROGATE_WORDS


@pytest.mark.parametrize("text", ["plain", "保修期多久？", "emoji 👩\u200d💻", "\x1b[2J control is text", ""])
def test_unicode_text_has_no_fault(text: str) -> None:
    assert unicode_fault(text) is None


def test_check_unicode_names_what_it_checked() -> None:
    with pytest.raises(InputError, match=r"^the question: a lone surrogate U\+DCFF at character 0"):
        check_unicode("\udcff warranty", "the question")


def test_json_nested_to_the_limit_is_taken() -> None:
    assert parse_json(nested(MAX_JSON_DEPTH)) is not None


def test_json_nested_one_level_deeper_than_the_limit_is_refused() -> None:
    with pytest.raises(JsonInputError, match=f"nested deeper than {MAX_JSON_DEPTH} levels"):
        parse_json(nested(MAX_JSON_DEPTH + 1))


def test_json_deeper_than_python_reads_is_refused_not_a_recursion_error() -> None:
    with pytest.raises(JsonInputError, match="nested deeper"):
        parse_json(nested(100_000))


def test_a_lone_surrogate_in_json_is_refused_with_its_path() -> None:
    text = json.dumps({"history": ["ok", {"question": "abc \ud800 def"}]})

    with pytest.raises(JsonInputError) as caught:
        parse_json(text)

    assert str(caught.value) == f"history[1].question: {SURROGATE_WORDS}"


def test_a_lone_surrogate_in_a_key_is_refused() -> None:
    with pytest.raises(JsonInputError, match=r"a key of meta: a lone surrogate U\+DC00"):
        parse_json('{"meta": {"\\udc00": 1}}')


def test_a_lone_surrogate_is_left_to_the_caller_when_it_says_so() -> None:
    assert parse_json('{"text": "\\ud800"}', unicode=False) == {"text": "\ud800"}


@pytest.mark.parametrize("text", ["{not json", "", "1" * 5000, b"\xff{}"])
def test_text_that_is_not_json_is_told_apart_from_json_refused(text: str | bytes) -> None:
    with pytest.raises(JsonInputError) as caught:
        parse_json(text)

    assert caught.value.not_json


def test_bytes_that_are_not_utf8_name_the_file_line_and_byte() -> None:
    with pytest.raises(DecodeError, match=r"^turns.txt:2: not valid UTF-8 \(byte 5\)$"):
        decode_utf8(b"one\nt\xffwo\n", "turns.txt")


def test_a_byte_order_mark_is_not_text() -> None:
    assert decode_utf8("\ufeffhello".encode(), "x") == "hello"
