"""Places a question or a text names ("Hong Kong", "香港", "the EU"), found the same way by the
follow-up rules (``policies.question.followup_swap``) and the scopes of statements
(``policies.question.scopes``)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from evidence_loop.policies.lexicon import PLACES_EN, PLACES_ZH


def alternation(words: Iterable[str]) -> str:
    """A regex alternation of ``words``, the longest first so "Hong Kong" wins over "Hong"."""
    return "|".join(re.escape(w) for w in sorted(set(words), key=len, reverse=True))


# a place's name in any case ("UNITED STATES" in a title), an abbreviation only in capitals ("US", not "us")
PLACE_EN_RE = re.compile(
    rf"(?<![\w-])(?:(?i:{alternation(p for p in PLACES_EN if not p.isupper())})"
    rf"|{alternation(p for p in PLACES_EN if p.isupper())})(?![\w-])"
)
PLACE_ZH_RE = re.compile(alternation(PLACES_ZH))


def is_place(text: str) -> bool:
    """True for a known place, as a whole ("Hong Kong", "香港")."""
    stripped = text.strip()
    return bool(PLACE_EN_RE.fullmatch(stripped) or PLACE_ZH_RE.fullmatch(stripped))
