"""The audit console: ``/audit`` (the runs) and ``/audit/runs/{run_id}`` (one run), server-rendered.

Who: a key with scope ``audit``, sent as ``Authorization: Bearer <key>`` or signed in through the
form at ``/audit/login``, which sets an HttpOnly, SameSite=Strict cookie holding the key (Secure
over https). A key sees only runs asked with groups its own cover, and only documents its groups
may read. The console's POSTs (replay, feedback, sign-out) made with the cookie must carry the
page's ``X-CSRF-Token`` (a digest of the key, which another site can neither read nor compute) and
no foreign ``Origin``. Posting feedback needs the ``review`` scope too.

Pages are rendered and sent as ``audit_render`` says (the package's templates, no script or style
from elsewhere, the console's headers); what a page shows is made by ``audit_list`` (the runs
list), ``audit_page`` (one run), ``audit_figures`` (the figures) and ``agent.tuning.review_set`` (the
reviewed runs as an evaluation set).
"""

import hashlib
import hmac
from datetime import UTC, date, datetime
from functools import partial
from typing import Annotated, Any
from urllib.parse import parse_qs, urlencode, urlsplit

from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles

from evidence_loop.agent.access.keys import LOCAL, Caller, Scope
from evidence_loop.agent.doors.api.audit_figures import day_range
from evidence_loop.agent.doors.api.audit_list import (
    MISSING_KINDS,
    REVIEW_CHOICES,
    STATUSES,
    ConsoleRuns,
    ListFilters,
    day_of,
)
from evidence_loop.agent.doors.api.audit_page import ReviewView, review_views, run_view
from evidence_loop.agent.doors.api.audit_render import CONSOLE_HEADERS, HERE, render
from evidence_loop.agent.doors.api.context import ApiContext
from evidence_loop.agent.doors.api.problems import ApiProblem
from evidence_loop.agent.doors.api.routes_feedback import FeedbackIn, record_review, run_reviews
from evidence_loop.agent.doors.api.routes_traces import _replay, visible_trace
from evidence_loop.agent.doors.api.schemas import DOC_ID_CHARS, TraceOut
from evidence_loop.agent.tuning.review_set import CorpusChoice, ReviewSet, review_set, set_zip
from evidence_loop.tools.errors import NotFoundError
from evidence_loop.traces import Trace
from evidence_loop.traces.feedback.feedback import NOTE_CHARS, VERDICTS
from evidence_loop.traces.reading.listing import Cursor
from evidence_loop.traces.records.schema import RUN_ID_PATTERN

COOKIE = "evloop_audit"
CSRF_HEADER = "x-csrf-token"
AuditRunId = Annotated[str, Path(pattern=RUN_ID_PATTERN)]


def csrf_token(key: str) -> str:
    """The token the console's POSTs carry: only the holder of ``key`` can compute it."""
    return hashlib.sha256(b"evloop-audit-csrf\0" + key.encode("utf-8")).hexdigest()


class _Session:
    """The caller of one console request, how it came (bearer, cookie, local), and its CSRF token."""

    def __init__(self, caller: Caller | None, key: str | None, via: str) -> None:
        self.caller, self.key, self.via = caller, key, via

    @property
    def csrf(self) -> str:
        return csrf_token(self.key) if self.key else ""


def audit_router(ctx: ApiContext) -> APIRouter:
    """The console's pages and its JSON helpers (replay, feedback, export)."""
    router = APIRouter(include_in_schema=False)
    kept: dict[str, ConsoleRuns] = {}

    def runs_of() -> ConsoleRuns:
        assert ctx.service.traces is not None
        if "runs" not in kept:  # one per app: its rows and reviews are kept once read
            kept["runs"] = ConsoleRuns(ctx.service.traces)
        return kept["runs"]

    def session(request: Request) -> _Session:
        if ctx.keyring is None:
            return _Session(LOCAL, None, "local")
        header = request.headers.get("authorization", "")
        if header.lower().startswith("bearer "):
            key, via = header[7:].strip(), "bearer"
        else:
            key, via = request.cookies.get(COOKIE, ""), "cookie"
        return _Session(ctx.keyring.authenticate(key) if key else None, key or None, via)

    def auditor(request: Request) -> _Session | Response:
        """The signed-in auditor, or the response that sends the request elsewhere."""
        who = session(request)
        if who.caller is None:
            if who.via == "bearer":
                raise ApiProblem(401, "unauthenticated", "Unauthenticated", "the API key is not valid")
            return RedirectResponse(f"/audit/login?{urlencode({'next': _local_path(request)})}", 303)
        if not who.caller.has("audit"):
            return _render("denied.html", who, status=403, title="Not allowed")
        return who

    def posted(request: Request, scope: Scope = "audit") -> _Session:
        """The caller of a console POST: cookie posts carry the CSRF token and no foreign Origin."""
        who = session(request)
        if who.caller is None:
            raise ApiProblem(401, "unauthenticated", "Unauthenticated", "sign in at /audit/login")
        if who.via == "cookie":
            origin = request.headers.get("origin")
            sent = request.headers.get(CSRF_HEADER, "")
            if (origin and urlsplit(origin).netloc != request.url.netloc) or not hmac.compare_digest(
                sent, who.csrf
            ):
                raise ApiProblem(403, "csrf", "Cross-site request refused", "reload the page and try again")
        if not who.caller.has("audit") or not who.caller.has(scope):
            raise ApiProblem(403, "missing-scope", "Missing scope", f"this key lacks the scope {scope!r}")
        return who

    @router.get("/audit/login", response_class=HTMLResponse)
    def login_form(request: Request, next: str = "/audit") -> Response:
        return _render("login.html", None, title="Sign in", next=_safe_next(next), error="")

    @router.post("/audit/login")
    async def login(request: Request) -> Response:
        form = parse_qs((await request.body()).decode("utf-8", "replace"))
        key, target = form.get("key", [""])[0].strip(), _safe_next(form.get("next", ["/audit"])[0])
        caller = ctx.keyring.authenticate(key) if ctx.keyring is not None and key else None
        if ctx.keyring is not None and (caller is None or not caller.has("audit")):
            error = "That key is not valid." if caller is None else "That key lacks the audit scope."
            return _render("login.html", None, status=401, title="Sign in", next=target, error=error)
        response = RedirectResponse(target, 303)
        if ctx.keyring is not None:
            secure = request.url.scheme == "https"
            response.set_cookie(COOKIE, key, httponly=True, samesite="strict", secure=secure, path="/audit")
        return response

    @router.post("/audit/logout")
    def logout(request: Request) -> Response:
        posted(request)
        response = RedirectResponse("/audit/login", 303)
        response.delete_cookie(COOKIE, path="/audit")
        return response

    @router.get("/audit", response_class=HTMLResponse)
    async def runs(
        request: Request,
        status: Annotated[str, Query(max_length=40)] = "",
        day: Annotated[str, Query(max_length=10)] = "",
        q: Annotated[str, Query(max_length=200)] = "",
        review: Annotated[str, Query(max_length=40)] = "",
        missing: Annotated[str, Query(max_length=40)] = "",
        conversation: Annotated[str, Query(max_length=128)] = "",
        after: Annotated[str, Query(max_length=40)] = "",
    ) -> Response:
        who = auditor(request)
        if not isinstance(who, _Session):
            return who
        filters = ListFilters(status, day, q, review, missing, conversation)
        if ctx.service.traces is None:
            return _render(
                "list.html", who, title="Runs", groups=[], next_url="", off=True, **_choices(filters)
            )
        assert who.caller is not None
        page = partial(runs_of().page, who.caller, filters, Cursor.parse(after) if after else None)
        groups, cursor = await ctx.in_thread(page)
        next_url = f"/audit?{urlencode({**filters.query(), 'after': cursor.text()})}" if cursor else ""
        return _render(
            "list.html", who, title="Runs", groups=groups, next_url=next_url, off=False, **_choices(filters)
        )

    @router.get("/audit/figures", response_class=HTMLResponse)
    async def figures_page(
        request: Request,
        since: Annotated[str, Query(alias="from", max_length=10)] = "",
        until: Annotated[str, Query(alias="to", max_length=10)] = "",
    ) -> Response:
        who = auditor(request)
        if not isinstance(who, _Session):
            return who
        span = day_range(since, until, datetime.now(UTC).date())
        if isinstance(span, str) or ctx.service.traces is None:
            error = span if isinstance(span, str) else "This server records no traces."
            return _render("figures.html", who, status=422 if isinstance(span, str) else 200,
                           title="Figures", figures=None, error=error, since=since, until=until)  # fmt: skip
        assert who.caller is not None
        counted = await ctx.in_thread(partial(runs_of().figures, who.caller, *span))
        return _render("figures.html", who, title="Figures", figures=counted, error="",
                       since=span[0].isoformat(), until=span[1].isoformat())  # fmt: skip

    @router.get("/audit/export/eval")
    async def export_eval(
        request: Request,
        since: Annotated[str, Query(max_length=10)] = "",
        corpus: Annotated[CorpusChoice, Query()] = "all",
    ) -> Response:
        who = auditor(request)
        if not isinstance(who, _Session):
            return who
        assert who.caller is not None
        day = day_of(since)
        if ctx.service.traces is None:
            raise ApiProblem(404, "tracing-off", "Tracing is off", "this server does not record traces")
        reviewed = await ctx.in_thread(partial(_reviewed, ctx, who.caller, day, corpus))
        name = f"reviewed-{datetime.now(UTC).date().isoformat()}"
        headers = {"Content-Disposition": f'attachment; filename="{name}.zip"', **CONSOLE_HEADERS}
        return Response(set_zip(reviewed, name), media_type="application/zip", headers=headers)

    @router.get("/audit/runs/{run_id}", response_class=HTMLResponse)
    async def run_page(request: Request, run_id: AuditRunId) -> Response:
        who = auditor(request)
        if not isinstance(who, _Session):
            return who
        view, reviews = await ctx.in_thread(partial(_run_data, ctx, who, run_id))
        return _render(
            "run.html",
            who,
            title=f"Run {run_id}",
            run=view,
            reviews=reviews,
            verdicts=VERDICTS,
            note_chars=NOTE_CHARS,
            doc_id_chars=DOC_ID_CHARS,
        )

    @router.get("/audit/runs/{run_id}/export")
    async def export(request: Request, run_id: AuditRunId) -> Response:
        who = auditor(request)
        if not isinstance(who, _Session):
            return who
        trace = await ctx.in_thread(partial(_shown, ctx, who, run_id))
        out = TraceOut.of(trace)
        headers = {"Content-Disposition": f'attachment; filename="{run_id}.json"'}
        return Response(out.model_dump_json(indent=1), media_type="application/json", headers=headers)

    @router.post("/audit/runs/{run_id}/replay")
    async def replay(request: Request, run_id: AuditRunId) -> Response:
        who = posted(request)
        assert who.caller is not None
        report = await ctx.in_thread(
            partial(_replay, ctx, who.caller, run_id), timeout_s=ctx.limits.timeout_s
        )
        return JSONResponse(report.model_dump())

    def reviewer(request: Request) -> _Session:
        return posted(request, "review")

    @router.post("/audit/runs/{run_id}/feedback")
    async def feedback(
        run_id: AuditRunId, body: FeedbackIn, who: Annotated[_Session, Depends(reviewer)]
    ) -> Response:
        # The body is read and checked by FastAPI, as on /v1: a bad one is the same 422 problem.
        assert who.caller is not None
        record = await ctx.in_thread(partial(record_review, ctx, who.caller, run_id, body))
        return JSONResponse(record.model_dump(), status_code=201)

    return router


def mount_static(app: Any) -> None:
    """The console's stylesheet and script, served from the package."""
    app.mount("/audit/static", StaticFiles(directory=HERE / "static" / "audit"), name="audit-static")


def _shown(ctx: ApiContext, who: _Session, run_id: str) -> Trace:
    assert who.caller is not None
    return ctx.service.shown(visible_trace(ctx, who.caller, run_id))


def _run_data(ctx: ApiContext, who: _Session, run_id: str) -> tuple[Any, list[ReviewView]]:
    assert who.caller is not None
    caller = who.caller
    trace = visible_trace(ctx, caller, run_id)
    snapshot = ctx.service.snapshot()

    def text_of(doc_id: str, version: str) -> str | None:
        try:
            return snapshot.parsed(doc_id, version).text
        except NotFoundError:
            return None

    def may_read(doc_id: str, version: str) -> bool:
        try:
            return caller.may_read(snapshot.acl(doc_id, version))
        except NotFoundError:  # a version the store no longer holds: nothing to show
            return False

    def may_read_doc(doc_id: str) -> bool:
        version = snapshot.current_versions().get(doc_id)
        return version is not None and may_read(doc_id, version)

    view = run_view(ctx.service.shown(trace), ctx.service.verify(run_id), text_of, may_read)
    reviews = run_reviews(ctx, run_id) if ctx.service.traces is not None else []
    return view, review_views(reviews, may_read_doc)


def _reviewed(ctx: ApiContext, caller: Caller, since: date | None, corpus: CorpusChoice) -> ReviewSet:
    """The reviewed runs ``caller`` may see, as an evaluation set."""
    traces = ctx.service.traces
    assert traces is not None
    return review_set(traces, ctx.service.snapshot(), ctx.service.shown, caller, since=since, corpus=corpus)


def _choices(filters: ListFilters) -> dict[str, Any]:
    """What the list's filter form offers, and what it holds."""
    return {
        "filters": filters,
        "statuses": STATUSES,
        "reviews": REVIEW_CHOICES,
        "kinds": MISSING_KINDS,
    }


def _local_path(request: Request) -> str:
    return request.url.path + (f"?{request.url.query}" if request.url.query else "")


def _safe_next(target: str) -> str:
    """Only a path of this console: never another site after signing in."""
    return target if target.startswith("/audit") and not target.startswith("//") else "/audit"


def _render(name: str, who: _Session | None, *, status: int = 200, **values: Any) -> HTMLResponse:
    return render(
        name,
        status=status,
        csrf=who.csrf if who is not None else "",
        caller=who.caller if who is not None else None,
        signed_in=who is not None and who.via == "cookie",
        **values,
    )
