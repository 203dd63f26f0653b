"""POST /v1/documents, GET /v1/documents, DELETE /v1/documents/{doc_id} (scope ``ingest``).

A key's groups bound what it manages as well as what it reads: it lists only documents it may
read, deletes only those (any other doc_id is "not found"), and writes only documents whose ACL
its groups satisfy. No answer depends on a document the key may not read, so none tells whether
one exists: a doc_id the key cannot read is "not found" to delete and "not writable" to write,
whether it is free or held. Only a key whose groups cover every group of the keys file (or the
local caller) can know that a doc_id is free, so only such a key creates new doc_ids; the others
rewrite the documents they can read. Ingestion runs in a worker thread while questions go on: the
store publishes the new snapshot in one step.
"""

from collections.abc import Callable, Sequence
from functools import partial
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request, Response

from evidence_loop.agent.api.auth import Caller
from evidence_loop.agent.api.context import ApiContext, require
from evidence_loop.agent.api.problems import PROBLEM_RESPONSES, ApiProblem
from evidence_loop.agent.api.schemas import DocumentList, DocumentOut, IngestOut, Skipped
from evidence_loop.agent.api.uploads import read_documents
from evidence_loop.tools.errors import NotFoundError
from evidence_loop.tools.store import DocumentInfo
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
        return DocumentList(documents=[_out(i) for i in infos if caller.may_read(i.acl)])

    @router.delete("/v1/documents/{doc_id:path}", status_code=204, summary="Stop serving a document")
    async def delete_document(doc_id: str, caller: Annotated[Caller, Depends(ingester)]) -> Response:
        """Its versions stay stored for replay; 404 for a doc_id this key may not read."""
        await ctx.in_thread(partial(_delete, ctx, caller, doc_id_form(doc_id)))
        return Response(status_code=204)

    return router


def _ingest(ctx: ApiContext, caller: Caller, docs: Sequence[DocumentInput], replace: bool) -> IngestOut:
    with ctx.write_lock:
        _check_writable(ctx, caller, docs)
        report = ctx.service.ingest(docs, replace=replace)
    return IngestOut(
        documents=report.documents,
        versions_added=report.versions_added,
        unchanged=report.unchanged,
        skipped=[Skipped(doc_id=doc_id, reason=reason) for doc_id, reason in report.skipped],
        units=report.units,
        seconds=round(report.seconds, 6),
        generation=report.generation,
    )


def _check_writable(ctx: ApiContext, caller: Caller, docs: Sequence[DocumentInput]) -> None:
    """403 unless the key may read every incoming document and may write over its doc_id.

    A doc_id is writable when its live document is one the key may read, or, for a key that may
    create doc_ids, when no document holds it; never over a stored version the key may not read.
    The refusal is one and the same for a free doc_id and for one held by a hidden document.
    """
    if caller.groups is None:
        return
    for doc in docs:
        if not caller.may_read(doc.acl):
            raise ApiProblem(
                403,
                "acl-not-granted",
                "ACL not granted",
                f"document {doc.doc_id!r}: a key may only write documents its own groups can read",
            )
    creates = _may_create(ctx, caller)
    snapshot = ctx.service.snapshot()
    live = {info.doc_id: info.acl for info in ctx.service.documents()}
    for doc in docs:
        acl = live.get(doc.doc_id)
        over = caller.may_read(acl) if acl is not None else creates
        if not over or not caller.may_read(_stored_acl(snapshot.acl, doc.doc_id, doc.version)):
            detail = (
                f"document {doc.doc_id!r} cannot be written with this key: a key rewrites the documents "
                "it can read, and creates new doc_ids only if its groups cover every group of the keys file"
            )
            raise ApiProblem(403, "doc-id-not-writable", "Document not writable", detail)


def _may_create(ctx: ApiContext, caller: Caller) -> bool:
    """Whether the key reads every group any key of the keys file reads: only then can it tell that a
    doc_id is free rather than held by a document hidden from it (see the module docstring)."""
    if ctx.keyring is None:
        return True
    every: set[str] = set()
    for key in ctx.keyring.keys:
        every |= key.groups
    return caller.covers(every)


def _stored_acl(acl_of: Callable[[str, str], tuple[str, ...]], doc_id: str, version: str) -> tuple[str, ...]:
    """The ACL of an already stored version (current or not); () when there is none."""
    try:
        return acl_of(doc_id, version)
    except NotFoundError:
        return ()


def _delete(ctx: ApiContext, caller: Caller, doc_id: str) -> None:
    with ctx.write_lock:
        info = next((i for i in ctx.service.documents() if i.doc_id == doc_id), None)
        if info is None or not caller.may_read(info.acl):
            raise ApiProblem(404, "not-found", "Not found", f"no document {doc_id!r} in the store")
        ctx.service.delete(doc_id)


def _out(info: DocumentInfo) -> DocumentOut:
    return DocumentOut(
        doc_id=info.doc_id,
        title=info.title,
        current_version=info.current_version,
        versions=list(info.versions),
        units=info.units,
        acl=list(info.acl),
    )
