"""What every endpoint shares: the service it fronts, the keys, the limits; and the caller dependency."""

from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Annotated, Protocol, TypeVar

import anyio
import anyio.to_thread
from fastapi import Depends
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from evidence_loop.agent.access.keys import LOCAL, Caller, Keyring, Scope
from evidence_loop.agent.access.write_access import Writer
from evidence_loop.agent.doors.api.limits import Limits
from evidence_loop.agent.doors.api.problems import ApiProblem
from evidence_loop.agent.loop.history import HistoryItem
from evidence_loop.agent.loop.replay import ReplayReport
from evidence_loop.agent.outcome import Outcome
from evidence_loop.policies.config import Policy
from evidence_loop.policies.question.followup import Turn
from evidence_loop.tools.errors import TraceStoreUnavailableError
from evidence_loop.tools.search.snapshot import Snapshot
from evidence_loop.tools.store.folder import DocumentInfo, IngestReport
from evidence_loop.tools.types import DocumentInput
from evidence_loop.traces import Trace, TraceStore, VerifyResult

T = TypeVar("T")


class Backend(Protocol):
    """What the API needs from :class:`agent.service.Service`."""

    traces: TraceStore | None
    policy: Policy

    def ask(
        self,
        question: str,
        groups: Collection[str] = ...,
        *,
        caller: str | None = ...,
        timeout_s: float | None = ...,
        history: Sequence[HistoryItem] | None = ...,
    ) -> Outcome: ...
    def turn(
        self, run_id: str, groups: Collection[str], text: str | None = ..., snapshot: Snapshot | None = ...
    ) -> Turn: ...
    def ingest(
        self,
        docs: Iterable[DocumentInput],
        *,
        replace: bool = ...,
        writer: Writer | None = ...,
        source: str | None = ...,
        prune: bool = ...,
        dry_run: bool = ...,
    ) -> IngestReport: ...
    def delete(self, doc_id: str, *, writer: Writer | None = ...) -> None: ...
    def documents(self) -> Sequence[DocumentInfo]: ...
    def snapshot(self) -> Snapshot: ...
    def store_reachable(self) -> bool: ...
    def trace(self, run_id: str) -> Trace: ...
    def shown(self, trace: Trace) -> Trace: ...
    def verify(self, run_id: str) -> VerifyResult: ...
    def replay(self, run_id: str) -> ReplayReport: ...
    def traces_writable(self) -> TraceStoreUnavailableError | None: ...

    @property
    def when_traces_fail(self) -> str: ...


@dataclass(frozen=True, slots=True)
class ApiContext:
    """One app's service, keys (None: unauthenticated local mode) and limits.

    A write's access check runs inside the store's write transaction (``agent.access.write_access``), so
    no write of this or any other process lands between the check and the write.
    """

    service: Backend
    keyring: Keyring | None
    limits: Limits
    ask_slots: anyio.CapacityLimiter

    async def in_thread(self, work: Callable[[], T], *, timeout_s: float | None = None) -> T:
        """Run blocking work in a worker thread; past ``timeout_s`` answer 504 and abandon it.

        Python cannot stop a thread: an abandoned question finishes in the background and is dropped.
        """
        if timeout_s is None:
            return await anyio.to_thread.run_sync(work)
        try:
            with anyio.fail_after(timeout_s):
                return await anyio.to_thread.run_sync(work, abandon_on_cancel=True, limiter=self.ask_slots)
        except TimeoutError:
            raise ApiProblem(
                504, "timeout", "Request timed out", f"no result within {timeout_s:g} s; try again later"
            ) from None


def caller_dependency(ctx: ApiContext) -> Callable[..., Caller]:
    """The dependency that turns ``Authorization: Bearer <key>`` into a :class:`Caller` (or a 401)."""
    bearer = HTTPBearer(auto_error=False, description="an API key created with `evloop keys add`")

    def caller(credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]) -> Caller:
        if ctx.keyring is None:
            return LOCAL
        if credentials is None:
            raise _unauthenticated("send the API key as `Authorization: Bearer <key>`")
        found = ctx.keyring.authenticate(credentials.credentials)
        if found is None:
            raise _unauthenticated("the API key is not valid")
        return found

    return caller


def require(ctx: ApiContext, *scopes: Scope) -> Callable[..., Caller]:
    """A dependency for a caller holding at least one of ``scopes`` (403 otherwise)."""
    authenticated = caller_dependency(ctx)

    def scoped(caller: Annotated[Caller, Depends(authenticated)]) -> Caller:
        if not any(caller.has(scope) for scope in scopes):
            raise ApiProblem(
                403,
                "missing-scope",
                "Missing scope",
                f"this key lacks the scope {' or '.join(repr(s) for s in scopes)}",
            )
        return caller

    return scoped


def _unauthenticated(detail: str) -> ApiProblem:
    challenge = {"WWW-Authenticate": "Bearer"}
    return ApiProblem(401, "unauthenticated", "Unauthenticated", detail, headers=challenge)
