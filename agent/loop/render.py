"""Outcomes for people: the answer with numbered citations, or the refusal with what is missing.

The question and the text of documents are shown with their control and bidi characters escaped
(``tools.printable``); a single-line field stays on its line."""

from __future__ import annotations

from collections.abc import Sequence

from evidence_loop.agent.outcome import Citation, Evidence, NotTraced, Outcome, TraceRef
from evidence_loop.tools.printable import printable
from evidence_loop.tools.tokenize import recall_tokens


def _short(text: str, width: int = 120) -> str:
    flat = " ".join(text.split())
    return printable(flat if len(flat) <= width else flat[: width - 1] + "…")


def render_outcome(outcome: Outcome, *, show_evidence: bool = True) -> str:
    """A readable block: status line, answer or missing pieces or conflicts, then the evidence windows."""
    lines = [f"[{outcome.status}] {printable(outcome.question)}"]
    if outcome.resolved_question is not None:
        lines.append(f"  read as: {printable(outcome.resolved_question)}")
    if outcome.answer is not None:
        lines += [f"  {line}" for line in outcome.answer.text.splitlines()]
        for c in outcome.answer.citations:
            lines.append(
                f"  [{c.n}] {c.doc_id}@{c.version} {' > '.join(c.section) or '-'} [{c.start}:{c.end}]"
            )
    message = outcome.user_message()
    if message is not None:
        lines.append(f"  to the user: {message}")
    for m in outcome.missing:
        lines.append(f"  missing {m.kind}: {printable(m.detail)}")
    for conflict in outcome.conflicts:
        lines.append(
            f"  conflict on {conflict.slot}: {conflict.verdict} by {conflict.adjudicator} ({conflict.reason})"
        )
        for side in conflict.values:
            cite = side.citation
            lines.append(f"    {side.value!r} in {cite.doc_id}@{cite.version} [{cite.start}:{cite.end}]")
    for found in outcome.signals.suspicious:
        where = f"{found.doc_id}@{found.version} [{found.start}:{found.end}]"
        lines.append(f"  set aside {where}: a sentence addressed to a model ({found.family})")
    if show_evidence:
        lines += _evidence_lines(outcome)
    trace = f"  trace {outcome.trace.id}" if isinstance(outcome.trace, TraceRef) else ""
    if isinstance(outcome.trace, NotTraced):
        trace = f"  {outcome.trace.reason}"
    lines.append(f"  run {outcome.run_id}, {outcome.latency_ms:.1f} ms{trace}")
    return "\n".join(lines)


def brief_outcome(outcome: Outcome, width: int = 100) -> list[str]:
    """An outcome in two or three lines: the question, the status with the answer's start (or what is
    missing, or the conflict), and the citation that tells what is asked (``telling_citation``) with
    its quote."""
    lines = [outcome.question]
    if outcome.answer is not None:
        lines.append(f"answered: {_short(outcome.answer.text, width)}")
        if outcome.answer.citations:
            c = telling_citation(outcome.question, outcome.answer.citations)
            quote = _short(c.quote, width - 30)
            lines.append(f'cites {c.doc_id}@{c.version} [{c.start}:{c.end}] "{quote}"')
    elif outcome.conflicts:
        conflict = outcome.conflicts[0]
        sides = " vs ".join(
            f"{s.value!r} in {s.citation.doc_id}@{s.citation.version}" for s in conflict.values
        )
        lines.append(f"{outcome.status} on {conflict.slot}: {sides}")
    else:
        missing = "; ".join(m.detail for m in outcome.missing) or "no evidence"
        lines.append(f"{outcome.status}: {_short(missing, width)}")
    lines[-1 if len(lines) == 2 else 1] += f"  (run {outcome.run_id})"
    return lines


def telling_citation(question: str, citations: Sequence[Citation]) -> Citation:
    """The citation to show alone: the first that holds a code the question names (a token with a
    digit: "LM-S10"), else the first that is no table header (a row of ``---`` under it), else the
    first: the table row naming the asked model, not the header row the answer opens with."""
    codes = {t for t in recall_tokens(question) if any(ch.isdigit() for ch in t)}

    def tells(c: Citation) -> tuple[bool, bool, int]:
        return (bool(codes.intersection(recall_tokens(c.quote))), "| ---" not in c.quote, -c.n)

    return max(citations, key=tells)


def _evidence_lines(outcome: Outcome) -> list[str]:
    """The evidence windows, grouped under their documents when the outcome groups them (each group
    headed by the document and the sides of a comparison it speaks for)."""
    by_id = {e.evidence_id: e for e in outcome.evidence}
    groups: list[tuple[str | None, list[Evidence]]] = [
        (
            f"  document {d.doc_id}@{d.version} {printable(d.title)}"
            + (f" (for: {', '.join(d.sides)})" if d.sides else ""),
            [by_id[i] for i in d.evidence_ids if i in by_id],
        )
        for d in outcome.documents
    ] or [(None, outcome.evidence)]
    lines: list[str] = []
    for header, evidence in groups:
        if header is not None:
            lines.append(header)
        for e in evidence:
            lines.append(
                f"  evidence {e.evidence_id}: {e.doc_id}@{e.version} [{e.start}:{e.end}] {_short(e.text)}"
            )
            for step in e.steps:
                lines.append(
                    f"    slid {step.move} +{step.unit_kind} ({step.reason}) "
                    f"score {step.score_before:.3f} -> {step.score_after:.3f}"
                )
    return lines
