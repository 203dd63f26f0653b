"""The second, wider lookup for conflicts (``Policy.conflict_wider_k``).

The conflict check compares what the evidence holds, and recall reaches what shares the question's
words or meaning. Once the run has the statement that answers (the first quoted unit stating a
value of the asked kind), a few units of other documents are looked up by that statement's own
words and e5 vector (one hybrid search over what the caller may read), each grown into a window
as recall grows one. They join the windows the conflict check reads, with the answering statement
as the anchor ``policies.conflicts.wider`` pairs them with. Nothing is looked up for a question
that asks no value, for a lexical run, or when nothing answers.
"""

from __future__ import annotations

from collections.abc import Sequence

from evidence_loop.agent.loop.growth import Grower
from evidence_loop.policies.config import Policy
from evidence_loop.policies.conflicts.wider import Anchor, states_asked
from evidence_loop.policies.evidence.checked import Checked
from evidence_loop.policies.question.analysis import Question
from evidence_loop.tools.search.snapshot import Snapshot
from evidence_loop.tools.types import Unit
from evidence_loop.tools.windows import Step, Window, seed_window


def _quiet(window: Window, step: Step) -> None:
    """Growing a window of the wider lookup is no step of the run."""


def answering_unit(question: Question, quoted: Sequence[tuple[int, Unit]]) -> Unit | None:
    """Of the units the answer quotes that state a value of the asked kind, the one closest to the
    question in meaning (the first of equals): an answer may quote a neighbouring rule beside it."""
    cosines = question.cosines
    stating = [u for _, u in quoted if states_asked(question, u.text)]
    if cosines is None or not stating:
        return None
    near = [cosines.of(u.doc_id, u.version, u.ordinal) for u in stating]
    return max(zip(stating, near, strict=True), key=lambda un: -2.0 if un[1] is None else un[1])[0]


def wider_lookup(
    snapshot: Snapshot,
    question: Question,
    groups: tuple[str, ...],
    quoted: Sequence[tuple[int, Unit]],
    read: Sequence[Checked],
    policy: Policy,
) -> tuple[list[Checked], Anchor | None]:
    """Windows of other documents around the units closest to the answering statement, and the
    anchor to pair them with; ([], None) when there is nothing to look up. ``quoted``: the answer's
    units (none when the run does not answer); ``read``: the windows the conflict check reads already
    (their documents are not looked up again)."""
    dense = snapshot.dense_index
    if not policy.conflict_wider_k or question.cosines is None or dense is None or not quoted:
        return [], None
    unit = answering_unit(question, quoted)
    position = None if unit is None else snapshot.position(unit.doc_id, unit.version, unit.ordinal)
    if unit is None or position is None:
        return [], None
    cosines = snapshot.cosines(dense.matrix[position], groups)
    if cosines is None:
        return [], None
    hits = snapshot.search(
        unit.text,
        policy.conflict_wider_k,
        groups=groups,
        scoped=policy.caller_statistics,
        similarities=cosines.similarities,
        **policy.recall_options(),
    )
    held = {(c.window.doc_id, c.window.version) for c in read}
    best = max((h.score for h in hits), default=0.0)
    found: list[Checked] = []
    for hit in hits:
        key = (hit.unit.doc_id, hit.unit.version)
        if key == (unit.doc_id, unit.version) or key in held:
            continue  # the answer's own document, or one the evidence already reads
        grower = Grower(question, snapshot.parsed(*key), best, policy, _quiet)
        found.append(grower.grow(seed_window(hit)))
    anchor = Anchor(
        (unit.doc_id, unit.version, unit.ordinal),
        unit.text,
        cosines,
        policy.conflict_wider_closeness,
        policy.conflict_meaning_ratio,
    )
    return found, anchor
