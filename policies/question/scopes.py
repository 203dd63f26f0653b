"""The names that scope what a text says: a model ("C200", "C200 Pro"), a place ("Hong Kong", "香港"), a
plan, tier or edition ("the Starter plan", "企业版"), a customer group ("business customers",
"个人用户"), and the label of a table row (its first cell). Read the same way from a question, a
statement and a section's headings, so the conflict check can tell "the same attribute of the same
thing" from the same attribute of two things (``policies.conflicts.screen``), and a follow-up can tell
which thing of the earlier question a place takes the place of (``policies.question.followup_swap``).

Names are normalised (NFKC, lower case, spaces collapsed) and carry their kind and their offsets in
the text read, so a caller can leave out the ones inside a value.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from evidence_loop.policies.lexicon import (
    GROUP_HEADS_EN,
    GROUP_HEADS_ZH,
    GROUP_WORDS_EN,
    GROUP_WORDS_ZH,
    OUTSIDE_AFTER_ZH,
    OUTSIDE_BEFORE_EN,
    PLACE_ALIASES,
    PLAN_HEADS_EN,
    PLAN_HEADS_ZH,
    SCOPE_STATEMENT_CUES,
)
from evidence_loop.policies.question.places import PLACE_EN_RE, PLACE_ZH_RE, alternation
from evidence_loop.policies.question.slots import model_spans
from evidence_loop.tools.tokenize import CJK_CHARS, normalize

ScopeKind = Literal["model", "place", "plan", "group", "item"]


_NOT_NAME_EN = r"(?!(?:The|A|An|Our|Your|My|This|That|Each|Every|All|Any|Which|What)\b)"
_PLAN_EN_RE = re.compile(
    rf"\b(?P<x>{_NOT_NAME_EN}[A-Z][\w+&-]*(?:\s+{_NOT_NAME_EN}[A-Z][\w+&-]*)?)\s+"
    rf"(?:{alternation(PLAN_HEADS_EN)})\b"
)
_PLAN_ZH_RE = re.compile(
    rf"(?P<x>[{CJK_CHARS}]{{2,4}}?|[A-Za-z][\w+-]*)\s?(?:{alternation(PLAN_HEADS_ZH)})(?![本权图面])"
)
_GROUP_EN_RE = re.compile(
    rf"\b(?P<x>{alternation(GROUP_WORDS_EN)})\s+(?:{alternation(GROUP_HEADS_EN)})\b", re.IGNORECASE
)
_GROUP_ZH_RE = re.compile(rf"(?P<x>{alternation(GROUP_WORDS_ZH)})(?:{alternation(GROUP_HEADS_ZH)})")
_ROW_RE = re.compile(r"\s*\|\s*(?P<x>[^|]+?)\s*\|")
_OUTSIDE_BEFORE_RE = re.compile(rf"(?:{alternation(OUTSIDE_BEFORE_EN)})\s*(?:the\s+)?$", re.IGNORECASE)
_OUTSIDE_AFTER_RE = re.compile(rf"\s*(?:{alternation(OUTSIDE_AFTER_ZH)})")
_SENTENCE_RE = re.compile(r"[^.!?。！？\n]+[.!?。！？]?")
_FIRST_LINE = 120  # a first line this short with no sentence end is the title of a text document
_SENTENCE_END_RE = re.compile(r"[.!?。！？](?:\s|$)")


@dataclass(frozen=True, slots=True)
class ScopeName:
    """One name that scopes a text: its kind, its normalised form and where it stands."""

    kind: ScopeKind
    name: str  # as shown: lower case, single spaces, a place by its one name
    start: int
    end: int

    @property
    def key(self) -> str:
        """The name as compared: without spaces or hyphens ("MIX 3" is "MIX3", a row's "LM-X200" the
        model "LMX200")."""
        return self.name.replace(" ", "").replace("-", "")


@lru_cache(maxsize=20_000)  # statements and headings recur across the pairs of a run, and across runs
def scope_names(text: str) -> tuple[ScopeName, ...]:
    """Every name in ``text`` that scopes what it says, in order of place."""
    found = [*_models(text), *_places(text), *_plans(text), *_groups(text), *_row_label(text)]
    return tuple(sorted(found, key=lambda n: (n.start, n.kind)))


def _name(kind: ScopeKind, text: str, start: int, end: int) -> ScopeName:
    name = " ".join(normalize(text).split())
    return ScopeName(kind, PLACE_ALIASES.get(name, name) if kind == "place" else name, start, end)


def _models(text: str) -> Iterator[ScopeName]:
    """Model numbers, with an edition word after them ("C200 Pro" is no "C200")."""
    for start, end in model_spans(text):
        yield _name("model", text[start:end], start, end)


def _places(text: str) -> Iterator[ScopeName]:
    """Known places; one said from outside ("outside mainland China", "中国大陆以外") is its complement,
    another scope."""
    for pattern in (PLACE_EN_RE, PLACE_ZH_RE):
        for found in pattern.finditer(text):
            place = _name("place", found.group(), found.start(), found.end())
            outside = _OUTSIDE_BEFORE_RE.search(text, 0, found.start()) or _OUTSIDE_AFTER_RE.match(
                text, found.end()
            )
            yield ScopeName("place", f"outside {place.name}", place.start, place.end) if outside else place


@lru_cache(maxsize=4096)
def scope_statement(opening: str) -> str:
    """What a document says of its own scope at its top (``opening``: its first characters): its first
    line when that is a title, and the sentences that say what they apply to ("This article applies
    to accounts registered outside mainland China.", "本条款适用于…")."""
    first = opening.strip().split("\n", 1)[0]
    title = [first] if len(first) <= _FIRST_LINE and not _SENTENCE_END_RE.search(first) else []
    said = [s for s in _SENTENCE_RE.findall(opening) if any(cue in s.lower() for cue in SCOPE_STATEMENT_CUES)]
    return "\n".join([*title, *said])


def _plans(text: str) -> Iterator[ScopeName]:
    for pattern in (_PLAN_EN_RE, _PLAN_ZH_RE):
        for found in pattern.finditer(text):
            yield _name("plan", found.group("x"), found.start("x"), found.end("x"))


def _groups(text: str) -> Iterator[ScopeName]:
    for pattern in (_GROUP_EN_RE, _GROUP_ZH_RE):
        for found in pattern.finditer(text):
            yield _name("group", found.group("x"), found.start("x"), found.end("x"))


def _row_label(text: str) -> Iterator[ScopeName]:
    """A table row's first cell: the item the row is about ("| Starter | $9 |")."""
    found = _ROW_RE.match(text)
    if found is not None and not set(found.group("x")) <= set("-: "):
        yield _name("item", found.group("x"), found.start("x"), found.end("x"))
