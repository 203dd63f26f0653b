"""POST /v1/ask, and the probes GET /healthz and GET /readyz."""

import logging
from functools import partial
from typing import Annotated, Literal

from fastapi import APIRouter, Depends

from evidence_loop.agent.access.keys import Caller, GroupsNotGranted, narrow
from evidence_loop.agent.doors.api.context import ApiContext, require
from evidence_loop.agent.doors.api.problems import PROBLEM_RESPONSES, ApiProblem
from evidence_loop.agent.doors.api.routes_traces import visible_trace
from evidence_loop.agent.doors.api.schemas import AskOptions, AskRequest, Health, HistoryTurn, Ready
from evidence_loop.agent.outcome import Outcome
from evidence_loop.agent.service import check_question
from evidence_loop.policies.question.followup import Turn
from evidence_loop.tools.errors import EvidenceLoopError, InputError, TraceStoreUnavailableError

READY_PROBE = "ready"
# Seconds a client waits before asking again while traces cannot be written (space takes an operator).
TRACE_RETRY_AFTER_S = 30
log = logging.getLogger("evidence_loop.api")


def ask_router(ctx: ApiContext) -> APIRouter:
    """The question endpoint: every outcome, refusals included, is a 200."""
    router = APIRouter(tags=["ask"], responses=PROBLEM_RESPONSES)
    asker = require(ctx, "ask")

    @router.post("/v1/ask", response_model=Outcome, summary="Answer a question from the knowledge base")
    async def ask(body: AskRequest, caller: Annotated[Caller, Depends(asker)]) -> Outcome:
        """Answered, insufficient_evidence or conflicting_evidence, all with HTTP 200 and a ``run_id``.

        The caller's key bounds the groups the question is read with; ``groups`` may only narrow them.
        """
        check_question(body.question, ctx.limits.question_chars)  # refused before it takes a thread
        groups = reading_groups(caller, body.groups)
        timeout = min(body.options.timeout_s or ctx.limits.timeout_s, ctx.limits.timeout_s)
        # The run stops itself at its next step once the time is up, so an abandoned thread is freed too.
        work = partial(_ask, ctx, caller, body, groups, timeout)
        try:
            outcome = await ctx.in_thread(work, timeout_s=timeout)
        except TraceStoreUnavailableError as exc:
            raise trace_store_unavailable(exc) from None
        return shaped(outcome, body.options)

    return router


def _ask(
    ctx: ApiContext, caller: Caller, body: AskRequest, groups: tuple[str, ...], timeout: float
) -> Outcome:
    turns = history_turns(ctx, caller, groups, body.history or [])
    return ctx.service.ask(body.question, groups, caller=caller.name, timeout_s=timeout, history=turns)


def history_turns(
    ctx: ApiContext, caller: Caller, groups: tuple[str, ...], history: list[str | HistoryTurn]
) -> list[Turn]:
    """The earlier turns; a run named by id is read back only when this key may see its trace (the
    trace routes' 404 otherwise), and only its documents the request's groups may read come along."""
    turns: list[Turn] = []
    for item in history:
        if isinstance(item, str):
            turns.append(Turn(item))
        elif item.run_id is not None:
            visible_trace(ctx, caller, item.run_id)
            turns.append(ctx.service.turn(item.run_id, groups, item.question))
        elif item.question is not None:
            turns.append(Turn(item.question))
        else:
            raise InputError("a history turn needs its question or its run_id")
    return turns


def reading_groups(caller: Caller, requested: list[str] | None) -> tuple[str, ...]:
    """The groups to read with, or 403 when the request names one the key does not hold."""
    try:
        return narrow(caller, requested)
    except GroupsNotGranted as exc:
        raise ApiProblem(
            403,
            "groups-not-granted",
            "Groups not granted",
            f"this key does not hold the groups: {', '.join(exc.extra)}; "
            "a request may only narrow its key's groups",
        ) from None


def shaped(outcome: Outcome, options: AskOptions) -> Outcome:
    """The outcome with the parts the caller asked to leave out removed."""
    if not options.include_evidence:
        return outcome.model_copy(update={"evidence": []})
    if not options.include_steps:
        evidence = [e.model_copy(update={"steps": []}) for e in outcome.evidence]
        return outcome.model_copy(update={"evidence": evidence})
    return outcome


def probe_router(ctx: ApiContext) -> APIRouter:
    """Liveness and readiness, unauthenticated so that an orchestrator can call them."""
    router = APIRouter(tags=["probes"], responses=PROBLEM_RESPONSES)

    @router.get("/healthz", response_model=Health, summary="The process is up")
    async def healthz() -> Health:
        return Health()

    @router.get(
        "/readyz",
        response_model=Ready,
        response_model_exclude_none=True,
        summary="The index is loaded and readable",
    )
    async def readyz() -> Ready:
        """503 problem while the index cannot be opened or searched, or while a run's trace cannot be
        written (unless the server answers untraced: ``--when-traces-fail answer-untraced``)."""
        return await ctx.in_thread(partial(_readiness, ctx))

    return router


def trace_store_unavailable(exc: TraceStoreUnavailableError) -> ApiProblem:
    """The 503 of a run refused because its trace cannot be written (fail closed: no answer without
    its audit record); the server log names the folder and the cause, the caller learns when to retry."""
    log.error("trace store unavailable: %s", exc)
    return ApiProblem(
        503,
        "trace-store-unavailable",
        "Trace store unavailable",
        "this run's audit record could not be written, so no answer is given; try again later",
        headers={"Retry-After": str(TRACE_RETRY_AFTER_S)},
    )


def _readiness(ctx: ApiContext) -> Ready:
    policy = ctx.service.policy
    try:
        ctx.service.snapshot().search(READY_PROBE, 1, **policy.recall_options())
    except EvidenceLoopError:
        raise
    except Exception as exc:  # an unreadable database or index file: not ready, whatever the cause
        raise ApiProblem(503, "index-unavailable", "Index unavailable", "the index cannot be read") from exc
    failure = ctx.service.traces_writable()
    if failure is not None and ctx.service.when_traces_fail == "refuse":
        raise trace_store_unavailable(failure)
    # No generation and no document count: both move when a restricted document is written.
    store: Literal["unreachable"] | None = None if ctx.service.store_reachable() else "unreachable"
    return Ready(store=store, policy=policy.digest())
