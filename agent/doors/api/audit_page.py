"""What the audit console's run page shows of one trace: plain values for the template.

    run_view(trace, verdict, texts, may_read)   the question, outcome, answer with its citation
                                                marks, each evidence item in its pinned document
                                                with the cited sentences marked inside it
                                                (``audit_marks``), the conversation a follow-up
                                                belongs to, the timeline, missing pieces,
                                                conflicts and every candidate the conflict check
                                                considered (``audit_conflicts``)

A document the viewer's groups may not read is not shown at all.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from evidence_loop.agent.doors.api.audit_conflicts import ConflictCheck, conflict_check
from evidence_loop.agent.doors.api.audit_marks import EvidenceView, evidence_view
from evidence_loop.traces import Trace, VerifyResult
from evidence_loop.traces.feedback.feedback import FeedbackRecord
from evidence_loop.traces.records.steps import (
    CheckedStep,
    ConflictScanStep,
    ConflictStep,
    DecidedStep,
    LLMReplyStep,
    LLMRequestStep,
    RecalledStep,
    ResolvedStep,
    SlidStep,
    TraceStep,
)
from evidence_loop.traces.verification.citations import REPLACED

TextOf = Callable[[str, str], str | None]


@dataclass(frozen=True, slots=True)
class StepView:
    seq: int
    kind: str
    title: str
    details: list[tuple[str, str]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class TurnView:
    text: str
    run_id: str | None  # its run, when the chatbot passed one


@dataclass(frozen=True, slots=True)
class ConversationView:
    """A follow-up's conversation: the earlier turns it read and what it took from them."""

    earlier: list[TurnView]
    asked: str
    read_as: str  # the question the loop ran
    carried: list[str]  # "subject 'X200路由器' from turn 1"
    key: str  # the run the conversation is listed by (``/audit?conversation=key``)


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
    conversation: ConversationView | None = None
    conflict_check: ConflictCheck = field(default_factory=ConflictCheck)
    marked: frozenset[int] = frozenset()  # the citations marked inside their evidence


@dataclass(frozen=True, slots=True)
class ReviewView:
    """One review in a run's history: who said what and when; the last one stands."""

    created_at: str
    verdict: str
    reviewer: str | None
    doc_id: str | None  # the document the reviewer named, when the viewer may read it
    doc_hidden: bool  # a document was named that the viewer may not read
    note: str | None
    stands: bool


def review_views(records: Sequence[FeedbackRecord], may_read_doc: Callable[[str], bool]) -> list[ReviewView]:
    """Every review of one run, oldest first; a named document shown only when the viewer may read it."""
    return [
        ReviewView(
            r.created_at,
            r.verdict,
            r.reviewer,
            r.doc_id if r.doc_id and may_read_doc(r.doc_id) else None,
            bool(r.doc_id) and not may_read_doc(r.doc_id or ""),
            r.note,
            n == len(records) - 1,
        )
        for n, r in enumerate(records)
    ]


def conversation_view(trace: Trace) -> ConversationView | None:
    """The conversation of a run given earlier turns (its ``resolved`` step); None for one asked alone."""
    step = next((e.data for e in trace.events if isinstance(e.data, ResolvedStep)), None)
    if step is None:
        return None
    earlier = [TurnView(turn["text"], turn.get("run_id")) for turn in step.history]
    carried = [f"{c['kind']} '{c['text']}' from turn {c['turn'] + 1}" for c in step.carried]
    key = next((t.run_id for t in earlier if t.run_id), trace.header.run_id)
    return ConversationView(earlier, step.asked, step.question, carried, key)


def run_view(
    trace: Trace, verdict: VerifyResult, text_of: TextOf, may_read: Callable[[str, str], bool]
) -> RunView:
    """The page of one run, its cited text read through ``text_of``, documents filtered by ``may_read``."""
    decided = next((e.data for e in reversed(trace.events) if isinstance(e.data, DecidedStep)), None)
    outcome: dict[str, Any] = decided.outcome if decided is not None else {}
    answer = outcome.get("answer") or {}
    citations = [c for c in answer.get("citations") or [] if may_read(c["doc_id"], c["version"])]
    shown, hidden = [], 0
    replaced = set(verdict.replaced)
    for item in outcome.get("evidence") or []:
        key = (item["doc_id"], item["version"])
        if not may_read(*key):
            hidden += 1
            continue
        shown.append(evidence_view(item, text_of(*key), citations, key in replaced))
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
        citations=citations,
        evidence=shown,
        hidden_evidence=hidden,
        missing=list(outcome.get("missing") or []),
        conflicts=[c for c in outcome.get("conflicts") or [] if _readable_conflict(c, may_read)],
        steps=[step_view(e.seq, e.data) for e in trace.events],
        verify_ok=verdict.ok,
        verify_text=_verify_text(verdict),
        conversation=conversation_view(trace),
        conflict_check=conflict_check(trace.events, may_read),
        marked=frozenset(n for e in shown for n in e.cited),
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
    if isinstance(step, ConflictScanStep):
        set_aside = [
            ("set aside", f"{d['slot']}: {' | '.join(v['value'] for v in d['values'])} ({d['dropped']})")
            for d in step.dropped
        ]
        summary = f"conflict scan: {len(step.dropped)} set aside, {step.candidates} went on"
        return StepView(seq, "conflict_scan", summary, set_aside)
    if isinstance(step, DecidedStep):
        return StepView(seq, "decided", f"decision: {step.status}", [("why", step.why)])
    if isinstance(step, LLMRequestStep | LLMReplyStep):
        return StepView(seq, step.step, step.step.replace("_", " "), [])
    return StepView(seq, step.step, step.step.replace("_", " "), [])
