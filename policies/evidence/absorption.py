"""Adding a grown window to the ones a run holds: windows of one document that touch or overlap merge.

Two seeds of one passage grow into overlapping windows; read as one window they are one piece of
evidence, checked as a whole (a gap one of them had may be closed by the other).
"""

from __future__ import annotations

from collections.abc import Sequence

from evidence_loop.policies.config import Policy
from evidence_loop.policies.evidence.checked import Checked
from evidence_loop.policies.evidence.completeness import check_window
from evidence_loop.policies.question.analysis import Question
from evidence_loop.tools.windows import merge_windows, mergeable


def absorb(question: Question, items: Sequence[Checked], item: Checked, policy: Policy) -> list[Checked]:
    """``items`` with ``item`` added, every mergeable pair merged into one re-checked window, until no
    pair is left (the first pair found in order merges first, into the earlier one's place)."""
    out = [*items, item]
    while (pair := _first_mergeable(out)) is not None:
        i, j = pair
        a, b = out[i], out[j]
        window = merge_windows([a.window, b.window])[0]
        best = max(a.best, b.best)
        out[i] = Checked(window, a.doc, check_window(question, window, a.doc, best, policy), best)
        del out[j]
    return out


def _first_mergeable(items: Sequence[Checked]) -> tuple[int, int] | None:
    """The first pair (i < j) of windows that touch or overlap in one document."""
    for i in range(len(items)):
        for j in range(i + 1, len(items)):
            if mergeable(items[i].window, items[j].window, items[i].doc):
                return i, j
    return None
