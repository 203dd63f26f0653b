"""Places a question or a text names ("Hong Kong", "香港", "the EU"), found the same way by the
follow-up rules (``policies.question.followup_swap``) and the scopes of statements
(``policies.question.scopes``)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from evidence_loop.policies.lexicon import PLACE_ALIASES, PLACE_REGIONS, PLACES_EN, PLACES_GENERIC, PLACES_ZH


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


def canonical(name: str) -> str:
    """The one name a place is read by, whatever its spelling ("HK", "香港" -> "hong kong")."""
    lowered = name.strip().lower()
    return PLACE_ALIASES.get(lowered, lowered)


def places_in(text: str) -> list[str]:
    """The places a text names, as written, in the order written (English and Chinese)."""
    found = [(m.start(), m.group()) for pattern in (PLACE_EN_RE, PLACE_ZH_RE) for m in pattern.finditer(text)]
    return [name for _, name in sorted(found)]


def spellings(place: str) -> tuple[str, ...]:
    """Every way a page may name ``place`` (its own spelling, its aliases in both languages) and
    the regions that hold it ("港澳台" for "香港")."""
    name = canonical(place)
    own = {place, name, *(k for k, v in PLACE_ALIASES.items() if v == name)}
    held_by = {region for region, members in PLACE_REGIONS.items() if name in members}
    return tuple(sorted(own | held_by))


def names_place(text: str, place: str) -> bool:
    """Whether a text names ``place`` or a region holding it, in either language."""
    lowered = text.lower()
    for spelling in spellings(place):
        if _cjk(spelling):
            if spelling in text:
                return True
        elif re.search(rf"(?<![\w-]){re.escape(spelling.lower())}(?![\w-])", lowered):
            return True
    return False


def _cjk(word: str) -> bool:
    return any("\u4e00" <= c <= "\u9fff" for c in word)


def askable_places(text: str) -> list[str]:
    """The places a text names that a page would have to name to answer about them (not "国内",
    "海外": where the asker is, ``lexicon.PLACES_GENERIC``)."""
    return [p for p in dict.fromkeys(places_in(text)) if p.lower() not in PLACES_GENERIC]
