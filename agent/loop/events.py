"""The loop's steps as trace records (``traces.records.steps``): what was recalled, how windows slid, what was
checked, what was decided."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from evidence_loop.agent.outcome import Evidence, Outcome
from evidence_loop.policies.decision.judge import JudgeVerdict
from evidence_loop.policies.evidence.checked import Checked
from evidence_loop.policies.evidence.comparison import uncovered_sides
from evidence_loop.policies.question.followup import Resolution, Turn
from evidence_loop.policies.question.shape import Shape
from evidence_loop.policies.question.sides import Side
from evidence_loop.policies.types import EvidenceView, MissingPiece
from evidence_loop.tools.models.embedding import EmbedderIdentity, Vectors
from evidence_loop.tools.models.reranker import Reranking
from evidence_loop.tools.types import Hit
from evidence_loop.tools.windows import Step, Window
from evidence_loop.traces.records.steps import (
    EmbeddedStep,
    HitRecord,
    JudgeRecord,
    Made,
    RerankReplyStep,
    RerankRequestStep,
    ResolvedStep,
    SideRecord,
    TurnRecord,
    WindowRecord,
)
from evidence_loop.traces.verification.citations import HIT_PREVIEW, text_sha256


def _r(x: float) -> float:
    return round(x, 6)


def _hit(h: Hit, inline_text: bool) -> HitRecord:
    unit = h.unit
    record: HitRecord = {
        "doc_id": unit.doc_id,
        "version": unit.version,
        "ordinal": unit.ordinal,
        "kind": unit.kind,
        "start": unit.start,
        "end": unit.end,
        "score": _r(h.score),
    }
    if inline_text:
        record["text"] = unit.text[:HIT_PREVIEW]
    if h.similarity is not None:  # hybrid recall only: lexical traces read as they were written
        record["similarity"] = _r(h.similarity)
    if not inline_text:
        record["sha256"] = _unit_sha256(unit.text)
    return record


@lru_cache(maxsize=8192)
def _unit_sha256(text: str) -> str:
    """A recalled unit's digest: the same units come back run after run (the text is the index's,
    its hash kept by the string)."""
    return text_sha256(text)


def recalled(query: str, k: int, round_no: int, hits: Sequence[Hit], *, inline_text: bool = False) -> Made:
    """A recall round (a ``RecalledStep``); each hit cites its unit's stored text (``inline_text``:
    copies its start in, as schema 1 did)."""
    data = {"round": round_no, "query": query, "k": k, "hits": [_hit(h, inline_text) for h in hits]}
    return Made("recalled", data)


def embedded(identity: EmbedderIdentity, vector: Vectors) -> EmbeddedStep:
    """The question's vector, exactly (float32, base64) and by digest: a replay reuses it."""
    raw = np.asarray(vector, dtype="<f4").tobytes()
    return EmbeddedStep(
        embedder=identity.key,
        dim=int(vector.shape[-1]),
        digest=hashlib.sha256(raw).hexdigest(),
        vector=base64.b64encode(raw).decode("ascii"),
    )


def recorded_vector(step: EmbeddedStep) -> Vectors:
    """The vector an ``embedded`` step holds."""
    vector: Vectors = np.frombuffer(base64.b64decode(step.vector), dtype="<f4").astype(np.float32)
    return vector


def resolved(history: Sequence[Turn], resolution: Resolution, offset: int) -> ResolvedStep:
    """The earlier turns received and what the question took from them (``offset``: how many of the
    oldest turns the policy left unread, so a carried turn is named by its place in ``history``)."""
    return ResolvedStep(
        history=[_turn(t) for t in history],
        asked=resolution.asked,
        question=resolution.text,
        cue=resolution.cue,
        carried=[{"kind": c.kind, "text": c.text, "turn": c.turn + offset} for c in resolution.carried],
        prior_docs=list(resolution.prior_docs),
        candidates=list(resolution.candidates),
        unresolved=resolution.unresolved,
        run_ids_read=[t.run_id for t in history if t.run_id is not None],
    )


def _turn(turn: Turn) -> TurnRecord:
    record: TurnRecord = {"text": turn.text}
    if turn.run_id is not None:
        record["run_id"] = turn.run_id
        record["doc_ids"] = list(turn.doc_ids)
        if turn.resolved is not None:
            record["resolved"] = turn.resolved
    return record


def recorded_history(step: ResolvedStep) -> list[Turn]:
    """The earlier turns as the run received them (a replay resolves from these, not the store)."""
    return [
        Turn(t["text"], t.get("run_id"), t.get("resolved"), tuple(t.get("doc_ids", ()))) for t in step.history
    ]


def slid(window: Window, step: Step) -> Made:
    """One kept step of a window's growth (a ``SlidStep``)."""
    data = {
        "doc_id": window.doc_id,
        "version": window.version,
        "window": [window.first, window.last],
        "units": len(window.ordinals),
        "move": step.move,
        "unit_kind": step.unit_kind,
        "reason": step.reason,
        "ordinals": list(step.ordinals),
        "score_before": _r(step.score_before),
        "score_after": _r(step.score_after),
    }
    return Made("slid", data)


def rerank_request(reply: Reranking) -> RerankRequestStep:
    """The body sent to the cross-encoder, as ``tools.models.reranker`` kept it."""
    return RerankRequestStep.model_validate(reply.request)


def rerank_reply(reply: Reranking) -> RerankReplyStep:
    """What came back, and the score read for each document."""
    return RerankReplyStep.model_validate(reply.reply)


def _window(c: Checked) -> WindowRecord:
    check = c.check
    record: WindowRecord = {
        "doc_id": c.window.doc_id,
        "version": c.window.version,
        "ordinals": [c.window.first, c.window.last],
        "score": _r(check.score),
        "relevance": _r(check.relevance),
        "coverage": _r(check.coverage),
        "slot_coverage": _r(check.slot_coverage),
        "boundary": _r(check.boundary),
        "gaps": [f"{g.kind}:{g.direction}:{g.target}" for g in check.gaps],
        "references": list(check.references),
    }
    if check.cosine:  # hybrid recall only: lexical traces read as they were written
        record["cosine"] = _r(check.cosine)
        record["semantic"] = _r(check.semantic)
    if check.rerank is not None:  # with a reranker only, likewise
        record["rerank"] = _r(check.rerank)
    return record


def checked(
    selected: Sequence[Checked],
    missing: Sequence[MissingPiece],
    signals: Mapping[str, float] | None = None,
    verdict: JudgeVerdict | None = None,
    sides: Sequence[Side] = (),
    shape: Shape | None = None,
    notes: Sequence[MissingPiece] = (),
) -> Made:
    """The check of the selected windows (a ``CheckedStep``); for a comparison, each side and whether
    they speak for it. The optional fields are left out without a value, as the step leaves them."""
    best = selected[0].check if selected else None
    data: dict[str, Any] = {
        "score": _r(best.score) if best else 0.0,
        "relevance": _r(best.relevance) if best else 0.0,
        "slot_coverage": _r(best.slot_coverage) if best else 0.0,
        "boundary": _r(best.boundary) if best else 0.0,
        "windows": [_window(c) for c in selected],
        "missing": [{"kind": p.kind, "detail": p.detail, "value": p.value} for p in missing],
    }
    if signals is not None:
        data["signals"] = {name: _r(value) for name, value in sorted(signals.items())}
    if verdict is not None:
        data["judge"] = _judge(verdict)
    if sides:
        lacking = {s.name for s in uncovered_sides(sides, selected)}
        data["sides"] = [SideRecord(name=s.name, covered=s.name not in lacking) for s in sides]
    if shape is not None:
        data["shape"] = shape
    if notes:
        data["notes"] = [{"kind": p.kind, "detail": p.detail, "value": p.value} for p in notes]
    return Made("checked", data)


def _judge(verdict: JudgeVerdict) -> JudgeRecord:
    return {"probability": verdict.probability, "logit": verdict.logit, "threshold": verdict.threshold}


# signals added later, left out when empty so that outcomes recorded before them replay identical
LATER_SIGNALS = ("semantic", "judge", "judge_threshold")


def decided(outcome: Outcome, *, inline_text: bool = False) -> Made:
    """The outcome as the trace keeps it: every span of stored text it quotes cited by its offsets
    and sha256 (``inline_text``: copied in, as schema 1 did)."""
    signals = outcome.signals
    quiet = {"suspicious"} if not signals.suspicious else set()
    quiet |= {name for name in LATER_SIGNALS if getattr(signals, name) is None}
    # the grouping by document is a view of the evidence, and came later: not recorded, so that runs
    # recorded before it replay identical; so is each window's score (the checked step records it)
    exclude: dict[str, Any] = {
        "latency_ms": True,
        "trace": True,
        "documents": True,
        "signals": quiet,
        # the end user's messages are a view of the kinds and values recorded (policies.decision.messages),
        # and came later: not recorded either
        "missing": {"__all__": {"message"}},
        "conflicts": {"__all__": {"message"}},
        "evidence": {"__all__": {"score"}},
    }
    if outcome.resolved_question is None:  # a run given no history: recorded as before
        exclude["resolved_question"] = True
    if not outcome.notes:  # notes came later: an outcome without them is recorded as before
        exclude["notes"] = True
    data = outcome.model_dump(mode="json", exclude=exclude)
    # traces keep the lexical score under the name they have always recorded (keys are sorted when
    # the step is encoded: the bytes are as before)
    data["signals"]["bm25"] = data["signals"].pop("lexical_score")
    if not inline_text:
        _cite_spans(data)
    return Made("decided", {"status": outcome.status, "why": _why(outcome), "outcome": data})


def _cite(span: dict[str, object], key: str) -> None:
    """Replace the span's copied text (under ``key``) by its sha256, after the offsets."""
    text = span.pop(key)
    assert isinstance(text, str)
    span["sha256"] = text_sha256(text)


def _cite_spans(outcome: dict[str, Any]) -> None:
    """The evidence windows, answer citations and conflict sides of an outcome's JSON, cited."""
    for evidence in outcome["evidence"]:
        _cite(evidence, "text")
    if outcome.get("answer"):
        for citation in outcome["answer"]["citations"]:
            _cite(citation, "quote")
    for conflict in outcome["conflicts"]:
        for side in conflict["values"]:
            _cite(side["citation"], "quote")


def _why(outcome: Outcome) -> str:
    if outcome.status == "answered":
        return f"{len(outcome.evidence)} evidence windows cover the question"
    if outcome.status == "conflicting_evidence":
        return "; ".join(f"{c.slot}: {c.verdict} ({c.adjudicator})" for c in outcome.conflicts)
    return "; ".join(f"{m.kind}: {m.value or m.detail}" for m in outcome.missing)


Focus = Callable[[Evidence], tuple[int, int] | None]


def views(
    evidence: Sequence[Evidence],
    current: Mapping[str, str],
    focus: Focus,
    scope: Callable[[Evidence], str] | None = None,
    units: Callable[[Evidence, int, int], tuple[tuple[int, int, int], ...]] | None = None,
) -> list[EvidenceView]:
    """Evidence items as the conflict check reads them: each narrowed to the span ``focus`` gives
    (the statements about the question), or whole when it gives none; ``scope`` gives what its
    document says of its own scope, ``units`` the (ordinal, start, end) of the units in a span."""
    out = []
    for e in evidence:
        start, end = focus(e) or (e.start, e.end)
        out.append(
            EvidenceView(
                evidence_id=e.evidence_id,
                doc_id=e.doc_id,
                version=e.version,
                is_current=current.get(e.doc_id) == e.version,
                section=tuple(e.section),
                start=start,
                end=end,
                text=e.text[start - e.start : end - e.start],
                title=e.title,
                scope=scope(e) if scope is not None else "",
                units=units(e, start, end) if units is not None else (),
                lead=e.text[: start - e.start],
            )
        )
    return out
