"""The documents, with the scope ``ingest``:

    POST /v1/documents              add or update a batch (all or nothing)
    PUT /v1/documents/{doc_id}      one document's text: a new version when it changed, else nothing
    DELETE /v1/documents/{doc_id}   retire it: no longer answered, its versions kept for replay
    POST /v1/sync?source=NAME       a batch that is the whole of a source: each document added,
                                    changed or left alone, and with prune=true the source's documents
                                    missing from it retired; dry_run=true says what it would do
    GET /v1/documents               the documents the key may read

A document sent without a version label is labelled by the store (tools/store/labels.py): sending
the same text again changes nothing, another text becomes the next version.

A key's groups bound what it manages as well as what it reads: it lists only documents it may
read, and writes (creates, replaces, deletes) only documents whose every ACL group it holds, public
ones only with the ``publish`` scope (the rule: agent/access/write_access.py, checked inside the store's
write transaction). No answer depends on a document the key may not read, so none tells whether
one exists: a doc_id the key cannot read is "not found" to delete and "not writable" to write,
whether it is free or held. Only a key whose groups cover every group of the keys file (or the
local caller) can know that a doc_id is free, so only such a key creates new doc_ids, besides a key
with ``publish`` creating a public document (agent/access/write_access.py); the others rewrite the
documents they can read. Ingestion runs in a worker thread while questions go on: the
store publishes the new snapshot in one step.
"""

from collections.abc import Sequence
from functools import partial
from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, Path, Query, Request, Response

from evidence_loop.agent.access.keys import Caller
from evidence_loop.agent.access.write_access import Writer
from evidence_loop.agent.doors.api.context import ApiContext, require
from evidence_loop.agent.doors.api.problems import PROBLEM_RESPONSES, ApiProblem
from evidence_loop.agent.doors.api.schemas import (
    DOC_ID_CHARS,
    DocumentBody,
    DocumentList,
    DocumentOut,
    IngestOut,
)
from evidence_loop.agent.doors.api.uploads import read_documents
from evidence_loop.tools.types import DocumentInput, doc_id_form

_REF = "#/components/schemas/{}"
# The body is read by hand (three content types share one path), so OpenAPI is told its shape here.
_BODY_DOC: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "content": {
            "application/json": {
                "schema": {"oneOf": [{"$ref": _REF.format(name)} for name in ("DocumentIn", "DocumentBatch")]}
            },
            "application/x-ndjson": {"schema": {"type": "string", "description": "corpus.jsonl lines"}},
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "required": ["file"],
                    "additionalProperties": False,
                    "properties": {
                        "file": {"type": "array", "items": {"type": "string", "format": "binary"}},
                        "acl": {"type": "string", "description": "comma-separated groups"},
                        "version": {"type": "string"},
                        "doc_id": {"type": "string", "description": "for a single file"},
                    },
                }
            },
        },
    }
}


def documents_router(ctx: ApiContext) -> APIRouter:
    """The document management endpoints."""
    router = APIRouter(tags=["documents"], responses=PROBLEM_RESPONSES)
    ingester = require(ctx, "ingest")

    @router.post("/v1/documents", response_model=IngestOut, summary="Add documents", openapi_extra=_BODY_DOC)
    async def add_documents(
        request: Request,
        caller: Annotated[Caller, Depends(ingester)],
        replace: Annotated[bool, Query(description="overwrite a stored version whose text changed")] = False,
    ) -> IngestOut:
        """One document or a batch, all or nothing; questions keep their snapshot meanwhile."""
        docs = await read_documents(request, ctx.limits.batch_documents)
        return await ctx.in_thread(partial(_ingest, ctx, caller, docs, replace))

    @router.post(
        "/v1/sync",
        response_model=IngestOut,
        summary="Sync the documents of a source",
        openapi_extra=_BODY_DOC,
    )
    async def sync_documents(
        request: Request,
        caller: Annotated[Caller, Depends(ingester)],
        source: Annotated[str, Query(min_length=1, max_length=512, description="the source's name")],
        prune: Annotated[bool, Query(description="retire the source's documents not in the batch")] = False,
        dry_run: Annotated[bool, Query(description="say what would change; write nothing")] = False,
    ) -> IngestOut:
        """The batch is the whole of ``source``: each document is added, changed (a new version, the
        old kept) or left alone; with ``prune``, the documents synced from ``source`` before that are
        not in the batch are retired (not answered, their versions kept). All or nothing."""
        if not source.strip() or not source.isprintable():
            raise ApiProblem(422, "bad-source", "Bad source", "source must be a name of printable characters")
        docs = await read_documents(request, ctx.limits.batch_documents)
        work = partial(_ingest, ctx, caller, docs, source=source, prune=prune, dry_run=dry_run)
        return await ctx.in_thread(work)

    @router.put("/v1/documents/{doc_id:path}", response_model=IngestOut, summary="Write one document")
    async def put_document(
        doc_id: Annotated[str, Path(max_length=DOC_ID_CHARS)],  # as long as POST takes it
        body: Annotated[DocumentBody, Body()],
        caller: Annotated[Caller, Depends(ingester)],
    ) -> IngestOut:
        """A new version when the text changed (the next integer, unless ``version`` names one), nothing
        when it did not; the old versions stay stored for replay."""
        doc = body.to_input(doc_id_form(doc_id))
        return await ctx.in_thread(partial(_ingest, ctx, caller, [doc]))

    @router.get("/v1/documents", response_model=DocumentList, summary="List the documents this key may read")
    async def list_documents(caller: Annotated[Caller, Depends(ingester)]) -> DocumentList:
        infos = await ctx.in_thread(ctx.service.documents)
        return DocumentList(documents=[DocumentOut.of(i) for i in infos if caller.may_read(i.acl)])

    @router.delete("/v1/documents/{doc_id:path}", status_code=204, summary="Retire a document")
    async def delete_document(doc_id: str, caller: Annotated[Caller, Depends(ingester)]) -> Response:
        """No longer answered; its versions stay stored for replay and audit. 404 for a doc_id this
        key may not read, 403 for one whose ACL has a group the key does not hold (or a public one,
        without ``publish``)."""
        await ctx.in_thread(partial(_delete, ctx, caller, doc_id_form(doc_id)))
        return Response(status_code=204)

    return router


def _ingest(
    ctx: ApiContext,
    caller: Caller,
    docs: Sequence[DocumentInput],
    replace: bool = False,
    *,
    source: str | None = None,
    prune: bool = False,
    dry_run: bool = False,
) -> IngestOut:
    writer = _writer(ctx, caller)
    report = ctx.service.ingest(
        docs, replace=replace, writer=writer, source=source, prune=prune, dry_run=dry_run
    )
    return IngestOut.of(report)


def _writer(ctx: ApiContext, caller: Caller) -> Writer:
    """The caller as a writer: its groups, its ``publish`` scope, and whether it creates doc_ids."""
    return Writer(caller.name, caller.groups, publish=caller.has("publish"), creates=_may_create(ctx, caller))


def _may_create(ctx: ApiContext, caller: Caller) -> bool:
    """Whether the key reads every group any key of the keys file reads: only then can it tell that a
    doc_id is free rather than held by a document hidden from it (see the module docstring)."""
    if ctx.keyring is None:
        return True
    every: set[str] = set()
    for key in ctx.keyring.keys:
        every |= key.groups
    return caller.covers(every)


def _delete(ctx: ApiContext, caller: Caller, doc_id: str) -> None:
    ctx.service.delete(doc_id, writer=_writer(ctx, caller))
