"""POST /v1/runs/{run_id}/feedback and GET /v1/runs/{run_id}/feedback: reviewers' verdicts on runs.

A key with scope ``review`` may judge any finished run whose groups its own cover (the runs its
groups may read); any other run id is "not found", as for traces. Each verdict is appended to the
trace store's feedback log (``traces.feedback.feedback``), hash-linked to the run's final hash; a later
verdict on the same run supersedes the earlier one and never rewrites it.
"""

from datetime import UTC, datetime
from functools import partial
from typing import Annotated

from fastapi import APIRouter, Depends
from pydantic import Field

from evidence_loop.agent.access.keys import Caller
from evidence_loop.agent.doors.api.context import ApiContext, require
from evidence_loop.agent.doors.api.problems import PROBLEM_RESPONSES, ApiProblem
from evidence_loop.agent.doors.api.routes_traces import RunId
from evidence_loop.agent.doors.api.schemas import DOC_ID_CHARS, Text, _Strict
from evidence_loop.tools.errors import NotFoundError
from evidence_loop.traces import Trace
from evidence_loop.traces.feedback.feedback import (
    NOTE_CHARS,
    FeedbackEntry,
    FeedbackLog,
    FeedbackRecord,
    Verdict,
)
from evidence_loop.traces.records.schema import utc_timestamp


class FeedbackIn(_Strict):
    """A reviewer's verdict on one run."""

    verdict: Verdict = Field(description="what the run should have done, or that it was right")
    doc_id: Text | None = Field(
        default=None, max_length=DOC_ID_CHARS, description="the document with the right answer"
    )
    note: Text | None = Field(default=None, max_length=NOTE_CHARS, description="free text for the team")


class FeedbackList(_Strict):
    """Every verdict posted about a run, oldest first; the last one stands."""

    run_id: str
    feedback: list[FeedbackRecord]


def feedback_router(ctx: ApiContext) -> APIRouter:
    """The review endpoints."""
    router = APIRouter(tags=["feedback"], responses=PROBLEM_RESPONSES)
    reviewer = require(ctx, "review")
    reader = require(ctx, "review", "audit")

    @router.post(
        "/v1/runs/{run_id}/feedback", status_code=201, response_model=FeedbackRecord, summary="Review a run"
    )
    async def post_feedback(
        run_id: RunId, body: FeedbackIn, caller: Annotated[Caller, Depends(reviewer)]
    ) -> FeedbackRecord:
        """Record a verdict on a finished run, linked to its final hash; 201 with the stored record."""
        return await ctx.in_thread(partial(record_review, ctx, caller, run_id, body))

    @router.get("/v1/runs/{run_id}/feedback", response_model=FeedbackList, summary="A run's reviews")
    async def get_feedback(run_id: RunId, caller: Annotated[Caller, Depends(reader)]) -> FeedbackList:
        return await ctx.in_thread(partial(_reviews, ctx, caller, run_id))

    return router


def reviewable_trace(ctx: ApiContext, caller: Caller, run_id: str) -> Trace:
    """The trace of ``run_id`` if the caller's groups cover the run's; the same 404 otherwise."""
    if ctx.service.traces is None:
        raise ApiProblem(404, "tracing-off", "Tracing is off", "this server does not record traces")
    try:
        trace = ctx.service.trace(run_id)
    except NotFoundError:
        trace = None
    if trace is None or not caller.covers(trace.header.groups):
        raise ApiProblem(404, "not-found", "Not found", f"no trace for run {run_id!r}")
    return trace


def feedback_log(ctx: ApiContext) -> FeedbackLog:
    assert ctx.service.traces is not None
    return ctx.service.traces.feedback


def record_review(ctx: ApiContext, caller: Caller, run_id: str, body: FeedbackIn) -> FeedbackRecord:
    """Append the caller's verdict on a finished run it may read (409 for a run still unfinished)."""
    trace = reviewable_trace(ctx, caller, run_id)
    if trace.footer is None:
        raise ApiProblem(409, "run-unfinished", "Run unfinished", f"run {run_id!r} has no end to review")
    entry = FeedbackEntry(
        run_id=run_id,
        run_hash=trace.footer.hash,
        verdict=body.verdict,
        created_at=utc_timestamp(datetime.now(UTC)),
        reviewer=caller.name,
        doc_id=body.doc_id,
        note=body.note,
    )
    return feedback_log(ctx).append(entry)


def run_reviews(ctx: ApiContext, run_id: str) -> list[FeedbackRecord]:
    return [r for r in feedback_log(ctx).records() if r.run_id == run_id]


def _reviews(ctx: ApiContext, caller: Caller, run_id: str) -> FeedbackList:
    reviewable_trace(ctx, caller, run_id)
    return FeedbackList(run_id=run_id, feedback=run_reviews(ctx, run_id))
