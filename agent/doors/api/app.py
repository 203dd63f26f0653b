"""The FastAPI application: ``create_app(service, keys, limits)`` wires the routers to one service.

``from_env`` builds the same app inside each uvicorn worker process (``evloop serve --workers N``),
from the settings ``agent.doors.commands.serve`` puts in the environment.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from starlette.types import ASGIApp

from evidence_loop.agent import logs
from evidence_loop.agent.access.keys import Keyring
from evidence_loop.agent.doors.api import problems
from evidence_loop.agent.doors.api.context import ApiContext, Backend
from evidence_loop.agent.doors.api.hosts import HostOriginMiddleware, HostRules
from evidence_loop.agent.doors.api.limits import BodyLimitMiddleware, Limits
from evidence_loop.agent.doors.api.problems import PROBLEM_JSON, Problem
from evidence_loop.agent.doors.api.routes_ask import ask_router, probe_router
from evidence_loop.agent.doors.api.routes_audit import audit_router, mount_static
from evidence_loop.agent.doors.api.routes_documents import documents_router
from evidence_loop.agent.doors.api.routes_feedback import feedback_router
from evidence_loop.agent.doors.api.routes_traces import traces_router
from evidence_loop.agent.doors.api.schemas import DocumentBatch, DocumentIn
from evidence_loop.agent.loop.tracing import code_version
from evidence_loop.agent.settings import TRACES_OFF, ServeWorker
from evidence_loop.policies.config import Policy
from evidence_loop.tools.store.pg import is_url

TITLE = "evidence-loop"
DESCRIPTION = """\
Grounded answers for support chatbots. `POST /v1/ask` returns one of three outcomes, all with
HTTP 200: `answered` (every sentence cited to character offsets), `insufficient_evidence` (what
is missing) or `conflicting_evidence` (both sources cited). Send `Authorization: Bearer <key>`;
a key's groups bound what it can read. Every error is `application/problem+json`."""


class _Api(FastAPI):
    def build_middleware_stack(self) -> ASGIApp:
        # Around Starlette's own outermost layer, which re-raises every error it has answered.
        return problems.KeepConnection(super().build_middleware_stack())


def create_app(
    service: Backend, keys: Keyring | None, limits: Limits | None = None, hosts: HostRules | None = None
) -> FastAPI:
    """The HTTP API over ``service``; ``keys`` None serves every request as the local caller.

    ``hosts``: the Host and Origin headers answered (default: loopback, see ``api.hosts``)."""
    limits = limits or Limits()
    ctx = ApiContext(service, keys, limits, anyio.CapacityLimiter(limits.concurrent_asks))
    # No /docs or /redoc: FastAPI's pages load Swagger UI and ReDoc from a CDN (blank offline, and
    # outside any content policy of ours); /openapi.json is served, the docs site renders it.
    app = _Api(title=TITLE, version=code_version(), description=DESCRIPTION, docs_url=None, redoc_url=None)
    routers = (
        ask_router(ctx),
        documents_router(ctx),
        traces_router(ctx),
        feedback_router(ctx),
        probe_router(ctx),
    )
    for router in (*routers, audit_router(ctx)):
        app.include_router(router)
    mount_static(app)
    problems.install(app)
    app.add_middleware(BodyLimitMiddleware, limit=limits.body_bytes)
    app.add_middleware(HostOriginMiddleware, rules=hosts or HostRules())  # the last added runs first

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = _openapi_document(app)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    return app


def _openapi_document(app: FastAPI) -> dict[str, Any]:
    """FastAPI's document, plus the hand-read request bodies' schemas and problem+json errors."""
    doc = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
    schemas: dict[str, Any] = doc.setdefault("components", {}).setdefault("schemas", {})
    for model in (DocumentIn, DocumentBatch, Problem):
        schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
        schemas.update(schema.pop("$defs", {}))
        schemas[model.__name__] = schema
    problem = {"schema": {"$ref": "#/components/schemas/Problem"}}
    for operations in doc.get("paths", {}).values():
        for operation in operations.values():
            for status, response in operation.get("responses", {}).items():
                if status[0] in "45":
                    response["content"] = {PROBLEM_JSON: problem}
    return doc


def from_env() -> FastAPI:
    """The app of one uvicorn worker: opens its own store from the ``EVLOOP_SERVE_*`` environment."""
    from evidence_loop.agent.service import (
        Service,
    )  # the worker's own import; keeps this module free of the store

    worker = ServeWorker.from_environ()
    limits = Limits(**json.loads(worker.limits))
    store = worker.index if is_url(worker.index) else Path(worker.index)
    traces = worker.traces
    logs.configure(worker.log_level)
    # the policy `evloop serve` resolved (its flags, EVLOOP_POLICY, the configuration file), as is
    policy = Policy.from_dict(json.loads(worker.policy)) if worker.policy else None
    service = Service.open(
        store,
        traces=Path(traces) if traces and traces != TRACES_OFF else None,
        tracing_on=traces != TRACES_OFF,  # `serve --no-trace`: a folder named "off" is not meant
        question_chars=limits.question_chars,
        when_traces_fail="answer-untraced" if worker.when_traces_fail == "answer-untraced" else "refuse",
        policy=policy,
    )
    service.settle()
    hosts = HostRules.from_json(worker.hosts)  # none given: loopback names only
    keys_path = worker.keys
    return create_app(service, Keyring.load(Path(keys_path)) if keys_path else None, limits, hosts)
