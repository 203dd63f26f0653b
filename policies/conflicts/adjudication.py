"""The rule-based adjudicator: what a conflict candidate is when no LLM decides it.

It is conservative on purpose. Different values for the same slot from different sources are a
conflict, unless the sources themselves settle it: one is the current version of the other's
document (the current one wins), or one says in so many words that it replaces an earlier rule
("取代", "自…起调整为", "replaces", "supersedes"). Scopes are never guessed by rule; that is the
LLM's job, and without one the answer stops rather than picks a side.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from evidence_loop.policies.conflicts.settle import settle_by_rule
from evidence_loop.policies.types import ConflictCandidate, ConflictVerdict, EvidenceView, ValueMention

_SUPERSEDING_RE = re.compile(
    r"取代|代替|替代|废止|不再适用|自.{1,24}?起.{0,12}?(?:调整|变更|更改|改)为|现调整为|已调整为|更新为"
    r"|\b(?:replaces?|supersedes?|superseded|no longer (?:applies|valid))\b"
    r"|\b(?:has|have) been (?:changed|updated|raised|lowered|reduced|increased) to\b"
    r"|\b(?:changed|updated) to\b.{0,40}\beffective\b|\beffective\b.{0,40}\b(?:changed|updated) to\b",
    re.IGNORECASE,
)


def adjudicate_by_rules(candidate: ConflictCandidate, views: Sequence[EvidenceView]) -> ConflictVerdict:
    """One candidate by rule: superseded when a source says so or is the current version, else conflict."""
    by_id = {view.evidence_id: view for view in views}
    left, right = by_id.get(candidate.left.evidence_id), by_id.get(candidate.right.evidence_id)
    if left is not None and right is not None:
        settled = settle_by_rule(candidate, left, right)
        if settled is not None:
            return settled
    worded = [side for side in (candidate.left, candidate.right) if _says_it_supersedes(side, by_id)]
    if len(worded) == 1:
        winner = worded[0]
        return ConflictVerdict(
            candidate,
            "superseded",
            "rules",
            f"{winner.evidence_id} says explicitly that its value replaces an earlier one",
            quotes=(_context(winner, by_id),),
            superseded_by=winner.evidence_id,
        )
    return ConflictVerdict(
        candidate,
        "conflict",
        "rules",
        f"different values for the same slot from different sources: {candidate.left.value!r} in "
        f"{candidate.left.doc_id}@{candidate.left.version}, {candidate.right.value!r} in "
        f"{candidate.right.doc_id}@{candidate.right.version}",
        quotes=(candidate.left.quote, candidate.right.quote),
    )


def conflict_outcome(verdicts: Iterable[ConflictVerdict]) -> bool:
    """True when any verdict is a confirmed conflict: the outcome must then be ``conflicting_evidence``."""
    return any(verdict.verdict == "conflict" for verdict in verdicts)


def _says_it_supersedes(side: ValueMention, views: dict[str, EvidenceView]) -> bool:
    return bool(_SUPERSEDING_RE.search(_context(side, views)))


def _context(side: ValueMention, views: dict[str, EvidenceView]) -> str:
    """The sentence that states the value; the whole window when the sentence is not known."""
    view = views.get(side.evidence_id)
    if view is None:
        return side.quote
    start = side.context_start if side.context_start is not None else view.start
    end = side.context_end if side.context_end is not None else view.end
    return view.text[start - view.start : end - view.start]
