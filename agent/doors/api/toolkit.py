"""The five tools a model or a chatbot framework calls, over one :class:`Service` for one caller.

``evloop mcp`` serves them over the Model Context Protocol, ``evloop tool-schema`` describes ``ask``
for OpenAI-style function calling, and the LangChain and LlamaIndex retrievers call ``ask``. Each
takes the :class:`Caller` whose groups bound what it reads (a key's, or the local caller's), so a
tool never shows text the HTTP API would not show the same key. Refusals are outcomes, never
errors; a caller's mistake raises ``InputError``, an unknown or hidden document ``NotFoundError``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evidence_loop.agent.access.keys import LOCAL_CALLER, SCOPES, Caller, GroupsNotGranted, narrow
from evidence_loop.agent.access.run_access import visible_trace
from evidence_loop.agent.doors.api.schemas import DocumentOut, ReplayOut
from evidence_loop.agent.doors.api.strict_schema import strict_form
from evidence_loop.agent.loop.history import MAX_HISTORY_TURNS
from evidence_loop.agent.outcome import Outcome
from evidence_loop.agent.service import Service, check_caller
from evidence_loop.tools.errors import InputError, NotFoundError, TamperedTraceError
from evidence_loop.tools.inputs import check_unicode
from evidence_loop.tools.search.snapshot import Snapshot
from evidence_loop.tools.types import Hit
from evidence_loop.tools.windows import section_path

MAX_SEARCH_K = 50
# The caller a model's tool calls run as unless told otherwise: the public documents only, and no
# way for the model to widen them by naming groups (a model's arguments are not an identity).
PUBLIC = Caller(LOCAL_CALLER, frozenset(), frozenset(SCOPES))
ASK_DESCRIPTION = (
    "Answer a customer-support question from the knowledge base. Returns status 'answered' with an "
    "extractive answer whose every sentence is cited (doc_id, version, [start:end] character offsets), "
    "'insufficient_evidence' with the missing pieces (do not answer then: say what is missing), or "
    "'conflicting_evidence' with both sources cited. Quote the answer and its citations as given."
)


class AskArguments(BaseModel):
    """The arguments of ``ask`` (also the OpenAI function's parameters, ``evloop tool-schema``)."""

    question: str = Field(description="the user's question, as asked (Chinese or English)")
    groups: list[str] | None = Field(
        default=None, description="read with only these of the caller's groups (default: all of them)"
    )
    history: list[str] | None = Field(
        default=None,
        json_schema_extra={"maxItems": MAX_HISTORY_TURNS},
        description=f"the conversation's earlier turns, oldest first (at most {MAX_HISTORY_TURNS}), when "
        "the question follows up",
    )


class _Out(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class SearchHit(_Out):
    """One unit recall found: ``text == document_text[start:end]`` of ``doc_id@version``."""

    doc_id: str
    version: str
    section: list[str]
    kind: str
    start: int
    end: int
    text: str
    score: float


class SearchResult(_Out):
    query: str
    hits: list[SearchHit]


class DocumentText(_Out):
    """A span of one stored version (the whole text without ``start``/``end``)."""

    doc_id: str
    version: str
    current_version: str
    title: str
    start: int
    end: int
    length: int = Field(description="the length of the whole version's text, in characters")
    text: str


class DocumentListOut(_Out):
    documents: list[DocumentOut]


def reading_groups(caller: Caller, groups: Sequence[str] | None) -> tuple[str, ...]:
    """The groups to read with: the caller's own, or the subset named; never wider."""
    check_caller(groups or (), None)  # Unicode text first: a refusal echoes the groups it names
    try:
        return narrow(caller, groups)
    except GroupsNotGranted as exc:
        raise InputError(
            f"groups not granted: {', '.join(exc.extra)}; a request may only narrow its caller's groups"
        ) from None


def ask(
    service: Service,
    caller: Caller,
    question: str,
    groups: Sequence[str] | None = None,
    history: Sequence[str] | None = None,
) -> Outcome:
    """Run the evidence loop for ``question``, read with the caller's groups (or a subset)."""
    read_with = reading_groups(caller, groups)
    return service.ask(question, read_with, caller=caller.name, history=list(history or ()))


def search(service: Service, caller: Caller, query: str, k: int = 10) -> SearchResult:
    """The raw recall step: the ``k`` best hit units the caller may read."""
    if not 1 <= k <= MAX_SEARCH_K:
        raise InputError(f"k must be from 1 to {MAX_SEARCH_K}, not {k}")
    snapshot = service.snapshot()
    hits = service.search(query, k, reading_groups(caller, None), snapshot=snapshot)
    return SearchResult(
        query=query,
        hits=[
            SearchHit(
                doc_id=hit.unit.doc_id,
                version=hit.unit.version,
                section=_section(snapshot, hit),
                kind=hit.unit.kind,
                start=hit.unit.start,
                end=hit.unit.end,
                text=hit.unit.text,
                score=round(hit.score, 6),
            )
            for hit in hits
        ],
    )


def _section(snapshot: Snapshot, hit: Hit) -> list[str]:
    """The heading path of the section that holds the hit's unit."""
    return list(section_path(snapshot.parsed(hit.unit.doc_id, hit.unit.version), hit.unit.section_id))


def get_document(
    service: Service,
    caller: Caller,
    doc_id: str,
    version: str | None = None,
    start: int | None = None,
    end: int | None = None,
) -> DocumentText:
    """The text of a version the caller may read (its current one by default), or ``[start:end]`` of it.

    A document the caller may not read is "not found", as one that does not exist.
    """
    check_unicode(doc_id, "the doc_id")  # the refusal would echo it
    check_unicode(version or "", "the version")
    snapshot = service.snapshot()
    current = snapshot.current_versions().get(doc_id)
    wanted = version or current
    hidden = NotFoundError(f"no document {doc_id!r}" + (f" at version {version!r}" if version else ""))
    if wanted is None:
        raise hidden
    try:
        acl = snapshot.acl(doc_id, wanted)
        parsed = snapshot.parsed(doc_id, wanted)
    except NotFoundError:
        raise hidden from None
    if not caller.may_read(acl):
        raise hidden
    length = len(parsed.text)
    lo = 0 if start is None else start
    hi = length if end is None else end
    if not 0 <= lo <= hi <= length:
        raise InputError(f"[{lo}:{hi}] is not a span of {doc_id}@{wanted}, which has {length} characters")
    return DocumentText(
        doc_id=doc_id,
        version=wanted,
        current_version=current or "",
        title=parsed.title,
        start=lo,
        end=hi,
        length=length,
        text=parsed.text[lo:hi],
    )


def list_documents(service: Service, caller: Caller) -> DocumentListOut:
    """The documents the caller may read, with their versions."""
    return DocumentListOut(
        documents=[DocumentOut.of(info) for info in service.documents() if caller.may_read(info.acl)]
    )


def replay(service: Service, caller: Caller, run_id: str) -> ReplayOut:
    """Re-run a traced question: its own runs, or any with scope audit, within the caller's groups."""
    if service.traces is None:
        raise NotFoundError("this server does not record traces")
    visible_trace(service.trace, caller, run_id)
    try:
        report = service.replay(run_id)
    except TamperedTraceError as exc:
        raise InputError(f"the trace does not verify: {exc}") from None
    return ReplayOut.of(run_id, report)


def outcome_text(outcome: Outcome) -> str:
    """The outcome as a model reads it: the answer with numbered citations it can quote, or the
    refusal with each missing piece, or both sides of a conflict; never an empty string."""
    head = f"status: {outcome.status}\nrun_id: {outcome.run_id}"
    if outcome.status == "answered" and outcome.answer is not None:
        cites = [
            f"[{c.n}] {c.doc_id}@{c.version} [{c.start}:{c.end}] {' > '.join(c.section)}: {c.quote}"
            for c in outcome.answer.citations
        ]
        return "\n".join([head, "answer:", outcome.answer.text, "citations:", *cites])
    if outcome.status == "conflicting_evidence":
        sides = [
            f"- {conflict.slot}: {side.value!r} in {side.citation.doc_id}@{side.citation.version} "
            f"[{side.citation.start}:{side.citation.end}]: {side.citation.quote}"
            for conflict in outcome.conflicts
            for side in conflict.values
        ]
        refused = "REFUSED: the sources disagree; do not pick one. Both sides, cited:"
        return "\n".join([head, refused, *sides, *_for_the_user(outcome)])
    missing = [f"- {m.kind}: {m.detail}" for m in outcome.missing] or ["- (no piece named)"]
    refused = "REFUSED: the knowledge base does not hold enough to answer. Missing:"
    return "\n".join([head, refused, *missing, *_for_the_user(outcome)])


def _for_the_user(outcome: Outcome) -> list[str]:
    """The refusal's words for the end user, which a model may pass on as they are."""
    message = outcome.user_message()
    return ["message for the user (may be shown as it is):", message] if message else []


def ask_tool_schema(*, strict: bool = False) -> dict[str, Any]:
    """``ask`` as an OpenAI function-calling tool (``tools=[...]`` of a chat completion); ``strict``:
    in the form of OpenAI's strict mode (``agent.doors.api.strict_schema``)."""
    parameters = AskArguments.model_json_schema()
    parameters.pop("title", None)
    parameters.pop("description", None)
    for field in parameters["properties"].values():
        field.pop("title", None)
    function: dict[str, Any] = {"name": "ask", "description": ASK_DESCRIPTION, "parameters": parameters}
    if strict:
        function |= {"parameters": strict_form(parameters), "strict": True}
    return {"type": "function", "function": function}


def run_ask_tool(service: Service, arguments: str | Mapping[str, Any], caller: Caller = PUBLIC) -> str:
    """Answer one ``ask`` tool call (its arguments as the model wrote them, JSON text or parsed) with
    the text the model reads back: the cited answer, or the refusal and what is missing."""
    try:
        parsed = (
            AskArguments.model_validate_json(arguments)
            if isinstance(arguments, str)
            else AskArguments.model_validate(arguments)
        )
    except ValidationError as exc:
        raise InputError(f"bad arguments for ask: {exc.errors()[0]['msg']}") from None
    outcome = ask(service, caller, parsed.question, parsed.groups, parsed.history)
    return outcome_text(outcome)
