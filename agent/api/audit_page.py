"""What the audit console's run page shows of one trace: plain values for the template.

    run_view(trace, verdict, texts, may_read)   the question, outcome, answer with its citation
                                                marks, each evidence item in its pinned document,
                                                the timeline, missing pieces and conflicts

Evidence is shown inside the document version the run read: the text before and after it (up to
``CONTEXT`` characters each way) is dimmed, and the cited span itself is exactly
``document_text[start:end]``, the text whose sha256 the trace recorded. When the store no longer
holds that text (the version deleted, rewritten by a later write, or changed), the page says the
cited text is gone rather than marking what is stored there now. A document the viewer's groups may
not read is not shown at all.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from evidence_loop.traces import Trace, VerifyResult
from evidence_loop.traces.citations import REPLACED
from evidence_loop.traces.steps import (
    CheckedStep,
    ConflictStep,
    DecidedStep,
    LLMReplyStep,
    LLMRequestStep,
    RecalledStep,
    SlidStep,
    TraceStep,
)

CONTEXT = 1500  # characters of the document shown on each side of an evidence item
TextOf = Callable[[str, str], str | None]


@dataclass(frozen=True, slots=True)
class EvidenceView:
    evidence_id: str
    doc_id: str
    version: str
    title: str
    section: str
    start: int
    end: int
    before: str  # the document text before the span (dimmed), cut to CONTEXT; empty when not shown
    text: str  # the text the run read: document_text[start:end] of the version it pinned
    after: str
    cut_before: bool
    cut_after: bool
    gone: str = ""  # why the text the run read cannot be shown (the store no longer holds it)
    note: str = ""  # why only the span is shown, without the text around it


@dataclass(frozen=True, slots=True)
class StepView:
    seq: int
    kind: str
    title: str
    details: list[tuple[str, str]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class RunView:
    run_id: str
    created_at: str
    question: str
    groups: list[str]
    caller: str | None
    policy_hash: str
    status: str
    why: str
    answer: str
    citations: list[dict[str, Any]]
    evidence: list[EvidenceView]
    hidden_evidence: int
    missing: list[dict[str, Any]]
    conflicts: list[dict[str, Any]]
    steps: list[StepView]
    verify_ok: bool
    verify_text: str


def run_view(
    trace: Trace, verdict: VerifyResult, text_of: TextOf, may_read: Callable[[str, str], bool]
) -> RunView:
    """The page of one run, its cited text read through ``text_of``, documents filtered by ``may_read``."""
    decided = next((e.data for e in reversed(trace.events) if isinstance(e.data, DecidedStep)), None)
    outcome: dict[str, Any] = decided.outcome if decided is not None else {}
    answer = outcome.get("answer") or {}
    shown, hidden = [], 0
    replaced = set(verdict.replaced)
    for item in outcome.get("evidence") or []:
        key = (item["doc_id"], item["version"])
        if not may_read(*key):
            hidden += 1
            continue
        shown.append(evidence_view(item, text_of(*key), key in replaced))
    header = trace.header
    return RunView(
        run_id=header.run_id,
        created_at=header.created_at,
        question=header.question,
        groups=list(header.groups),
        caller=header.caller,
        policy_hash=header.policy_hash,
        status=trace.footer.outcome_status if trace.footer else "incomplete",
        why=decided.why if decided is not None else "",
        answer=str(answer.get("text", "")),
        citations=[c for c in answer.get("citations") or [] if may_read(c["doc_id"], c["version"])],
        evidence=shown,
        hidden_evidence=hidden,
        missing=list(outcome.get("missing") or []),
        conflicts=[c for c in outcome.get("conflicts") or [] if _readable_conflict(c, may_read)],
        steps=[step_view(e.seq, e.data) for e in trace.events],
        verify_ok=verdict.ok,
        verify_text=_verify_text(verdict),
    )


def _readable_conflict(conflict: dict[str, Any], may_read: Callable[[str, str], bool]) -> bool:
    return all(
        may_read(v["citation"]["doc_id"], v["citation"]["version"]) for v in conflict.get("values", [])
    )


def _verify_text(verdict: VerifyResult) -> str:
    if verdict.ok:
        state = "complete" if verdict.complete else "unfinished"
        line = f"chain verifies ({verdict.events} events, {state}); final hash {verdict.final_hash}"
        if verdict.replaced:
            names = ", ".join(f"{doc_id}@{version}" for doc_id, version in verdict.replaced)
            line += f"; cited version replaced: {names} {REPLACED}"
        return line
    return f"does NOT verify at event {verdict.first_bad_seq}: {verdict.reason}"


def evidence_view(item: dict[str, Any], text: str | None, replaced: bool = False) -> EvidenceView:
    """One evidence item inside its document's text. The span marked is the text the run read: the
    item's ``text``, resolved from the store only when it hashes to the sha256 the trace recorded (or
    carried in a schema 1 trace). When the store holds other text there, or none, the page says the
    cited text is gone instead of marking what is there now; when the version was rewritten later
    (``replaced``) or its text around the span differs, only the span is shown."""
    start, end = int(item["start"]), int(item["end"])
    cited = item.get("text")
    base = {
        "evidence_id": str(item.get("evidence_id", "")),
        "doc_id": item["doc_id"],
        "version": item["version"],
        "title": str(item.get("title", "")),
        "section": " › ".join(item.get("section") or []),
        "start": start,
        "end": end,
    }
    if not isinstance(cited, str):
        why = str(item.get("unresolved") or f"the store does not hold {item['doc_id']}@{item['version']}")
        return EvidenceView(**base, before="", text="", after="", cut_before=False, cut_after=False, gone=why)
    if replaced or text is None or not 0 <= start <= end <= len(text) or text[start:end] != cited:
        note = "this version's text was rewritten by a later write: only the span the run read is shown"
        return EvidenceView(
            **base, before="", text=cited, after="", cut_before=False, cut_after=False, note=note
        )
    lo, hi = max(0, start - CONTEXT), min(len(text), end + CONTEXT)
    return EvidenceView(
        **base,
        before=text[lo:start],
        text=cited,
        after=text[end:hi],
        cut_before=lo > 0,
        cut_after=hi < len(text),
    )


def _num(value: object) -> str:
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def step_view(seq: int, step: TraceStep) -> StepView:
    """One timeline entry: what the step did and the figures it decided on."""
    if isinstance(step, RecalledStep):
        hits = ", ".join(f"{h['doc_id']}#{h['ordinal']} ({_num(h['score'])})" for h in step.hits[:8])
        return StepView(
            seq,
            "recalled",
            f"recall round {step.round}: {len(step.hits)} hits",
            [("query", step.query), ("top hits", hits)],
        )
    if isinstance(step, SlidStep):
        title = f"slide {step.move} in {step.doc_id}: {step.reason}"
        return StepView(
            seq,
            "slid",
            title,
            [
                ("score", f"{_num(step.score_before)} → {_num(step.score_after)}"),
                ("window", str(step.window)),
            ],
        )
    if isinstance(step, CheckedStep):
        details = [(k, _num(getattr(step, k))) for k in ("score", "relevance", "slot_coverage", "boundary")]
        if step.signals:
            details.append(
                ("judge signals", ", ".join(f"{k}={_num(v)}" for k, v in sorted(step.signals.items())))
            )
        if step.judge:
            judged = step.judge
            figures = f"p={_num(judged['probability'])}, logit {_num(judged['logit'])}"
            details.append(("judge", f"{figures} vs threshold {_num(judged['threshold'])}"))
        details += [("missing", f"{m['kind']}: {m['detail']}") for m in step.missing]
        return StepView(
            seq, "checked", f"check: {len(step.windows)} windows, {len(step.missing)} missing", details
        )
    if isinstance(step, ConflictStep):
        values = " | ".join(str(v.get("value")) for v in step.values)
        return StepView(
            seq,
            "conflict",
            f"conflict on {step.slot}: {step.verdict} ({step.adjudicator})",
            [("values", values), ("reason", step.reason)],
        )
    if isinstance(step, DecidedStep):
        return StepView(seq, "decided", f"decision: {step.status}", [("why", step.why)])
    if isinstance(step, LLMRequestStep | LLMReplyStep):
        return StepView(seq, step.step, step.step.replace("_", " "), [])
    return StepView(seq, step.step, step.step.replace("_", " "), [])
