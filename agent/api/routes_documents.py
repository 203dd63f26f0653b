"""POST /v1/documents, GET /v1/documents, DELETE /v1/documents/{doc_id} (scope ``ingest``).

A key's groups bound what it manages as well as what it reads: it lists only documents it may
read, and writes (creates, replaces, deletes) only documents whose every ACL group it holds, public
ones only with the ``publish`` scope (the rule: agent/write_access.py, checked inside the store's
write transaction). No answer depends on a document the key may not read, so none tells whether
one exists: a doc_id the key cannot read is "not found" to delete and "not writable" to write,
whether it is free or held. Only a key whose groups cover every group of the keys file (or the
local caller) can know that a doc_id is free, so only such a key creates new doc_ids; the others
rewrite the documents they can read. Ingestion runs in a worker thread while questions go on: the
store publishes the new snapshot in one step.
"""

from collections.abc import Sequence
from functools import partial
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request, Response

from evidence_loop.agent.api.auth import Caller
from evidence_loop.agent.api.context import ApiContext, require
from evidence_loop.agent.api.problems import PROBLEM_RESPONSES
from evidence_loop.agent.api.schemas import DocumentList, DocumentOut, IngestOut, Skipped
from evidence_loop.agent.api.uploads import read_documents
from evidence_loop.agent.write_access import Writer
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

    @router.get("/v1/documents", response_model=DocumentList, summary="List the documents this key may read")
    async def list_documents(caller: Annotated[Caller, Depends(ingester)]) -> DocumentList:
        infos = await ctx.in_thread(ctx.service.documents)
        return DocumentList(documents=[DocumentOut.of(i) for i in infos if caller.may_read(i.acl)])

    @router.delete("/v1/documents/{doc_id:path}", status_code=204, summary="Stop serving a document")
    async def delete_document(doc_id: str, caller: Annotated[Caller, Depends(ingester)]) -> Response:
        """Its versions stay stored for replay; 404 for a doc_id this key may not read, 403 for one
        whose ACL has a group the key does not hold (or a public one, without ``publish``)."""
        await ctx.in_thread(partial(_delete, ctx, caller, doc_id_form(doc_id)))
        return Response(status_code=204)

    return router


def _ingest(ctx: ApiContext, caller: Caller, docs: Sequence[DocumentInput], replace: bool) -> IngestOut:
    report = ctx.service.ingest(docs, replace=replace, writer=_writer(ctx, caller))
    return IngestOut(
        documents=report.documents,
        versions_added=report.versions_added,
        unchanged=report.unchanged,
        skipped=[Skipped(doc_id=doc_id, reason=reason) for doc_id, reason in report.skipped],
        units=report.units,
        seconds=round(report.seconds, 6),
        generation=report.generation,
    )


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
