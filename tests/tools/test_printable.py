"""Stored text shown to a person (tools.printable): controls and bidi characters as visible escapes."""

from __future__ import annotations

import json

import pytest

from evidence_loop.tools.printable import printable

HOSTILE = "\x1b]0;PWNED\x07\x1b[2J\x1b[31mred\rFAKE: all runs verified\n\u202eevil\u2066x\u2069\x85\u2028"


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("\x1b[2J", "\\u001b[2J"),
        ("\x1b]0;title\x07", "\\u001b]0;title\\u0007"),
        ("a\rb", "a\\rb"),
        ("a\nb\tc", "a\\nb\\tc"),
        ("\u202eevil", "\\u202eevil"),
        ("\u200fשלום", "\\u200fשלום"),
        ("x\x9by", "x\\u009by"),
        ("x\x7fy", "x\\u007fy"),
        ("line\u2028sep", "line\\u2028sep"),
        ("\udcff", "\\udcff"),
    ],
)
def test_each_control_and_bidi_character_is_shown_as_its_escape(text: str, shown: str) -> None:
    assert printable(text) == shown


@pytest.mark.parametrize("text", ["LM-S10 的整机保修期是多久？", "café", "emoji 👩\u200d💻", "a > b & c"])
def test_text_that_prints_as_itself_is_unchanged(text: str) -> None:
    assert printable(text) == text


def test_newlines_and_tabs_asked_to_be_kept_are_kept() -> None:
    assert printable("a\nb\tc\x1b", keep="\n\t") == "a\nb\tc\\u001b"


def test_what_is_shown_holds_no_control_or_bidi_character() -> None:
    shown = printable(HOSTILE)

    assert shown.isprintable() and "\n" not in shown


def test_a_json_line_shown_is_still_json_with_the_same_value() -> None:
    line = json.dumps({"question": HOSTILE}, ensure_ascii=False)

    assert json.loads(printable(line, keep="\n\t")) == {"question": HOSTILE}
