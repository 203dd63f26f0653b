"""Request and response bodies of the HTTP API (unknown fields are rejected everywhere).

Answers are :class:`agent.outcome.Outcome` itself and traces are the ``traces`` records, so the
OpenAPI document describes the real types rather than copies that could drift.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field
from pydantic_core import PydanticCustomError

from evidence_loop.agent.loop.history import MAX_HISTORY_TURNS, history_fault
from evidence_loop.tools.inputs import unicode_fault
from evidence_loop.tools.types import DocFormat, DocumentInput
from evidence_loop.traces import Trace
from evidence_loop.traces.records.schema import RUN_ID_PATTERN, TraceEvent, TraceFooter, TraceHeader

if TYPE_CHECKING:  # the replay and the store's rows are read, never built, here
    from evidence_loop.agent.loop.replay import ReplayReport
    from evidence_loop.tools.store.folder import DocumentInfo, IngestReport

GROUP_NAME = r"^[^\s,]{1,64}$"
DOC_ID_CHARS = 512  # the longest doc_id the API takes (a document's, a review's)
# Deeper than any real document's metadata, shallow enough to be walked, stored and read back safely.
METADATA_DEPTH = 32


def _unicode(value: object) -> object:
    """Refuse a lone surrogate: JSON can spell one (``"\\ud800"``), UTF-8 cannot (no reply could echo
    it). The rule and its words are those of every door (``tools.inputs.unicode_fault``)."""
    if isinstance(value, str) and (fault := unicode_fault(value)) is not None:
        raise PydanticCustomError("lone_surrogate", fault)
    return value


def _plain_metadata(value: object) -> object:
    """Metadata nested at most ``METADATA_DEPTH`` levels, with no lone surrogate in a key or a value
    and no NaN or infinity (Python's JSON reader takes them; JSON has no such values)."""
    stack: list[tuple[object, int, str]] = [(value, 1, "")]
    while stack:
        item, depth, path = stack.pop()
        if isinstance(item, dict | list) and depth > METADATA_DEPTH:
            raise PydanticCustomError(
                "metadata_too_deep", "metadata nests deeper than {limit} levels", {"limit": METADATA_DEPTH}
            )
        if isinstance(item, dict):
            for key, inner in item.items():
                _unicode(key)
                stack.append((inner, depth + 1, f"{path}.{key}" if path else str(key)))
        elif isinstance(item, list):
            stack.extend((inner, depth + 1, f"{path}[{i}]") for i, inner in enumerate(item))
        elif isinstance(item, float) and not math.isfinite(item):
            raise PydanticCustomError(
                "finite_number",
                "metadata field {field} is {value}, which JSON cannot hold; send a finite number or null",
                {"field": repr(path), "value": str(item)},
            )
        else:
            _unicode(item)
    return value


# Text from the caller: any string, as long as it is Unicode (checked before any other constraint).
Text = Annotated[str, BeforeValidator(_unicode)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AskOptions(_Strict):
    """How much of the outcome to send back, and how long to wait for it."""

    include_evidence: bool = Field(default=True, description="false: leave out the evidence windows")
    include_steps: bool = Field(default=True, description="false: leave out how each window grew")
    timeout_s: float | None = Field(
        default=None,
        ge=0.5,
        le=3600,
        allow_inf_nan=False,
        description="give up sooner than the server's own request timeout",
    )


class HistoryTurn(_Strict):
    """An earlier turn: its question, its run, or both (a run is read back only when the key may read it)."""

    question: Text | None = Field(default=None, min_length=1, description="the earlier question as asked")
    run_id: str | None = Field(
        default=None, pattern=RUN_ID_PATTERN, description="the run_id of its outcome (its trace is read back)"
    )


def _history_length(value: object) -> object:
    """At most ``MAX_HISTORY_TURNS`` turns, refused in the words of every door (``agent.loop.history``)."""
    if isinstance(value, list) and (fault := history_fault(len(value))) is not None:
        raise PydanticCustomError("too_long", fault)
    return value


class AskRequest(_Strict):
    """A question, optionally narrowed to some of the key's groups, with the conversation's earlier turns."""

    question: Text = Field(min_length=1, description="the user's question; the server bounds its length")
    groups: list[Text] | None = Field(
        default=None,
        max_length=64,
        description="read only with these groups (a subset of the key's); default: all of the key's",
    )
    options: AskOptions = Field(default_factory=AskOptions)
    history: Annotated[list[Text | HistoryTurn] | None, BeforeValidator(_history_length)] = Field(
        default=None,
        json_schema_extra={"maxItems": MAX_HISTORY_TURNS},
        description=f"the earlier turns of the conversation, oldest first (at most {MAX_HISTORY_TURNS}): "
        "question strings, or objects with the question and/or the run_id of its outcome; a follow-up "
        "is read with the last few",
    )


class DocumentBody(_Strict):
    """A document's text and fields, without its doc_id (the body of ``PUT /v1/documents/{doc_id}``)."""

    text: Text
    title: Text = ""
    version: Text | None = Field(
        default=None,
        min_length=1,
        max_length=128,
        description="a label naming this text; default: the store labels it: 1 for a new document, "
        "the label of the stored version with this text, else the next integer",
    )
    format: DocFormat = "text"
    acl: list[Text] = Field(default=[], description="groups allowed to read it; empty: everyone")
    metadata: Annotated[dict[str, Any], BeforeValidator(_plain_metadata)] = Field(
        default={}, description=f"JSON values, nested at most {METADATA_DEPTH} levels"
    )

    def to_input(self, doc_id: str) -> DocumentInput:
        return DocumentInput(
            doc_id=doc_id,
            text=self.text,
            version=self.version,
            title=self.title,
            format=self.format,
            acl=tuple(dict.fromkeys(self.acl)),
            metadata=self.metadata,
        )


class DocumentIn(DocumentBody):
    """One document, as a line of a corpus.jsonl holds it (see Document formats in the docs)."""

    doc_id: Text = Field(min_length=1, max_length=DOC_ID_CHARS, pattern=r"\S")

    def as_input(self) -> DocumentInput:
        return self.to_input(self.doc_id)


class DocumentBatch(_Strict):
    """A batch, written all or nothing."""

    documents: list[DocumentIn] = Field(min_length=1)


class Skipped(_Strict):
    doc_id: str
    reason: str


class DocumentOutcome(_Strict):
    """What a write did to one document."""

    doc_id: str
    version: str = Field(description="the version written, kept, or retired")
    outcome: Literal["added", "changed", "unchanged", "skipped", "retired"]


class IngestOut(_Strict):
    """What one write did (see ``tools.store.folder.IngestReport``); a dry run wrote nothing."""

    documents: int = Field(description="documents added or changed")
    added: int = Field(description="documents that had no live version")
    changed: int = Field(
        description="documents now live in another version, or with a new title, ACL or metadata"
    )
    unchanged: int
    retired: int = Field(description="documents of the source no longer in the batch (a prune)")
    versions_added: int
    skipped: list[Skipped] = Field(description="documents passed over, and why")
    units: int = Field(description="units of the versions written")
    embedded: int = Field(description="units embedded for them")
    outcomes: list[DocumentOutcome]
    seconds: float
    generation: int
    dry_run: bool = False

    @classmethod
    def of(cls, report: IngestReport) -> IngestOut:
        return cls(
            documents=report.documents,
            added=report.added,
            changed=report.changed,
            unchanged=report.unchanged,
            retired=report.retired,
            versions_added=report.versions_added,
            skipped=[Skipped(doc_id=doc_id, reason=reason) for doc_id, reason in report.skipped],
            units=report.units,
            embedded=report.embedded,
            outcomes=[DocumentOutcome(doc_id=d, version=v, outcome=o) for d, v, o in report.outcomes],
            seconds=round(report.seconds, 6),
            generation=report.generation,
            dry_run=report.dry_run,
        )


class DocumentOut(_Strict):
    doc_id: str
    title: str
    current_version: str
    versions: list[str]
    units: int
    acl: list[str]

    @classmethod
    def of(cls, info: DocumentInfo) -> DocumentOut:
        return cls(
            doc_id=info.doc_id,
            title=info.title,
            current_version=info.current_version,
            versions=list(info.versions),
            units=info.units,
            acl=list(info.acl),
        )


class DocumentList(_Strict):
    documents: list[DocumentOut]


class TraceOut(_Strict):
    """A run's trace as recorded: header, hash-chained events, and the footer once it finished."""

    header: TraceHeader
    events: list[TraceEvent]
    footer: TraceFooter | None
    complete: bool
    torn: bool
    damage: str | None

    @classmethod
    def of(cls, trace: Trace) -> TraceOut:
        return cls(
            header=trace.header,
            events=list(trace.events),
            footer=trace.footer,
            complete=trace.complete,
            torn=trace.torn,
            damage=trace.damage,
        )


class CitedVersion(_Strict):
    """A document version a trace cites."""

    doc_id: str
    version: str


class VerifyOut(_Strict):
    """Whether the trace's hash chain holds (``first_bad_seq`` -1: the header); ``replaced`` lists the
    cited versions whose text a later write replaced (no tampering; the run cannot be replayed pinned)."""

    run_id: str
    ok: bool
    complete: bool
    first_bad_seq: int | None
    reason: str
    events: int
    final_hash: str | None
    replaced: list[CitedVersion] = []


class ReplayOut(_Strict):
    """A replay re-runs the loop with the recorded LLM replies, pinned to the recorded versions."""

    run_id: str
    identical: bool
    divergence: str | None = Field(description="the first step that differs, when one does")
    recorded_status: str | None
    replayed_status: str | None

    @classmethod
    def of(cls, run_id: str, report: ReplayReport) -> ReplayOut:
        return cls(
            run_id=run_id,
            identical=report.identical,
            divergence=report.divergence.describe() if report.divergence is not None else None,
            recorded_status=report.recorded_status,
            replayed_status=report.replayed_status,
        )


class Health(_Strict):
    status: Literal["ok"] = "ok"


class Ready(_Strict):
    """Only that the index is loaded: the probe is unauthenticated, so it says nothing about the corpus.

    ``store`` appears only when a shared store cannot be reached: questions are still answered,
    from the generation this replica holds, and writes get a 503. ``policy`` is the hash of the
    policy the server answers with (``evloop serve --policy-file``, ``EVLOOP_POLICY``, ``--policy``).
    """

    status: Literal["ready"] = "ready"
    store: Literal["unreachable"] | None = None
    policy: str | None = None  # sha256 of the policy in force (as a trace header pins it), for an operator
