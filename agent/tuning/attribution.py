"""Bad-case attribution for ``evloop eval``: every wrong or ungrounded outcome gets one cause.

    recall_miss      no gold document among the units recall found (either recall round)
    selection_miss   a gold document was recalled, but the answer is not in the evidence handed back
    wrong_refusal    refused although the evidence held the answer (the decision's error)
    wrong_answer     answered a question that expected a refusal
    false_conflict   stopped as a conflict where none was expected
    missed_conflict  answered or refused a question whose sources disagree

A question is grounded when its evidence contains a gold answer after NFKC, lower-casing and
whitespace removal, as the shared scorer counts it; one whose gold answers are free-form (written
by people) is judged by its gold document instead. The largest class is where the next change starts.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

CAUSES = (
    "recall_miss",
    "selection_miss",
    "wrong_refusal",
    "wrong_answer",
    "false_conflict",
    "missed_conflict",
)
_SPACE = re.compile(r"\s+")


def norm(text: str) -> str:
    """A text as the shared scorer compares it: NFKC, lower case, no whitespace."""
    return _SPACE.sub("", unicodedata.normalize("NFKC", text).lower())


def merged_texts(evidence: Sequence[Mapping[str, Any]]) -> list[str]:
    """Each evidence text, and the union of the pieces of one document that touch or overlap."""
    spans: dict[tuple[str, str], list[tuple[int, int, str]]] = {}
    for item in evidence:
        key = (str(item["doc_id"]), str(item.get("version")))
        spans.setdefault(key, []).append((int(item["start"]), int(item["end"]), str(item["text"])))
    out = [str(item["text"]) for item in evidence]
    for pieces in spans.values():
        pieces.sort()
        _, end, text = pieces[0]
        for s, e, t in pieces[1:]:
            if s > end:
                out.append(text)
                end, text = e, t
            elif e > end:
                text += t[end - s :]
                end = e
        out.append(text)
    return out


def grounded(question: Mapping[str, Any], result: Mapping[str, Any]) -> bool | None:
    """Whether the evidence holds a gold answer; None when the question's answers are free-form."""
    golds = [str(g) for g in question.get("gold_answers") or []]
    if not golds or (question.get("metadata") or {}).get("answer_type") == "free_form":
        return None
    texts = [norm(t) for t in merged_texts(result.get("evidence") or [])]
    return any(norm(g) in t for g in golds for t in texts)


def cause(question: Mapping[str, Any], result: Mapping[str, Any]) -> str | None:
    """The cause of a wrong or ungrounded outcome, None for a right and grounded one."""
    expect, status = question.get("expect"), result.get("status")
    if expect == "refuse":
        return {"answered": "wrong_answer", "conflicting_evidence": "false_conflict"}.get(str(status))
    if expect == "conflict":
        return None if status == "conflicting_evidence" else "missed_conflict"
    if status == "conflicting_evidence":
        return "false_conflict"
    held = grounded(question, result)
    gold_docs = {str(d) for d in question.get("gold_doc_ids") or []}
    cited = {str(e["doc_id"]) for e in result.get("evidence") or []}
    if held is None:  # free-form: the gold document stands in for the answer
        held = bool(gold_docs & cited) if gold_docs else status == "answered"
    if held:
        return None if status == "answered" else "wrong_refusal"
    recalled = {str(d) for d in result.get("recalled") or []}
    return "recall_miss" if gold_docs and not gold_docs & recalled else "selection_miss"


def attribute(
    questions: Iterable[Mapping[str, Any]], results: Iterable[Mapping[str, Any]]
) -> list[dict[str, object]]:
    """One row per question that went wrong: id, expect, status, cause."""
    by_id = {str(r.get("id")): r for r in results}
    rows: list[dict[str, object]] = []
    for q in questions:
        result = by_id.get(str(q.get("id")), {"status": None})
        found = cause(q, result)
        if found is not None:
            rows.append(
                {"id": q.get("id"), "expect": q.get("expect"), "status": result.get("status"), "cause": found}
            )
    return rows


def table(rows: Sequence[Mapping[str, object]], total: int) -> list[tuple[str, int, float]]:
    """(cause, count, share of all questions), largest first, every cause listed."""
    counts = Counter(str(r["cause"]) for r in rows)
    return sorted(((c, counts[c], counts[c] / max(total, 1)) for c in CAUSES), key=lambda t: (-t[1], t[0]))
