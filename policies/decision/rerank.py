"""Expand first, rerank after: which grown windows a cross-encoder reads, and the text it is shown.

    rerank_pool(items, policy)                  the ``rerank_k`` best grown windows, best first
    rerank_text(item, policy)                   a window's units, one per line, cut to ``rerank_chars``
    reranked(items, pool, scores, policy)       every window, the pool's with its score in their check

A truncated window ranks badly, so windows are sent only once grown; each one's score enters its
evidence score with ``Policy.w_rerank`` (``policies.evidence.completeness.with_rerank``). Windows outside the
pool keep their score and no rerank value.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from evidence_loop.policies.config import Policy
from evidence_loop.policies.evidence.checked import Checked
from evidence_loop.policies.evidence.completeness import with_rerank
from evidence_loop.policies.evidence.selection import rank
from evidence_loop.tools.windows import units_of


def rerank_pool(items: Sequence[Checked], policy: Policy) -> list[Checked]:
    """The windows the reranker reads: the best ``rerank_k`` by their score before any reranking
    (a window an earlier check scored is ranked on what it scored without it)."""
    unscored = [replace(c, check=with_rerank(c.check, 0.0, policy)) for c in items]
    position = {id(u): i for i, u in enumerate(unscored)}
    return [items[position[id(u)]] for u in rank(unscored)[: policy.rerank_k]]


def rerank_text(item: Checked, policy: Policy) -> str:
    """What the reranker reads of a window: its units' texts, one per line, cut to ``rerank_chars``."""
    return "\n".join(u.text for u in units_of(item.window, item.doc))[: policy.rerank_chars]


def reranked(
    items: Sequence[Checked], pool: Sequence[Checked], scores: Sequence[float], policy: Policy
) -> list[Checked]:
    """``items`` in their order, each window of ``pool`` with its score (same position) in its check."""
    rescored = [replace(c, check=with_rerank(c.check, s, policy)) for c, s in zip(pool, scores, strict=True)]
    out = []
    for item in items:
        found = next((r for c, r in zip(pool, rescored, strict=True) if c is item), None)
        out.append(found if found is not None else item)
    return out
