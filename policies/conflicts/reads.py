"""What a statement reads as values beyond its slots, shared by the conflict candidates worded
apart (``policies.conflicts.attributes``, ``policies.conflicts.meaning``): counted things the question
names ("8 backup codes"), the end of a range, and a line that asks a question (an FAQ's)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from evidence_loop.policies.lexicon import EN_NUMBER_WORDS
from evidence_loop.policies.question.values import stem

ASKS_BACK_RE = re.compile(r"(?:[?？]|[?？]\s*\**|^\s*(?:问|Q)\s*[:：].*)\s*$", re.IGNORECASE)

_RANGE_END_RE = re.compile(r"[0-9]\s*[-–—~～至到]\s*$")
_COUNTED_RE = re.compile(
    rf"(?<![\w.])(?P<n>[0-9]+|{'|'.join(EN_NUMBER_WORDS)})\s+(?:(?P<w1>[A-Za-z][\w-]*)\s+)?(?P<w2>[A-Za-z][\w-]*)",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Read:
    """A value read off a statement: its kind, unit, forms and span there."""

    kind: str
    unit: frozenset[str]
    forms: frozenset[str]
    span: tuple[int, int]


def range_end(text: str, start: int) -> bool:
    """The value at ``start`` ends a range ("90-105美元", "1–3个工作日"): no value on its own."""
    return _RANGE_END_RE.search(text, 0, start) is not None


def counted_things(text: str, terms: frozenset[str]) -> Iterator[Read]:
    """A number before a word the question names ("8 backup codes", "up to 16 battery devices"): a
    count of that thing (Chinese counts are slots: "8台", "5路")."""
    for found in _COUNTED_RE.finditer(text):
        number = found.group("n").lower()
        value = number if number.isdigit() else str(EN_NUMBER_WORDS[number])
        for group in ("w1", "w2"):
            word = found.group(group)
            if word and stem(word.lower()) in terms:
                yield Read(
                    "count", frozenset({stem(word.lower())}), frozenset({value}), (found.start(), found.end())
                )
                break
