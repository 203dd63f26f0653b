"""Fast term and slot coverage over sets of units, with per-unit caches.

The completeness check scores many candidate windows per question; a window's coverage is the
union of its units' coverage, so each unit is tokenised and normalised once.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache

from evidence_loop.policies.question.slots import compact, slot_in_text
from evidence_loop.policies.types import Slot
from evidence_loop.tools.tokenize import index_tokens, is_cjk


@lru_cache(maxsize=200_000)
def unit_terms(text: str) -> frozenset[str]:
    """The index tokens of one unit's text."""
    return frozenset(index_tokens(text))


# One unit's text in the form slots and CJK terms are matched in (``slots.compact``), once per unit.
unit_norm = lru_cache(maxsize=200_000)(compact)


def covered_terms(terms: Sequence[str], texts: Iterable[str]) -> frozenset[str]:
    """Terms present in any of the texts: as a token, or for CJK terms as a substring."""
    texts = tuple(texts)
    seen: set[str] = set()
    for text in texts:
        seen.update(unit_terms(text))
    found = {t for t in terms if t in seen}
    for term in terms:
        if term in found:
            continue
        if is_cjk(term) and len(term) > 1 and any(term in unit_norm(t) for t in texts):
            found.add(term)
    return frozenset(found)


def term_share(terms: Sequence[str], texts: Iterable[str], weights: Sequence[float] = ()) -> float:
    """Share of the question's content terms the texts contain, weighted when weights are given.

    With IDF weights a missing rare term (a product name) costs more than a missing common one.
    1.0 when the question has no content terms.
    """
    if not terms:
        return 1.0
    found = covered_terms(terms, texts)
    if not weights:
        return len(found) / len(terms)
    total = sum(weights)
    return sum(w for t, w in zip(terms, weights, strict=True) if t in found) / total if total else 1.0


def uncovered_slots(slots: Sequence[Slot], texts: Iterable[str]) -> tuple[Slot, ...]:
    """Slots none of the texts contains."""
    texts = tuple(texts)
    return tuple(s for s in slots if not any(slot_in_text(s, t) for t in texts))
