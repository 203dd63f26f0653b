"""Which grown windows become the outcome's evidence, within the outcome budget.

shortlist(items, policy)                           the lead windows, and the runners-up to regrow
runner_policy(policy), regrown(original, item, p)  how a runner-up is regrown, and what it keeps
select_evidence(question, shortlisted, items, p)   the evidence, windows resolving its references and
                                                   speaking for a comparison's missing sides first
conflict_extras(items, selected, policy)           windows the conflict check reads beside it
statement_span(question, units, policy)            where in a window a disagreement can sit
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import TypeVar

from evidence_loop.policies.config import Policy
from evidence_loop.policies.evidence.checked import Checked
from evidence_loop.policies.evidence.comparison import covers, sides_to_cover, uncovered_sides
from evidence_loop.policies.evidence.completeness import with_rerank
from evidence_loop.policies.evidence.coverage import covered_terms
from evidence_loop.policies.evidence.references import reference_resolved, unresolved_references
from evidence_loop.policies.evidence.slot_scope import on_subject
from evidence_loop.policies.question.analysis import Question
from evidence_loop.tools.types import Unit
from evidence_loop.tools.windows import char_count

T = TypeVar("T")


def rank(items: Sequence[Checked]) -> list[Checked]:
    """Best score first; ties by best seed score, then by document id and position (stable)."""

    def key(c: Checked) -> tuple[float, float, str, str, int]:
        seed = max((h.score for h in c.window.seeds), default=0.0)
        return (-c.check.score, -seed, c.window.doc_id, c.window.version, c.window.first)

    return sorted(items, key=key)


def shortlist(items: Sequence[Checked], policy: Policy) -> tuple[list[Checked], list[Checked]]:
    """The ``lead_windows`` best windows, kept as grown, and the runners-up after them (up to
    ``max_windows``), to be regrown from their seeds under ``runner_policy`` so that more short
    passages fit the outcome beside the best ones. No runners-up when the preset does not regrow
    them (an ablation hands back whole windows only) or ``runner_budget`` is 0."""
    ranked = rank(items)
    lead = ranked[: policy.lead_windows]
    if not policy.preset.regrows_runners_up or not policy.runner_budget:
        return lead, []
    return lead, ranked[policy.lead_windows : policy.max_windows]


def runner_policy(policy: Policy) -> Policy:
    """The policy a runner-up is regrown under: the runner budget, and no section read whole for free."""
    return replace(policy, window_budget=policy.runner_budget, parent_free_chars=0)


def regrown(original: Checked, item: Checked, policy: Policy) -> Checked:
    """A runner-up regrown from its seeds: the reranker's score of the passage as grown stays with it."""
    if original.check.rerank is None:
        return item
    return replace(item, check=with_rerank(item.check, original.check.rerank, policy))


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


def _first_meeting(
    needs: Iterable[T],
    ordered: Sequence[Checked],
    selected: Sequence[Checked],
    meets: Callable[[T, Checked], bool],
) -> list[Checked]:
    """For each need, the first window of ``ordered`` outside ``selected`` that meets it."""
    found = (next((c for c in ordered if c not in selected and meets(need, c)), None) for need in needs)
    return [c for c in found if c is not None]


def pinned_for_references(
    selected: Sequence[Checked], candidates: Sequence[Checked], policy: Policy
) -> list[Checked]:
    """For each reference the selected evidence leaves unresolved, the best window that resolves it."""
    return _first_meeting(
        unresolved_references(selected, policy),
        sorted(candidates, key=lambda c: -c.check.score),
        selected,
        lambda ref, item: reference_resolved(ref[0], ref[1], [item], policy),
    )


def pinned_for_sides(
    question: Question, selected: Sequence[Checked], candidates: Sequence[Checked], policy: Policy
) -> list[Checked]:
    """For each side of a comparison the selected evidence does not speak for, the best window that does."""
    sides = sides_to_cover(question, policy)
    return _first_meeting(
        uncovered_sides(sides, selected),
        rank(candidates),
        selected,
        lambda side, item: covers(side, sides, item.window, item.doc),
    )


def select_evidence(
    question: Question, shortlisted: Sequence[Checked], items: Sequence[Checked], policy: Policy
) -> list[Checked]:
    """The evidence, selected from the ``shortlisted`` windows that are about the question's subject.

    When it refers to a rule that it does not carry and another grown window of ``items`` does, or
    when a comparison's side has no window in it and a grown one speaks for that side, the best such
    window is pinned beside the lead one and the evidence is selected again, from the windows as
    grown: the reference and what it refers to are read together, and each side of a comparison.
    """
    selected = select(on_subject(question, shortlisted, policy), policy, factoid=question.factoid)
    pinned = pinned_for_references(selected, items, policy)
    subject = on_subject(question, items, policy) if pinned or sides_to_cover(question, policy) else []
    pinned += [p for p in pinned_for_sides(question, selected, subject, policy) if p not in pinned]
    if not pinned:
        return selected
    pins = (*selected[:1], *pinned)
    return select(subject, policy, pinned=pins, factoid=question.factoid)


def conflict_extras(items: Sequence[Checked], selected: Sequence[Checked], policy: Policy) -> list[Checked]:
    """Other windows scoring close to the best, read by the conflict check after the selected evidence
    (together at most ``conflict_pool_max``, never fewer than the evidence)."""
    ranked = rank(items)
    if not ranked:
        return []
    floor = ranked[0].check.score * policy.conflict_pool_ratio
    # a runner-up is selected regrown from its seeds: its full-size original is the same passage
    chosen = {(c.window.key, c.window.seeds) for c in selected}
    extra = [c for c in ranked if (c.window.key, c.window.seeds) not in chosen and c.check.score >= floor]
    return extra[: max(policy.conflict_pool_max - len(selected), 0)]


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
