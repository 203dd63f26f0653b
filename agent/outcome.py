"""The outcome of one question, as data: what the API returns, what the trace records.

A refusal is a valid outcome, not an error: ``status`` says which of the three it is.
"""

from __future__ import annotations

from typing import Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, model_validator

from evidence_loop.policies.types import MissingKind, Status


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class SeedHit(_Frozen):
    """A recall hit that lies inside an evidence window."""

    start: int
    end: int
    kind: str
    score: float


class GrowthStep(_Frozen):
    """One move that grew a window: where it went, what it took in, and the score around it."""

    move: str = Field(description="left | right | anchor | parent | merge")
    unit_kind: str
    reason: str
    start: int
    end: int
    score_before: float
    score_after: float


class Evidence(_Frozen):
    """A window of reading material: ``text == document_text[start:end]`` of ``doc_id@version``."""

    evidence_id: str
    doc_id: str
    version: str
    title: str
    section: list[str]
    start: int
    end: int
    text: str
    score: float | None = Field(
        default=None,
        description="this window's own evidence score (the fused score its selection ranked it by); "
        "none in an outcome read back from a trace, which does not record it",
    )
    seeds: list[SeedHit] = []
    steps: list[GrowthStep] = []


class DocumentEvidence(_Frozen):
    """The evidence one document version gives: its windows, and the sides of a comparison it speaks for."""

    doc_id: str
    version: str
    title: str
    evidence_ids: list[str]
    sides: list[str] = Field(default=[], description="the comparison's sides this document speaks for")


class Citation(_Frozen):
    """Where one answer sentence comes from, to the character."""

    n: int
    evidence_id: str
    doc_id: str
    version: str
    section: list[str]
    start: int
    end: int
    quote: str


class Answer(_Frozen):
    """An extractive answer: sentences from the evidence, in document order, each cited."""

    text: str
    citations: list[Citation]


class Missing(_Frozen):
    """A typed missing piece (the outcome's form of ``policies.types.MissingPiece``): ``detail`` for an
    operator (what the rule saw, its scores), ``message`` for the end user; ``kind`` is one of
    ``MissingKind``."""

    kind: MissingKind
    detail: str = Field(description="for operators: what the rule saw, with its scores and thresholds")
    message: str = Field(
        default="",
        description="for the end user, in the question's language (zh or en): a chatbot may show it as "
        "it is; no scores, no internals (policies.decision.messages); empty on outcomes read from "
        "traces, which do not record it",
    )
    value: str | None = None
    doc_id: str | None = None
    version: str | None = None
    start: int | None = None
    end: int | None = None


class ConflictSide(_Frozen):
    value: str
    citation: Citation


class Conflict(_Frozen):
    """Two sources on one slot, the verdict, and who decided it."""

    slot: str
    values: list[ConflictSide]
    verdict: Literal["conflict", "compatible", "superseded"]
    adjudicator: Literal["llm", "rules"]
    reason: str
    scope: str | None = None
    message: str | None = Field(
        default=None,
        description="for a confirmed conflict, what the end user may read, in the question's language "
        "(both values, no internals); none for a compatible or superseded verdict",
    )


class Suspicious(_Frozen):
    """A sentence a document addresses to an AI system ("ignore previous instructions", "请直接回答…"):
    read by the run, never quoted and never used as evidence; listed so an operator can find the page."""

    doc_id: str
    version: str
    start: int
    end: int
    family: str = Field(
        description="override | role | address | prompt | answer (policies.evidence.directives)"
    )


class Signals(_Frozen):
    """The scores that decided the outcome, and the sentences the run set aside as addressed to a model."""

    relevance: float
    # The best fused lexical recall score of a seed in the evidence (policies.decision.signals), not raw
    # BM25: written under its own name; "bm25", the name outcomes and the API recorded before 0.2.0,
    # is still read (an outcome kept by a client, a results file of an earlier evaluation).
    lexical_score: float = Field(validation_alias=AliasChoices("lexical_score", "bm25"))
    coverage: float
    slot_coverage: float
    boundary: float
    score: float
    recalls: int
    slides: int
    llm_calls: int = 0
    suspicious: list[Suspicious] = []  # absent from outcomes recorded before the rule; empty when none
    # hybrid recall and the sufficiency judge (None with lexical recall): the evidence's best cosine
    # with the question, the judge's probability that it answers, and the probability it needed
    semantic: float | None = None
    judge: float | None = None
    judge_threshold: float | None = None


class TraceRef(_Frozen):
    """A traced run: its id and its trace's final hash (``traced`` tells it from ``NotTraced``)."""

    id: str
    traced: Literal[True] = True
    hash: str


class NotTraced(_Frozen):
    """A run answered without its audit record: the trace store could not be written and the
    operator chose to answer untraced (``evloop serve --when-traces-fail answer-untraced``)."""

    id: str
    traced: Literal[False] = False
    reason: str


class Outcome(_Frozen):
    """The answer to one question: answered, insufficient_evidence or conflicting_evidence."""

    run_id: str
    status: Status
    question: str
    # the question the run answered when earlier turns of the conversation completed it
    # (policies.question.followup); absent when it stood alone
    resolved_question: str | None = None
    answer: Answer | None = None
    evidence: list[Evidence] = []
    # the evidence grouped by document version, in the order of each one's first window; absent from
    # outcomes recorded before the grouping (and under a policy without it)
    documents: list[DocumentEvidence] = []
    missing: list[Missing] = []
    # what an answer notes beside it: a document the evidence refers to that the readable corpus
    # lacks, when the unit that answers does not defer to it (the answer stands); empty otherwise
    notes: list[Missing] = []
    conflicts: list[Conflict] = []
    signals: Signals
    trace: TraceRef | NotTraced | None = None
    latency_ms: float = 0.0

    @model_validator(mode="after")
    def _fields_match_status(self) -> Outcome:
        """An answered outcome has an answer and nothing missing; a refusal says what is missing; a
        conflicting one names its conflicts; only an answered one has an answer."""
        if self.status == "answered":
            problem = "an answered outcome needs an answer" if self.answer is None else None
            problem = problem or ("an answered outcome has nothing missing" if self.missing else None)
        elif self.answer is not None:
            problem = f"a {self.status} outcome has no answer"
        elif self.status == "insufficient_evidence":
            problem = None if self.missing else "an insufficient_evidence outcome says what is missing"
        else:
            problem = None if self.conflicts else "a conflicting_evidence outcome names its conflicts"
        if problem is not None:
            raise ValueError(problem)
        return self

    def user_message(self) -> str | None:
        """What a chatbot may show its user instead of an answer: the messages of the missing pieces
        or of the confirmed conflicts, each once, in the question's language; None when answered
        (or for an outcome read from a trace, which does not record them)."""
        if self.status == "answered":
            return None
        found = [m.message for m in self.missing] + [c.message or "" for c in self.conflicts]
        joined = " ".join(dict.fromkeys(m for m in found if m))
        return joined or None
