"""A run as OpenTelemetry spans: a view of its trace records, in OpenInference's conventions.

The hash-chained trace is the record of truth; the spans are made from the same steps the trace
writer wrote (and the header and final hash it sealed), once the trace is finished, for a team's
Phoenix, Langfuse or Jaeger. One root span per run (``openinference.span.kind`` CHAIN: the question
in, the answer or the refusal out, the run id and the trace hash), one child span per step in the
order recorded, each lasting from the step before it to its own record:

    embedded            EMBEDDING   embedding.model_name
    recalled            RETRIEVER   input.value (the query), retrieval.documents.{i}.document.id /
                                    score / content / metadata (the hit units' text)
    rerank_request      RERANKER    reranker.query, reranker.input_documents.{i}.document.content
    rerank_reply        RERANKER    reranker.output_documents.{i}.document.score
    llm_request         LLM         llm.model_name, llm.input_messages.{i}.message.role / content
    llm_reply           LLM         llm.output_messages.0.message.role / content
    resolved, slid, checked, conflict, decided, aborted: CHAIN

and every step's own fields as ``evidence_loop.<step>.<field>`` (lists and objects as JSON).

What a span shows is bounded by what the run's caller could read: the recall, the windows and the
conflicts of a run only ever hold documents its groups may read, and this view checks each document
again (``Readable``) and leaves out any it may not. The caller's groups and the documents' ACLs are
never shown, nor anything of another run.

Nothing here imports OpenTelemetry: ``agent.loop.otel`` turns these specs into SDK spans.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from evidence_loop.traces.records.steps import AnyStep

Attributes = dict[str, str | int | float | bool]
Readable = Callable[[str, str], bool]
"""Whether the run's caller may read this version of this document."""
Text = Callable[[str, str, int, int], str | None]
"""The stored text of ``doc_id@version[start:end]`` (None when the store no longer holds it)."""

# OpenInference's attribute names (openinference-semantic-conventions; a test holds them equal)
SPAN_KIND = "openinference.span.kind"
INPUT_VALUE, INPUT_MIME_TYPE = "input.value", "input.mime_type"
OUTPUT_VALUE, OUTPUT_MIME_TYPE = "output.value", "output.mime_type"
RETRIEVAL_DOCUMENTS = "retrieval.documents"
DOCUMENT_ID, DOCUMENT_SCORE = "document.id", "document.score"
DOCUMENT_CONTENT, DOCUMENT_METADATA = "document.content", "document.metadata"
EMBEDDING_MODEL_NAME = "embedding.model_name"
LLM_MODEL_NAME, LLM_INPUT_MESSAGES, LLM_OUTPUT_MESSAGES = (
    "llm.model_name",
    "llm.input_messages",
    "llm.output_messages",
)
MESSAGE_ROLE, MESSAGE_CONTENT = "message.role", "message.content"
RERANKER_QUERY, RERANKER_MODEL_NAME = "reranker.query", "reranker.model_name"
RERANKER_INPUT_DOCUMENTS, RERANKER_OUTPUT_DOCUMENTS = "reranker.input_documents", "reranker.output_documents"
USER_ID = "user.id"

# what the generic attributes leave out: the vector, texts cited elsewhere, HTTP bodies repeating messages
_UNSHOWN = frozenset({"vector", "hits", "outcome", "http_request", "http_response", "model_response", "body"})
_KINDS = {
    "embedded": "EMBEDDING",
    "recalled": "RETRIEVER",
    "rerank_request": "RERANKER",
    "rerank_reply": "RERANKER",
    "llm_request": "LLM",
    "llm_reply": "LLM",
}


@dataclass(frozen=True, slots=True)
class SpanSpec:
    """One span to make: its name, OpenInference kind, times (ns since the epoch), attributes."""

    name: str
    kind: str
    start_ns: int
    end_ns: int
    attributes: Attributes = field(default_factory=dict)
    error: str | None = None


@dataclass(frozen=True, slots=True)
class RunRecord:
    """A finished (or aborted) run as its trace recorded it, with when each step was recorded."""

    run_id: str
    question: str
    started_ns: int
    ended_ns: int
    steps: Sequence[tuple[int, AnyStep]]
    output: str = ""
    status: str = ""
    trace_hash: str | None = None
    caller: str | None = None
    generation: int | None = None
    error: str | None = None


def run_spans(run: RunRecord, readable: Readable, text: Text) -> tuple[SpanSpec, list[SpanSpec]]:
    """The root span of ``run`` and its step spans, in the order the steps were recorded."""
    children: list[SpanSpec] = []
    before = run.started_ns
    for seq, (at, step) in enumerate(run.steps):
        attributes = step_attributes(step.step, step.trace_data(), readable, text)
        attributes |= {"evidence_loop.step": step.step, "evidence_loop.seq": seq}
        error = attributes.get("evidence_loop.aborted.message") if step.step == "aborted" else None
        kind = _KINDS.get(step.step, "CHAIN")
        children.append(SpanSpec(step.step, kind, before, at, attributes, str(error) if error else None))
        before = at
    return _root(run), children


def _root(run: RunRecord) -> SpanSpec:
    attributes: Attributes = {
        SPAN_KIND: "CHAIN",
        INPUT_VALUE: run.question,
        INPUT_MIME_TYPE: "text/plain",
        "evidence_loop.run_id": run.run_id,
        "evidence_loop.status": run.status,
    }
    if run.output:
        attributes |= {OUTPUT_VALUE: run.output, OUTPUT_MIME_TYPE: "text/plain"}
    if run.trace_hash is not None:
        attributes["evidence_loop.trace.hash"] = run.trace_hash
    if run.caller is not None:
        attributes[USER_ID] = run.caller
    if run.generation is not None:
        attributes["evidence_loop.corpus.generation"] = run.generation
    return SpanSpec("evidence_loop.ask", "CHAIN", run.started_ns, run.ended_ns, attributes, run.error)


def step_attributes(name: str, data: Mapping[str, Any], readable: Readable, text: Text) -> Attributes:
    """A step's attributes: its kind's OpenInference ones, then its own fields; nothing of a document
    the caller may not read."""
    if not _shown(data, readable):
        return {SPAN_KIND: _KINDS.get(name, "CHAIN")}
    shown = {key: _without_unreadable(value, readable) for key, value in data.items()}
    attributes: Attributes = {SPAN_KIND: _KINDS.get(name, "CHAIN")}
    special = _SPECIAL.get(name)
    if special is not None:
        attributes |= special(shown, readable, text)
    for key, value in shown.items():
        if key not in _UNSHOWN and value is not None:
            attributes[f"evidence_loop.{name}.{key}"] = _scalar(value)
    return attributes


def _shown(data: Mapping[str, Any], readable: Readable) -> bool:
    """A step about one document (a slide) is shown only when the caller may read that document."""
    doc_id, version = data.get("doc_id"), data.get("version")
    return not (isinstance(doc_id, str) and isinstance(version, str)) or readable(doc_id, version)


def _without_unreadable(value: Any, readable: Readable) -> Any:
    """Lists of records (windows, values, hits) without those naming a document the caller may not read."""
    if isinstance(value, list):
        return [v for v in value if not isinstance(v, Mapping) or _shown(v, readable)]
    return value


def _scalar(value: Any) -> str | int | float | bool:
    if isinstance(value, str | int | float | bool):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _recalled(data: Mapping[str, Any], readable: Readable, text: Text) -> Attributes:
    attributes: Attributes = {INPUT_VALUE: str(data.get("query", ""))}
    for i, hit in enumerate(data.get("hits", [])):
        prefix = f"{RETRIEVAL_DOCUMENTS}.{i}"
        content = text(hit["doc_id"], hit["version"], hit["start"], hit["end"])
        meta = {k: hit[k] for k in ("version", "start", "end", "ordinal", "kind", "similarity") if k in hit}
        attributes |= {
            f"{prefix}.{DOCUMENT_ID}": hit["doc_id"],
            f"{prefix}.{DOCUMENT_SCORE}": float(hit["score"]),
        }
        attributes[f"{prefix}.{DOCUMENT_METADATA}"] = json.dumps(meta, sort_keys=True)
        if content is not None:
            attributes[f"{prefix}.{DOCUMENT_CONTENT}"] = content
    return attributes


def _embedded(data: Mapping[str, Any], readable: Readable, text: Text) -> Attributes:
    return {EMBEDDING_MODEL_NAME: str(data.get("embedder", ""))}


def _rerank_request(data: Mapping[str, Any], readable: Readable, text: Text) -> Attributes:
    body = data.get("body") or {}
    documents = body.get("documents", body.get("texts", []))
    attributes: Attributes = {RERANKER_QUERY: str(body.get("query", ""))}
    if "model" in body:
        attributes[RERANKER_MODEL_NAME] = str(body["model"])
    for i, content in enumerate(documents):
        attributes[f"{RERANKER_INPUT_DOCUMENTS}.{i}.{DOCUMENT_CONTENT}"] = str(content)
    return attributes


def _rerank_reply(data: Mapping[str, Any], readable: Readable, text: Text) -> Attributes:
    scores = data.get("scores", [])
    return {f"{RERANKER_OUTPUT_DOCUMENTS}.{i}.{DOCUMENT_SCORE}": float(s) for i, s in enumerate(scores)}


def _llm_request(data: Mapping[str, Any], readable: Readable, text: Text) -> Attributes:
    attributes: Attributes = {LLM_MODEL_NAME: str(data.get("model", ""))}
    for i, message in enumerate(data.get("messages", [])):
        attributes[f"{LLM_INPUT_MESSAGES}.{i}.{MESSAGE_ROLE}"] = str(message.get("role", ""))
        attributes[f"{LLM_INPUT_MESSAGES}.{i}.{MESSAGE_CONTENT}"] = str(message.get("content", ""))
    return attributes


def _llm_reply(data: Mapping[str, Any], readable: Readable, text: Text) -> Attributes:
    attributes: Attributes = {LLM_MODEL_NAME: str(data.get("model", ""))}
    if data.get("text") is not None:
        attributes |= {
            f"{LLM_OUTPUT_MESSAGES}.0.{MESSAGE_ROLE}": "assistant",
            f"{LLM_OUTPUT_MESSAGES}.0.{MESSAGE_CONTENT}": str(data["text"]),
        }
    return attributes


_SPECIAL: dict[str, Callable[[Mapping[str, Any], Readable, Text], Attributes]] = {
    "recalled": _recalled,
    "embedded": _embedded,
    "rerank_request": _rerank_request,
    "rerank_reply": _rerank_reply,
    "llm_request": _llm_request,
    "llm_reply": _llm_reply,
}
