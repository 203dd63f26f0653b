"""Which grown windows become the outcome's evidence, within the outcome budget."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from policies.completeness import WindowCheck
from policies.config import Policy
from policies.coverage import covered_terms
from policies.question import Question
from tools.types import ParsedDocument, Unit
from tools.windows import Window, char_count


@dataclass(frozen=True, slots=True)
class Checked:
    """A window with its document, its latest check, and the best score of the recall that found it."""

    window: Window
    doc: ParsedDocument
    check: WindowCheck
    best: float = 0.0


def rank(items: Sequence[Checked]) -> list[Checked]:
    """Best score first; ties by best seed score, then by document id and position (stable)."""

    def key(c: Checked) -> tuple[float, float, str, str, int]:
        seed = max((h.score for h in c.window.seeds), default=0.0)
        return (-c.check.score, -seed, c.window.doc_id, c.window.version, c.window.first)

    return sorted(items, key=key)


def select(
    items: Sequence[Checked], policy: Policy, pinned: Sequence[Checked] = (), factoid: bool = False
) -> list[Checked]:
    """The best windows whose score is close to the best one, until the outcome budget or window count.

    ``pinned`` windows (those that resolve a reference the kept evidence makes) are kept first. For
    a ``factoid`` question (one asking for a number, a date or a name) windows down to ``fill_ratio``
    of the best are read too while the evidence is under ``fill_chars``: a fact sits in one short
    sentence, and of several short passages on the subject any one may be the one that states it;
    a procedure sits in one place, and more passages are only noise.
    """
    ranked = rank(items)
    if not ranked:
        return []
    best = ranked[0].check.score
    chosen: list[Checked] = []
    used = 0
    for item in [*pinned, *[r for r in ranked if r not in pinned]]:
        size = char_count(item.window, item.doc)
        close = item.check.score >= best * policy.window_keep_ratio
        fills = factoid and item.check.score >= best * policy.fill_ratio and used + size <= policy.fill_chars
        if chosen and item not in pinned and not (close or fills):
            continue
        if chosen and (used + size > policy.outcome_budget or len(chosen) >= policy.max_windows):
            continue
        chosen.append(item)
        used += size
    return chosen


def conflict_pool(items: Sequence[Checked], selected: Sequence[Checked], policy: Policy) -> list[Checked]:
    """The selected evidence first, then other windows scoring close to the best, for the conflict check."""
    ranked = rank(items)
    if not ranked:
        return list(selected)
    floor = ranked[0].check.score * policy.conflict_pool_ratio
    # a runner-up is selected regrown from its seeds: its full-size original is the same passage
    chosen = {(c.window.key, c.window.seeds) for c in selected}
    extra = [c for c in ranked if (c.window.key, c.window.seeds) not in chosen and c.check.score >= floor]
    return [*selected, *extra][: max(policy.conflict_pool_max, len(selected))]


def statement_span(question: Question, units: Sequence[Unit], policy: Policy) -> tuple[int, int] | None:
    """Character span of the units that speak to the question (those naming at least
    ``statement_term_share`` as many of its terms as the best unit does): where a disagreement about
    the asked value can sit."""
    counts = [len(covered_terms(question.terms, (u.text,))) for u in units]
    best = max(counts, default=0)
    if best == 0:
        return None
    keep = [u for u, n in zip(units, counts, strict=True) if n >= best * policy.statement_term_share]
    return keep[0].start, keep[-1].end
