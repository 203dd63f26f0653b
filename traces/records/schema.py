"""The trace record schema: a header line, one line per event, a footer line (JSON Lines, UTF-8).

A finished trace file reads::

    {"type":"header","schema_version":2,"run_id":"r-1",...,"hash":H}
    {"type":"event","seq":0,"step":"recalled","data":{...},"prev_hash":H,"hash":E0}
    {"type":"event","seq":1,"step":"checked","data":{...},"prev_hash":E0,"hash":E1}
    {"type":"footer","status":"complete","outcome_status":"answered","events":2,...,"prev_hash":E1,"hash":F}

A record is committed once its newline is on disk: a last line without one was torn by a kill and is
ignored. A file without a footer is an *incomplete* run (crash, kill, exception), still readable.

An event's data is one of the typed steps of ``traces.records.steps``, named by its ``step``.

Evolving the schema: a field added to a step or to the header is left out while it has no value, so
that every trace written before it reads and hashes as it was written (``traces.records.steps.optional``).
Only a change that cannot be made so needs ``SCHEMA_VERSION`` bumped. Schema 2 is one: its events
cite the stored text of a span (doc_id, version, start, end and the text's sha256) where schema 1
copied the text in (``traces.verification.citations``). A schema 1 trace reads, verifies and replays as
written;
a reader shows a schema 2 one with the cited text resolved from the store. Schema 3 is another: its
header names the policy, the LLM settings, the embedder and the reranker by hash (``documents``),
each document stored once per store (``traces.records.blobs``), where older headers copied them into every
run; a store reads a schema 3 header back with them resolved. Schema 4 is the third: a finished run's
events are encoded once when it ends and chained at once, not one by one (``traces.records.batch``): an event
line holds no ``prev_hash`` or ``hash``, and the footer's ``prev_hash`` is the digest of the header's
hash and every event line (``hashing.steps_digest``). A run that does not finish is written in schema
3, each event chained (there is no footer to close its events).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Annotated, Any, Final, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationInfo,
    WithJsonSchema,
    field_validator,
    model_serializer,
    model_validator,
)

from evidence_loop.traces.records.hashing import digest
from evidence_loop.traces.records.steps import TraceStep

SCHEMA_VERSION: Final = 4
FIRST_SCHEMA: Final = 1
BY_HASH_SCHEMA: Final = 3
"""From schema 3 on, a header names its policy, LLM settings, embedder and reranker by hash."""
CHAINED_SCHEMA: Final = 3
"""The schema a run is written in event by event, each event chained (``traces.records.writer``)."""
BATCH_SCHEMA: Final = 4
"""From schema 4 on, a finished run's events are chained at once by its footer (``traces.records.batch``)."""

RUN_ID_PATTERN: Final = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"

# Exact key names (lower-cased, "-" read as "_"): a substring test would also refuse "max_tokens".
_SECRET_KEYS: Final = frozenset(
    {"api_key", "apikey", "authorization", "password", "secret", "client_secret", "token", "access_token"}
)

TraceStatus = Literal["complete", "incomplete", "unreadable"]


def parse_utc(text: str) -> datetime:
    """Parse an ISO-8601 timestamp that carries a zero UTC offset (``Z`` or ``+00:00``)."""
    moment = datetime.fromisoformat(text)
    if moment.utcoffset() != timedelta(0):
        raise ValueError(f"timestamp {text!r} is not in UTC")
    return moment


def utc_timestamp(moment: datetime) -> str:
    """The trace's timestamp text for an aware datetime: ``2025-03-01T08:30:00.250000Z``."""
    if moment.tzinfo is None:
        raise ValueError("a trace timestamp needs a timezone-aware datetime")
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _refuse_secrets(value: object, path: str) -> None:
    if isinstance(value, Mapping):
        for key, item in value.items():
            if str(key).lower().replace("-", "_") in _SECRET_KEYS:
                raise ValueError(f"{path}.{key} looks like a secret; traces must not hold credentials")
            _refuse_secrets(item, f"{path}.{key}")
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            _refuse_secrets(item, f"{path}[{i}]")


def _empty(value: str) -> bool:
    return not value


class _Record(BaseModel):
    # strict: a tampered "5" must not quietly become 5 and hash like the original.
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)


class CorpusInfo(_Record):
    """The corpus state a run read: index generation, a fingerprint, and doc_id -> version read."""

    generation: int
    fingerprint: str
    versions_read: dict[str, str] = Field(default_factory=dict)


class TraceHeader(_Record):
    """The first record: who asked what, against which code, policy, corpus and model."""

    type: Literal["header"] = "header"
    schema_version: int = SCHEMA_VERSION
    run_id: str = Field(pattern=RUN_ID_PATTERN)
    created_at: str
    code_version: str
    # schema 3 names the policy by policy_hash and the documents by their hashes (``documents``): the
    # fields hold them only as read back resolved from the store's documents (``traces.records.blobs``)
    policy: dict[str, Any] = Field(default_factory=dict)
    policy_hash: str = Field(default="", description="digest(policy); filled in when left empty")
    corpus: CorpusInfo
    question: str
    groups: list[str] = Field(default_factory=list)
    caller: str | None = Field(default=None, description="the API key name that asked, if any")
    llm: dict[str, Any] = Field(default_factory=dict, description="model, base_url, quirks; no secrets")
    # added later: a header without them (lexical recall, the rule-based decision) reads and hashes
    # as it was written, so they are left out when empty
    embedder: dict[str, Any] = Field(default_factory=dict, description="backend, model, dim, digest")
    reranker: dict[str, Any] = Field(default_factory=dict, description="model, base_url, api, scores")
    judge: dict[str, Any] = Field(default_factory=dict, description="the decision model's hash and scale")
    documents: dict[str, str] = Field(
        default_factory=dict, description="schema 3: policy, llm, embedder, reranker -> the document's hash"
    )
    hash: str = Field(default="", description="record_hash of this record; the chain's start")

    @model_serializer(mode="wrap")
    def _without_empty_later_fields(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        later = ("embedder", "reranker", "judge", "documents")
        for key in (*later, "policy", "llm") if self.schema_version >= BY_HASH_SCHEMA else later:
            if not data.get(key):
                data.pop(key, None)
        return data

    @model_validator(mode="before")
    @classmethod
    def _fill_policy_hash(cls, raw: object) -> object:
        if isinstance(raw, dict) and not raw.get("policy_hash") and isinstance(raw.get("policy"), dict):
            return {**raw, "policy_hash": digest(raw["policy"])}
        return raw

    @field_validator("created_at")
    @classmethod
    def _utc(cls, value: str) -> str:
        parse_utc(value)
        return value

    @field_validator("llm", "reranker")
    @classmethod
    def _no_secrets(cls, value: dict[str, Any], info: ValidationInfo) -> dict[str, Any]:
        _refuse_secrets(value, str(info.field_name))
        return value

    @property
    def created(self) -> datetime:
        """``created_at`` as an aware datetime."""
        return parse_utc(self.created_at)


class TraceEvent(_Record):
    """One step of the run, linked to its predecessor by ``prev_hash``; ``data`` is the typed step."""

    type: Literal["event"] = "event"
    seq: int = Field(ge=0)
    step: str
    # to a client (the HTTP API) the data is the JSON object the file holds, its shape the step's
    data: Annotated[TraceStep, WithJsonSchema({"type": "object"}, mode="serialization")]
    # each event's link in schemas 1-3; a schema 4 event has none (its run's footer chains them all)
    prev_hash: str = Field(default="", exclude_if=_empty)
    hash: str = Field(default="", exclude_if=_empty)

    @model_validator(mode="before")
    @classmethod
    def _step_names_the_data(cls, raw: object) -> object:
        if isinstance(raw, dict) and isinstance(raw.get("data"), dict):
            return {**raw, "data": {**raw["data"], "step": raw.get("step")}}
        return raw

    @model_validator(mode="after")
    def _one_step(self) -> TraceEvent:
        if self.data.step != self.step:
            raise ValueError(f"the event's step {self.step!r} holds a {self.data.step!r} step")
        return self


class TraceFooter(_Record):
    """The completion marker: written last, after which the file is fsynced."""

    type: Literal["footer"] = "footer"
    status: Literal["complete"] = "complete"
    outcome_status: str
    events: int = Field(ge=0)
    versions_read: dict[str, str] = Field(default_factory=dict)
    prev_hash: str
    hash: str = ""


class TraceSummary(BaseModel):
    """One row of ``evloop trace list``; also one line of the store's ``index.jsonl``."""

    # Index lines written by a newer version may carry more fields: ignore them rather than fail a listing.
    model_config = ConfigDict(frozen=True, extra="ignore")

    run_id: str
    created_at: str
    status: TraceStatus
    outcome_status: str | None = None
    question: str = ""
    path: str = Field(description="relative to the store root, with / separators")
    final_hash: str | None = None
    events: int = 0
    bytes: int = 0


@dataclass(frozen=True, slots=True)
class Trace:
    """A trace as read back: header, events, and the footer when the run finished.

    ``records`` holds the raw records exactly as written, a damaged one that is still JSON last;
    ``verify`` checks those.
    ``torn`` says a partial last line (a kill mid-write) was ignored; ``damage`` names the first complete
    line that was not a valid record, where reading stopped.
    """

    header: TraceHeader
    events: tuple[TraceEvent, ...]
    footer: TraceFooter | None = None
    path: Path | None = None
    torn: bool = False
    damage: str | None = None
    records: tuple[dict[str, Any], ...] = field(default=(), compare=False, repr=False)
    # the documents the header names by hash, as its store (or an export) holds them (traces.records.blobs);
    # None for a trace read without its store: verify then checks the chain alone
    documents: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)

    def named(self, name: str) -> dict[str, Any]:
        """The header's ``policy``, ``llm``, ``embedder`` or ``reranker``: as the header holds it
        (schema 1 and 2), else the document it names by hash (schema 3); {} for neither."""
        value: dict[str, Any] = getattr(self.header, name)
        if value:
            return dict(value)
        digest_hex = self.header.documents.get(name)
        document = self.documents.get(digest_hex) if digest_hex and self.documents else None
        return dict(document) if isinstance(document, dict) else {}

    @property
    def complete(self) -> bool:
        """True when the footer was written and nothing before it is damaged."""
        return self.footer is not None and self.damage is None

    @property
    def final_hash(self) -> str:
        """The footer's hash, or for an incomplete run the last event's (the header's if none, or if
        its events are not chained one by one)."""
        if self.footer is not None:
            return self.footer.hash
        return self.events[-1].hash if self.events and self.events[-1].hash else self.header.hash
