"""A follow-up's side of a run: which earlier turns are read, the resolution, and the ``ambiguous_subject``
pieces when the follow-up may stand for several things (the rules are ``policies.question.followup``)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import replace

from evidence_loop.policies.config import Policy
from evidence_loop.policies.evidence.checked import Checked
from evidence_loop.policies.question.followup import (
    Resolution,
    Turn,
    ambiguous_pieces,
    resolve,
    unresolved_candidates,
)
from evidence_loop.policies.types import MissingPiece
from evidence_loop.tools.search.snapshot import Snapshot


def skipped(policy: Policy, history: Sequence[Turn]) -> int:
    """How many of the oldest turns the policy leaves unread."""
    return max(len(history) - policy.followup_turns, 0)


def resolution_for(policy: Policy, question: str, history: Sequence[Turn]) -> Resolution | None:
    """The follow-up resolved from the last turns of ``history``; None without any (or with the rule
    off): the run is then exactly the one of a question asked alone."""
    if not history or not policy.followups:
        return None
    return resolve(question, history[skipped(policy, history) :], policy.followup_kinds)


# the turns that only set the earlier subject beside their own words ("we are moving abroad next
# month"): the earlier turn's documents tell more than its words; a pronoun's or an ellipsis's
# resolved question names its subject already (and an extra recall would cost as much as the seed's)
TEXT_PRIOR_CUES = frozenset({"statement", "condition"})


def with_prior(
    policy: Policy, snapshot: Snapshot, resolution: Resolution | None, groups: Collection[str]
) -> Resolution | None:
    """A statement or condition whose source turn came without its run (a plain question): the
    documents a recall of that turn finds stand in for its evidence, as the recall prior."""
    if resolution is None or resolution.prior_docs or resolution.cue not in TEXT_PRIOR_CUES:
        return resolution
    if policy.followup_doc_boost <= 0 or policy.followup_prior_k <= 0:
        return resolution
    k, scoped = policy.followup_prior_k, policy.caller_statistics
    hits = snapshot.search(resolution.source, k, groups=groups, scoped=scoped)
    docs = tuple(dict.fromkeys(h.unit.doc_id for h in hits))
    return replace(resolution, prior_docs=docs)


def ambiguity(
    policy: Policy,
    snapshot: Snapshot,
    resolution: Resolution | None,
    selected: Sequence[Checked],
    groups: Collection[str],
) -> list[MissingPiece]:
    """``ambiguous_subject`` pieces when the follow-up may stand for several things: the sides of the
    comparison it follows (each with the document recall finds for that name asked this way), or, when
    nothing resolved it, the several documents its evidence came from."""
    if resolution is None:
        return []
    candidates = unresolved_candidates(resolution, [(c.doc.title, c.doc.doc_id) for c in selected])
    for name in resolution.candidates:
        query = f"{name} {resolution.asked}"
        hits = snapshot.search(query, 1, groups=groups, scoped=policy.caller_statistics)
        candidates.append((name, hits[0].unit.doc_id if hits else None))
    return ambiguous_pieces(candidates)
