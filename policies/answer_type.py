"""Whether a passage states the kind of value a question asks for.

"2020年美网开始时间" asks for a date; of two passages on the 2020 US Open, the one that states a
date for it ("8月31日开赛") answers and the one that only mentions the tournament does not. The
check is narrow: it applies only when the question names a numeric kind (a date, an amount, a
duration, a percentage, a count) and not when it may ask for anything ("什么" alone) or for a
procedure (a how-to). A unit states the asked value when

- it holds a number of an asked kind, with its unit ("8月31日", "$3.2 billion", "30 days");
- that number is not one of the question's own ("2020" in "2020年美网" is the scope, not the answer);
- it says something besides the value (a bare date line "Aug 23, 2020 ..." is metadata);
- it names at least one of the question's content terms, or its neighbour does (read by the caller).

``is_factoid`` tells a question that asks for a fact (a number, a date, a name) from one that asks
for a procedure or a yes/no: selection reads a few more short passages for the first kind.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache

from policies.conflict_values import (
    ALL_KINDS,
    NUMERIC_KINDS,
    STATEMENT_END_RE,
    Atom,
    ValueKind,
    asked_kinds,
    atoms,
    is_number_part,
    number_kind,
)

WHEN: frozenset[ValueKind] = frozenset({"date", "count"})  # what ``asked_kinds`` gives for "when"
# Atoms besides the values: "Aug 23, 2020 ..." alone states nothing; "高级 | 200元" does.
MIN_STATEMENT_ATOMS = 2
_UNIT_WORD_ATOMS = 3  # a unit word after the number may be three CJK atoms: "7个" + "工作日"


def asked_values(question: str) -> frozenset[ValueKind]:
    """The numeric kinds a question asks for; empty when it asks for none, or may ask for any."""
    kinds = asked_kinds(question)
    if kinds == ALL_KINDS:
        return frozenset()
    if kinds & NUMERIC_KINDS == WHEN:
        return frozenset({"date"})  # "when" may be answered by a bare year, which reads as a date too
    return kinds & NUMERIC_KINDS


def is_factoid(question: str) -> bool:
    """True when the question asks for a fact (a number, a date, a name), not a procedure or a yes/no."""
    kinds = asked_kinds(question)
    return kinds != ALL_KINDS and bool(kinds & (NUMERIC_KINDS | {"named"}))


def own_numbers(question: str) -> frozenset[str]:
    """The numbers the question itself writes (its scope: a year, a model's number)."""
    return frozenset(a.norm.replace(",", "") for a in atoms(question) if a.norm[0].isdigit())


@lru_cache(maxsize=200_000)
def stated_values(text: str) -> tuple[tuple[ValueKind, frozenset[str]], ...]:
    """Each number the unit's sentences state, with its unit words: its kind and its digits.

    A sentence that says too little besides its numbers (a date line) states nothing.
    """
    return tuple(value for piece in STATEMENT_END_RE.split(text) for value in _sentence_values(atoms(piece)))


def _sentence_values(sentence: Sequence[Atom]) -> list[tuple[ValueKind, frozenset[str]]]:
    """The numbers of one sentence (a run of number atoms with its units); none if it says little else."""
    norms = [a.norm for a in sentence]
    values: list[tuple[ValueKind, frozenset[str]]] = []
    i, besides = 0, 0
    while i < len(norms):
        if not norms[i][0].isdigit():
            besides += norms[i].isalnum()  # a unit right after a number went with it
            i += 1
            continue
        j = i
        while j < len(norms) and is_number_part(norms[j]):
            j += 1
        run = norms[i:j]
        digits = frozenset(n.replace(",", "") for n in run if n[0].isdigit())
        values.append((number_kind(run, norms[j : j + _UNIT_WORD_ATOMS]), digits))
        i = j
    return values if besides >= MIN_STATEMENT_ATOMS else []


def states(kinds: frozenset[ValueKind], own: frozenset[str], text: str) -> bool:
    """True when the unit states a value of an asked kind that is not one of the question's numbers."""
    return any(kind in kinds and not digits <= own for kind, digits in stated_values(text))


def window_states(
    kinds: frozenset[ValueKind], own: frozenset[str], texts: Sequence[str], is_about: Callable[[str], bool]
) -> bool:
    """True when a unit about the question (``is_about``), or one right beside it, states an asked value.

    A value far from every unit that names the question's subject is a value of something else.
    Whether a unit is about the question is asked only around the units that state a value.
    """
    for i, text in enumerate(texts):
        if states(kinds, own, text) and any(is_about(t) for t in texts[max(0, i - 1) : i + 2]):
            return True
    return False
