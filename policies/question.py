"""What a question asks for: its slots and its content terms, computed once."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from policies.answer_type import asked_values, is_factoid, own_numbers
from policies.conflict_values import ValueKind
from policies.relevance import content_terms
from policies.slots import extract_slots
from policies.types import Slot
from tools.dense import UnitCosines


@dataclass(frozen=True, slots=True)
class Question:
    """A question analysed once per run; every check reads it."""

    text: str
    slots: tuple[Slot, ...]
    terms: tuple[str, ...]
    weights: tuple[float, ...] = ()
    asks: frozenset[ValueKind] = frozenset()  # numeric kinds of value asked for (policies.answer_type)
    own_numbers: frozenset[str] = frozenset()
    factoid: bool = False
    # the question's cosine with each unit the caller may read (None: lexical recall only)
    cosines: UnitCosines | None = field(default=None, compare=False)


Spell = Callable[[Sequence[str]], Sequence[str]]
Weigh = Callable[[Sequence[str]], Mapping[str, float]]


def analyse(
    text: str, weigh: Weigh | None = None, spell: Spell | None = None, cosines: UnitCosines | None = None
) -> Question:
    """Slots and content terms of a question; ``weigh`` gives each term its corpus IDF,
    ``spell`` reads a misspelled term as the corpus word meant ("shedule" as "schedule"), ``cosines``
    says how close each unit is to the question's meaning."""
    terms = content_terms(text)
    if spell is not None:
        terms = tuple(dict.fromkeys(spell(terms)))
    weights = weigh(terms) if weigh is not None else {}
    return Question(
        text,
        extract_slots(text),
        terms,
        tuple(weights.get(t, 1.0) for t in terms) if weights else (),
        asked_values(text),
        own_numbers(text),
        is_factoid(text),
        cosines,
    )
