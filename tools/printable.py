"""Stored text shown to a person: every control and bidi character as a visible escape.

Questions are written by end users and notes by reviewers; a terminal obeys the escape sequences in
them (``ESC ] 0;`` sets the window title, ``ESC [2J`` clears the screen, a carriage return overwrites
a line) and a browser or terminal obeys the direction overrides (U+202E shows the rest of a line
reversed). Every command that prints stored text, and the audit console, show it through
:func:`printable`, which writes each such character as a JSON-style escape (``\\u001b``,
``\\u202e``, ``\\n``): what an operator reads is what was stored, and a JSON line stays JSON.
"""

from __future__ import annotations

import re
from functools import cache

CONTROL_AND_BIDI = (
    "\x00-\x1f\x7f-\x9f"  # C0 controls (escape, carriage return, newline, ...), DEL and C1 controls
    "\ud800-\udfff"  # lone surrogates: bytes that were not UTF-8
    "\u2028\u2029"  # line and paragraph separators
    "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"  # direction marks, embeddings, overrides, isolates
)
"""Every character :func:`printable` escapes: those that move the cursor, end a line, or change the
direction text is shown in."""

_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


@cache
def _pattern(keep: str) -> re.Pattern[str]:
    if not keep:
        return re.compile(f"[{CONTROL_AND_BIDI}]")
    return re.compile(f"(?![{re.escape(keep)}])[{CONTROL_AND_BIDI}]")


def _escape(found: re.Match[str]) -> str:
    char = found.group()
    return _SHORT.get(char) or f"\\u{ord(char):04x}"


def printable(text: str, keep: str = "") -> str:
    """``text`` with each control and bidi character (``CONTROL_AND_BIDI``) as its escape, save the
    characters in ``keep`` (``"\\n\\t"`` for text of several lines): one line unless told."""
    if text.isascii() and text.isprintable():
        return text
    return _pattern(keep).sub(_escape, text)
