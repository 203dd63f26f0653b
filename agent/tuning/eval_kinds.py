"""``evloop eval``'s table by question kind: how each kind a set's builder labelled fares.

A set may label its questions with ``metadata.kind`` ("fact", "table_cell", "procedure",
"unanswerable", "conflict", ...). The kind is read here, after the run, to report; the loop never
sees a question's metadata. Per kind:

    n                 questions of the kind
    correct           share whose outcome is the expected one
    answer hit        share of those expecting an answer with (non free-form) gold answers whose
                      answer text holds one, after NFKC, lower-casing and whitespace removal (as
                      ``score.py`` reads ``answer hit rate``); "-" when none is eligible
    conflict recall   share of those expecting a conflict that stopped as one; "-" when none does
    false conflicts   questions not expecting a conflict that stopped as one (a count)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evidence_loop.agent.tuning.attribution import norm

EXPECTED = {"answer": "answered", "refuse": "insufficient_evidence", "conflict": "conflicting_evidence"}
ALL = "all"


@dataclass(frozen=True, slots=True)
class KindRow:
    """The figures of one kind (or of every labelled question: ``ALL``)."""

    kind: str
    n: int
    correct: float
    answer_hit: float | None
    conflict_recall: float | None
    false_conflicts: int


def kind_of(question: Mapping[str, Any]) -> str | None:
    """The question's ``metadata.kind``, or None when it has none."""
    metadata = question.get("metadata")
    kind = metadata.get("kind") if isinstance(metadata, Mapping) else None
    return str(kind) if kind not in (None, "") else None


def answer_hit(question: Mapping[str, Any], result: Mapping[str, Any]) -> bool | None:
    """Whether the answer's own text holds a gold answer; None when the question is not scored so."""
    golds = [norm(str(g)) for g in question.get("gold_answers") or []]
    golds = [g for g in golds if g]
    free_form = (question.get("metadata") or {}).get("answer_type") == "free_form"
    if question.get("expect") != "answer" or not golds or free_form:
        return None
    answer = result.get("answer")
    text = answer.get("text") if isinstance(answer, Mapping) else answer
    held = norm(text) if isinstance(text, str) else ""
    return result.get("status") == "answered" and any(g in held for g in golds)


def _share(flags: Sequence[bool]) -> float | None:
    return sum(flags) / len(flags) if flags else None


def _row(kind: str, pairs: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]]) -> KindRow:
    statuses = [(q.get("expect"), r.get("status")) for q, r in pairs]
    hits = [h for h in (answer_hit(q, r) for q, r in pairs) if h is not None]
    return KindRow(
        kind,
        len(pairs),
        sum(EXPECTED.get(str(e)) == s for e, s in statuses) / len(pairs),
        _share(hits),
        _share([s == "conflicting_evidence" for e, s in statuses if e == "conflict"]),
        sum(1 for e, s in statuses if e != "conflict" and s == "conflicting_evidence"),
    )


def by_kind(questions: Sequence[Mapping[str, Any]], results: Sequence[Mapping[str, Any]]) -> list[KindRow]:
    """One row per kind in first-seen order, then ``ALL`` over the labelled questions; [] when no
    question carries a kind. A question without a result line counts as wrong."""
    by_id = {str(r.get("id")): r for r in results}
    groups: dict[str, list[tuple[Mapping[str, Any], Mapping[str, Any]]]] = {}
    for question in questions:
        kind = kind_of(question)
        if kind is not None:
            groups.setdefault(kind, []).append((question, by_id.get(str(question.get("id")), {})))
    if not groups:
        return []
    labelled = [pair for pairs in groups.values() for pair in pairs]
    return [*(_row(kind, pairs) for kind, pairs in groups.items()), _row(ALL, labelled)]


def kind_lines(rows: Sequence[KindRow]) -> list[str]:
    """The table as printed lines."""

    def rate(value: float | None) -> str:
        return "-" if value is None else f"{value:.3f}"

    width = max(22, *(len(r.kind) + 2 for r in rows))
    head = "".join(h.rjust(11) for h in ("n", "correct", "answer hit", "conflicts", "false conf"))
    lines = ["kind".ljust(width) + head]
    for r in rows:
        cells = [
            str(r.n),
            rate(r.correct),
            rate(r.answer_hit),
            rate(r.conflict_recall),
            str(r.false_conflicts),
        ]
        lines.append(r.kind.ljust(width) + "".join(c.rjust(11) for c in cells))
    return lines
