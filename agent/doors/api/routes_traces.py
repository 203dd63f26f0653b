"""GET /v1/traces/{run_id}, GET /v1/traces/{run_id}/verify, POST /v1/traces/{run_id}/replay.

A replay verifies the trace first: one that fails (a changed record, a file cut short of the end its
run recorded, cited text the store no longer vouches for) is a 409 ``trace-tampered`` naming the
first bad event, and nothing is re-run. One that cites a version whose text a later write replaced
(``?replace=true``) verifies (no tampering) but cannot be re-run as it ran: a 409
``cited-version-replaced`` naming the versions; ``evloop replay --current`` replays it against today.

Who sees a trace: its own key (scope ``ask``), or any key with scope ``audit``; and in both cases
only if the key's groups cover the groups the run read with, so a trace never shows a key text
that its groups could not have read. Any other run id is "not found", whether it exists or not.

A trace of schema 2 cites stored text by offsets and sha256: it is shown with that text read from the
store, and a span whose version the store no longer holds carries ``unresolved`` saying so.
"""

from functools import partial
from typing import Annotated

from fastapi import APIRouter, Depends, Path

from evidence_loop.agent.access import run_access
from evidence_loop.agent.access.keys import Caller
from evidence_loop.agent.doors.api.context import ApiContext, require
from evidence_loop.agent.doors.api.problems import PROBLEM_RESPONSES, ApiProblem
from evidence_loop.agent.doors.api.schemas import CitedVersion, ReplayOut, TraceOut, VerifyOut
from evidence_loop.tools.errors import (
    CitedVersionReplacedError,
    NotFoundError,
    TamperedTraceError,
)
from evidence_loop.traces import Trace
from evidence_loop.traces.records.schema import RUN_ID_PATTERN

RunId = Annotated[str, Path(pattern=RUN_ID_PATTERN, description="the run_id of an outcome")]


def traces_router(ctx: ApiContext) -> APIRouter:
    """The audit endpoints."""
    router = APIRouter(tags=["traces"], responses=PROBLEM_RESPONSES)
    reader = require(ctx, "ask", "audit")

    @router.get("/v1/traces/{run_id}", response_model=TraceOut, summary="Read a run's trace")
    async def get_trace(run_id: RunId, caller: Annotated[Caller, Depends(reader)]) -> TraceOut:
        trace = await ctx.in_thread(partial(_shown_trace, ctx, caller, run_id))
        return TraceOut.of(trace)

    @router.get("/v1/traces/{run_id}/verify", response_model=VerifyOut, summary="Check a trace's hash chain")
    async def verify_trace(run_id: RunId, caller: Annotated[Caller, Depends(reader)]) -> VerifyOut:
        return await ctx.in_thread(partial(_verify, ctx, caller, run_id))

    @router.post("/v1/traces/{run_id}/replay", response_model=ReplayOut, summary="Re-run a traced question")
    async def replay_trace(run_id: RunId, caller: Annotated[Caller, Depends(reader)]) -> ReplayOut:
        """Re-run the loop pinned to the recorded corpus and LLM replies; report the first difference."""
        return await ctx.in_thread(partial(_replay, ctx, caller, run_id), timeout_s=ctx.limits.timeout_s)

    return router


def visible_trace(ctx: ApiContext, caller: Caller, run_id: str) -> Trace:
    """The trace of ``run_id`` if this caller may see it (``agent.access.run_access``); the same 404
    whether it is absent, unwritten or hidden."""
    if ctx.service.traces is None:
        raise ApiProblem(404, "tracing-off", "Tracing is off", "this server does not record traces")
    try:
        return run_access.visible_trace(ctx.service.trace, caller, run_id)
    except NotFoundError:
        raise ApiProblem(404, "not-found", "Not found", f"no trace for run {run_id!r}") from None


def _shown_trace(ctx: ApiContext, caller: Caller, run_id: str) -> Trace:
    """The visible trace with the text its steps cite read from the store (or why it cannot be)."""
    return ctx.service.shown(visible_trace(ctx, caller, run_id))


def _verify(ctx: ApiContext, caller: Caller, run_id: str) -> VerifyOut:
    visible_trace(ctx, caller, run_id)
    result = ctx.service.verify(run_id)
    return VerifyOut(
        run_id=run_id,
        ok=result.ok,
        complete=result.complete,
        first_bad_seq=result.first_bad_seq,
        reason=result.reason,
        events=result.events,
        final_hash=result.final_hash,
        replaced=[CitedVersion(doc_id=doc_id, version=version) for doc_id, version in result.replaced],
    )


def _replay(ctx: ApiContext, caller: Caller, run_id: str) -> ReplayOut:
    visible_trace(ctx, caller, run_id)
    try:
        report = ctx.service.replay(run_id)
    except TamperedTraceError as exc:  # a changed record would otherwise read as a divergence
        raise ApiProblem(409, "trace-tampered", "Trace does not verify", str(exc)) from None
    except CitedVersionReplacedError as exc:  # not tampering, but the run's text is gone
        raise ApiProblem(409, "cited-version-replaced", "Cited version replaced", str(exc)) from None
    return ReplayOut.of(run_id, report)
