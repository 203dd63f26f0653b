"""Numbered things and tiers: subjects a side names beyond models, places and plans
(``Policy.conflict_numbered``).

"The kestrel code 11 is valid for 13 days" and "code 12 is valid for 14 days" in two documents are
one attribute of two things, not two values of one: a head word with a number ("code 11", "Error 21",
"step 3", "错误码21", "第3步") names one thing of a series, and so does a product's name with a tier
("Shield Basic", "Shield Plus"). Two sides naming different things of one series, or one side naming
another thing of a series the question names, speak of different subjects; and the number of a
numbered thing ("11" of "code 11") is no value of it.

A side is read with its statement, the line it stands on (a list item or paragraph whose first
sentence names the thing) and its section's headings and document's title.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from evidence_loop.policies.conflicts.settle import statement_of
from evidence_loop.policies.lexicon import (
    NUMBERED_AFTER_ZH,
    NUMBERED_HEADS_EN,
    NUMBERED_HEADS_ZH,
    TIER_WORDS_EN,
)
from evidence_loop.policies.types import EvidenceView, ValueMention


def _alternation(words: Iterable[str]) -> str:
    """A regex alternation of ``words``, longest first."""
    return "|".join(re.escape(w) for w in sorted(words, key=lambda w: (-len(w), w)))


_NUMBER = r"[A-Za-z]?[0-9]+(?:\.[0-9]+)*[A-Za-z]?"
_EN_RE = re.compile(
    rf"\b(?P<head>{_alternation(NUMBERED_HEADS_EN)})\s*(?:no\.?\s*|#\s*|number\s+)?(?P<n>{_NUMBER})(?![\w.%])",
    re.IGNORECASE,
)
_ZH_RE = re.compile(rf"(?P<head>{_alternation(NUMBERED_HEADS_ZH)})\s*(?P<n>{_NUMBER})(?![\w.%])")
_ZH_ORDINAL_RE = re.compile(
    rf"第\s*(?P<n>[0-9一二三四五六七八九十百]+)\s*(?P<head>{_alternation(NUMBERED_AFTER_ZH)})"
)
_TIER_RE = re.compile(
    rf"\b(?!(?:The|A|An|Our|Your|My|This|That|Each|Every|All|Any|Which|What|Its|Their)\b)"
    rf"(?P<head>[A-Z][A-Za-z0-9-]+)\s+(?P<n>{_alternation(w.capitalize() for w in TIER_WORDS_EN)})\b"
)
_HEAD_FORMS = {"codes": "code", "errors": "error", "steps": "step", "no": "number"}


@dataclass(frozen=True, slots=True)
class Numbered:
    """One numbered thing: its series (the head word, or the product a tier is of), its number or
    tier, and where it stands in the text read."""

    series: str
    number: str
    start: int
    end: int

    @property
    def name(self) -> str:
        return f"{self.series} {self.number}"


def numbered_in(text: str) -> Iterator[Numbered]:
    """The numbered things and tiers ``text`` names."""
    for pattern in (_EN_RE, _ZH_RE, _ZH_ORDINAL_RE, _TIER_RE):
        for found in pattern.finditer(text):
            head = found.group("head").lower()
            yield Numbered(_HEAD_FORMS.get(head, head), found.group("n").lower(), *found.span())


Names = frozenset[tuple[str, str]]


def _names(text: str) -> Names:
    return frozenset((n.series, n.number) for n in numbered_in(text))


def side_numbered(side: ValueMention, view: EvidenceView) -> Names:
    """What one side names: its statement's numbered things, its line's and its page's (the value
    itself left out)."""
    text, offset = statement_of(side, view)
    at = side.start - view.start
    head = view.text.rfind("\n", 0, at) + 1
    tail = view.text.find("\n", at)
    line = view.text[head : tail if tail >= 0 else len(view.text)]
    if head == 0:
        line = view.lead[view.lead.rfind("\n") + 1 :] + line  # the line began before the statements read
    own = {(n.series, n.number) for n in numbered_in(text) if not _holds(n, side, view.start + offset)}
    said = "\n".join((*view.section, view.title))
    return frozenset(own) | _names(line) | _names(said)


def _holds(name: Numbered, side: ValueMention, base: int) -> bool:
    """The side's value lies inside the name ("11" of "code 11")."""
    return base + name.start <= side.start and side.end <= base + name.end


def number_of_a_thing(side: ValueMention, view: EvidenceView) -> str | None:
    """The numbered thing whose own number the side's value is, if it is one."""
    text, offset = statement_of(side, view)
    for name in numbered_in(text):
        if _holds(name, side, view.start + offset):
            return name.name
    return None


def numbered_apart(ours: Names, theirs: Names, asked: Names) -> tuple[str, str, str] | None:
    """Why two sides are about different numbered things: (reason template, left, right), or None."""
    for series in sorted({s for s, _ in ours} & {s for s, _ in theirs}):
        mine = {n for s, n in ours if s == series}
        other = {n for s, n in theirs if s == series}
        if mine.isdisjoint(other):
            return (
                "the values are for different numbered things: {} / {}",
                _shown(series, mine),
                _shown(series, other),
            )
    for series in sorted({s for s, _ in asked}):
        wanted = {n for s, n in asked if s == series}
        for names in (ours, theirs):
            found = {n for s, n in names if s == series}
            if found and found.isdisjoint(wanted):
                return (
                    "one side is about {}; the question asks about {}",
                    _shown(series, found),
                    _shown(series, wanted),
                )
    return None


def _shown(series: str, numbers: set[str]) -> str:
    return ", ".join(f"'{series} {n}'" for n in sorted(numbers))


def asked_numbered(question: str) -> Names:
    """The numbered things and tiers a question names."""
    return _names(question)
