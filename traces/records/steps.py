"""Every step a trace records, typed: one discriminated union, written by the loop and read back by the
renderer, replay and diff through the same models (as pydantic-ai types its message parts).

An event's ``step`` names the model and its ``data`` holds the model's fields (``trace_data``), exactly
the dicts the loop has always written, so a trace written before the steps were typed reads, hashes
and replays as it was written:

    embedded        the question's vector (recorded first when recall is hybrid)
    recalled        a recall round: its query, k and hits (each citing its unit's stored text)
    slid            one kept step of a window's growth: where, which move, why, score before and after
    checked         the completeness check of the selected windows: scores, windows, missing pieces,
                    with vectors the judge's inputs and verdict, and for a comparison its sides
    rerank_request  the body sent to the cross-encoder
    rerank_reply    what came back, and the 0..1 score read for each document
    llm_request     one attempt of a conflict adjudicator's model call, messages and HTTP body as sent
    llm_reply       its reply or failure, HTTP body as received
    conflict        one adjudicated conflict candidate and its verdict
    conflict_scan   the conflict candidates set aside before any adjudicator, each with why (one
                    document states both, two scopes), and how many went on
    decided         the outcome's status, why, and the outcome itself (its spans cited, not copied)
    aborted         the run stopped by an exception (the trace then has no footer)

A field added after traces were first written is left out of the data while it has no value (a
step's ``optional()`` field, a record's ``NotRequired`` key), so older traces (without it) and newer
runs without it read and hash alike. The records inside a step are typed dicts: the data as written,
validated with the step.

From schema 2 on, a span of stored text is cited by (doc_id, version, start, end) and its sha256,
not copied into the step (``traces.verification.citations``): a hit has ``sha256`` where schema 1 had
``text``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Final, Literal, NotRequired, final, get_args

from pydantic import BaseModel, ConfigDict, Discriminator, Field, TypeAdapter, with_config
from typing_extensions import TypedDict  # the one pydantic reads on Python 3.11

# strict: a step reads back as exactly what was written, nothing coerced into shape
_STRICT = ConfigDict(extra="forbid", strict=True)


def _none(value: object) -> bool:
    return value is None


def optional() -> Any:
    """A step's field that the data holds only when it has a value (None is left out, not null)."""
    return Field(default=None, exclude_if=_none)


class StepModel(BaseModel):
    """One step; ``step`` names it in the event around the data and is not part of the data."""

    model_config = ConfigDict(frozen=True, **_STRICT)

    step: str
    _envelope: ClassVar[frozenset[str]] = frozenset()
    _optional: ClassVar[frozenset[str]] = frozenset()

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        cls._envelope = frozenset(name for name, f in cls.model_fields.items() if f.exclude)
        cls._optional = frozenset(name for name, f in cls.model_fields.items() if f.exclude_if is _none)

    def trace_data(self) -> dict[str, Any]:
        """The event's ``data``, as written to the trace and hashed: what ``model_dump`` gives, read
        straight off the validated fields, which hold plain JSON."""
        envelope, optional_ = self._envelope, self._optional
        return {
            name: value
            for name, value in self.__dict__.items()
            if name not in envelope and (value is not None or name not in optional_)
        }


# --- recall ---------------------------------------------------------------------------------------


class EmbeddedStep(StepModel):
    step: Literal["embedded"] = Field(default="embedded", exclude=True)
    embedder: str  # the embedder's key: backend, model and digest
    dim: int
    digest: str  # sha256 of the vector's little-endian float32 bytes
    vector: str  # the vector, little-endian float32, base64


@with_config(_STRICT)
class HitRecord(TypedDict):
    doc_id: str
    version: str
    ordinal: int
    kind: str
    start: int
    end: int
    score: float
    text: NotRequired[str]  # schema 1, and a resolved schema 2 hit: the unit's first 160 characters
    similarity: NotRequired[float]  # hybrid recall: the unit's cosine to the question
    sha256: NotRequired[
        str
    ]  # schema 2: of the unit's text, which the store keeps (traces.verification.citations)
    unresolved: NotRequired[str]  # a resolved schema 2 hit whose text the store could not give


class RecalledStep(StepModel):
    step: Literal["recalled"] = Field(default="recalled", exclude=True)
    round: int
    query: str
    k: int
    hits: list[HitRecord]


# --- a follow-up resolved from earlier turns -------------------------------------------------------


@with_config(_STRICT)
class TurnRecord(TypedDict):
    text: str  # the earlier question as asked
    run_id: NotRequired[str]  # its run, when one was given and read back
    resolved: NotRequired[str]  # the question that run resolved it to
    doc_ids: NotRequired[list[str]]  # its evidence documents the caller may read


@with_config(_STRICT)
class CarriedRecord(TypedDict):
    kind: str  # subject | identifier | side | attribute
    text: str
    turn: int  # the earlier turn it came from, oldest 0


class ResolvedStep(StepModel):
    """The earlier turns a run was given and what the question took from them (policies.question.followup).

    Recorded only for a run given a history: a run without one records none."""

    step: Literal["resolved"] = Field(default="resolved", exclude=True)
    history: list[TurnRecord]
    asked: str
    question: str  # what the loop ran
    cue: str | None  # how the asked turn points back (ellipsis, pronoun, zero, generic, statement)
    carried: list[CarriedRecord]
    prior_docs: list[str]  # the source turn's documents: a recall prior
    candidates: list[str]  # an ambiguous pointer's candidates
    unresolved: bool
    run_ids_read: list[str]


# --- growing and checking windows -----------------------------------------------------------------


class SlidStep(StepModel):
    """One kept step of a window's growth: the window after it, the move, the units added, why."""

    step: Literal["slid"] = Field(default="slid", exclude=True)
    doc_id: str
    version: str
    window: list[int]  # the grown window's first and last ordinal
    units: int  # how many units the window holds
    move: str  # the direction of the step: left, right, up, parent, ...
    unit_kind: str  # of the units added
    reason: str
    ordinals: list[int]  # the units the step added
    score_before: float
    score_after: float


@with_config(_STRICT)
class WindowRecord(TypedDict):
    doc_id: str
    version: str
    ordinals: list[int]  # first and last ordinal
    score: float
    relevance: float
    coverage: float
    slot_coverage: float
    boundary: float
    gaps: list[str]  # kind:direction:target of each boundary gap
    references: list[str]
    cosine: NotRequired[float]  # hybrid recall, with semantic
    semantic: NotRequired[float]
    rerank: NotRequired[float]  # with a reranker


@with_config(_STRICT)
class MissingRecord(TypedDict):
    kind: str
    detail: str
    value: str | None


@with_config(_STRICT)
class JudgeRecord(TypedDict):
    probability: float
    logit: float
    threshold: float


@with_config(_STRICT)
class SideRecord(TypedDict):
    name: str  # a side of a comparison, as the question names it
    covered: bool  # whether a selected window speaks for it


# the shapes of a question (policies.question.shape.Shape, which traces may not import; a test keeps them
# equal)
ShapeName = Literal["fact", "yes_no", "procedure", "list", "comparison", "explanation"]


class CheckedStep(StepModel):
    step: Literal["checked"] = Field(default="checked", exclude=True)
    score: float  # score, relevance, slot_coverage and boundary of the leading window (0 without one)
    relevance: float
    slot_coverage: float
    boundary: float
    windows: list[WindowRecord]
    missing: list[MissingRecord]
    signals: dict[str, float] | None = optional()  # hybrid recall: the judge's inputs, sat or not
    judge: JudgeRecord | None = optional()  # the judge's verdict, when it sat
    sides: list[SideRecord] | None = optional()  # a comparison's sides, when the question compares
    shape: ShapeName | None = (
        optional()
    )  # the question's shape (policies.question.shape), when reading follows it
    # what an answer notes beside it (a reference the answering unit does not defer to), when any
    notes: list[MissingRecord] | None = optional()


# --- the cross-encoder ----------------------------------------------------------------------------


@final  # the two shapes tell apart by their keys
@with_config(_STRICT)
class CohereRerankBody(TypedDict):
    """Cohere's request shape, which vLLM, Jina and llama.cpp speak too (a replay's request that
    the record does not hold carries only the query and documents)."""

    model: NotRequired[str]
    query: str
    documents: list[str]
    top_n: NotRequired[int]


@final
@with_config(_STRICT)
class TEIRerankBody(TypedDict):
    """Text Embeddings Inference's request shape."""

    query: str
    texts: list[str]
    raw_scores: bool


class RerankRequestStep(StepModel):
    step: Literal["rerank_request"] = Field(default="rerank_request", exclude=True)
    url: str
    body: CohereRerankBody | TEIRerankBody  # the body as sent; no headers, no key


class RerankReplyStep(StepModel):
    step: Literal["rerank_reply"] = Field(default="rerank_reply", exclude=True)
    status: int | None = optional()  # none for a replay's request the record does not hold
    attempts: int | None = optional()
    body: Any = optional()  # as received, without the documents' texts a server echoes
    scores: list[float]  # 0..1 relevance per document, in the order sent
    unrecorded: bool | None = optional()


# --- the conflict check ---------------------------------------------------------------------------


@with_config(_STRICT)
class MessageRecord(TypedDict):
    role: str
    content: str


@with_config(_STRICT)
class HTTPRequestRecord(TypedDict):
    method: str
    url: str
    body: str


@with_config(_STRICT)
class HTTPResponseRecord(TypedDict):
    status: int
    body: str


class LLMRequestStep(StepModel):
    # these records come whole from tools.models.llm_client, their step name inside: the data keeps it
    step: Literal["llm_request"] = "llm_request"
    call: int
    attempt: int
    model: str
    messages: list[MessageRecord]
    http_request: HTTPRequestRecord | None


class LLMReplyStep(StepModel):
    step: Literal["llm_reply"] = "llm_reply"
    call: int
    attempt: int
    model: str
    outcome: Literal["ok", "error"]
    status: int | None
    text: str | None = optional()  # ok: the reply's text and pydantic-ai's ModelResponse as JSON
    model_response: dict[str, Any] | None = optional()
    error_class: str | None = optional()  # error: what failed
    error: str | None = optional()
    http_response: HTTPResponseRecord | None
    latency_ms: float
    final_error: str | None = optional()  # on the last attempt of a call that failed for good


@with_config(_STRICT)
class ValueRecord(TypedDict):
    value: str
    doc_id: str
    version: str
    start: int
    end: int


class ConflictStep(StepModel):
    step: Literal["conflict"] = Field(default="conflict", exclude=True)
    slot: str
    kind: str
    values: list[ValueRecord]
    verdict: str
    adjudicator: str
    reason: str
    scope: str | None


@with_config(_STRICT)
class ScannedRecord(TypedDict):
    slot: str
    kind: str
    values: list[ValueRecord]
    dropped: str  # why the two values are no disagreement


class ConflictScanStep(StepModel):
    """The conflict candidates a rule set aside before any adjudicator (policies.conflicts.screen), and
    how many went on to a verdict. Recorded, before the verdicts, when one was set aside, under a policy
    with ``conflict_scopes`` (traces made before it have none)."""

    step: Literal["conflict_scan"] = Field(default="conflict_scan", exclude=True)
    candidates: int  # candidates that went on to an adjudicator or a rule's verdict
    dropped: list[ScannedRecord]


# --- the end --------------------------------------------------------------------------------------


class DecidedStep(StepModel):
    step: Literal["decided"] = Field(default="decided", exclude=True)
    status: str
    why: str
    outcome: dict[str, Any]  # the Outcome as JSON, without latency, trace and its documents (a view)


class AbortedStep(StepModel):
    step: Literal["aborted"] = Field(default="aborted", exclude=True)
    error: str  # the exception's type
    message: str  # its first 300 characters


TraceStep = Annotated[
    EmbeddedStep
    | ResolvedStep
    | RecalledStep
    | SlidStep
    | CheckedStep
    | RerankRequestStep
    | RerankReplyStep
    | LLMRequestStep
    | LLMReplyStep
    | ConflictStep
    | ConflictScanStep
    | DecidedStep
    | AbortedStep,
    Discriminator("step"),
]
"""Any one step of a run."""

STEP_KINDS: Final[tuple[str, ...]] = tuple(
    get_args(model.model_fields["step"].annotation)[0] for model in get_args(get_args(TraceStep)[0])
)
"""The step names, in the order the union lists them."""

_STEP: TypeAdapter[TraceStep] = TypeAdapter(TraceStep)


def parse_step(step: str, data: dict[str, Any]) -> TraceStep:
    """The typed step of an event's ``step`` and ``data``; ValidationError when they are not one."""
    return _STEP.validate_python({**data, "step": step})


@dataclass(frozen=True, slots=True)
class Made:
    """A step as the loop makes it on the request path: its name and its data, plain JSON, exactly
    what the typed step's ``trace_data`` would hold (optional fields without a value left out). It
    is encoded and written as it is, not validated again; ``typed`` reads it as a reader would."""

    step: str
    data: dict[str, Any]

    def trace_data(self) -> dict[str, Any]:
        """The event's ``data``."""
        return self.data

    def typed(self) -> TraceStep:
        """The typed step, validated as a reader validates the data written."""
        return parse_step(self.step, self.data)


AnyStep = TraceStep | Made
"""A step as a recorder may receive it: typed, or made as plain data."""
