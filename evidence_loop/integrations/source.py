"""Where a retriever's outcomes come from: a :class:`Service` in process, or ``evloop serve`` over HTTP.

Only the standard library, pydantic and httpx2 (already dependencies): the framework packages are
imported by the modules that adapt to them. Each call asks once and gets its own outcome; nothing a
call returns is shared with another (``Retrieved``, the documents' metadata), and what a retriever
remembers of its last call (``LastOutcomes``) is kept per thread and per asyncio task.
"""

from __future__ import annotations

import asyncio
import threading
import warnings
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

import httpx2

from evidence_loop.agent.loop.history import HistoryItem
from evidence_loop.agent.outcome import Evidence, Outcome
from evidence_loop.agent.service import Service
from evidence_loop.policies.question.followup import Turn
from evidence_loop.tools.errors import EvidenceLoopError, InputError

DEFAULT_TIMEOUT_S = 60.0
OutcomeCallback = Callable[[Outcome], None]
Earlier = HistoryItem | Outcome
"""An earlier turn as a retriever takes it: its question, ``{"question": ..., "run_id": ...}``, or the
outcome an earlier call returned (its question and run id)."""
D = TypeVar("D")
LAST_OUTCOME_DEPRECATED = (
    "last_outcome is the last outcome of this thread or asyncio task only; use the per-call "
    "outcome instead: ask()/aask() return it with the documents, and each document's "
    "metadata['outcome'] holds it"
)


@dataclass(frozen=True, slots=True)
class Retrieved(Generic[D]):
    """One call's documents (none for a refusal) and the outcome they came from."""

    documents: list[D]
    outcome: Outcome


def refused(outcome: Outcome) -> bool:
    """Whether the loop declined to answer: not enough evidence, or sources that disagree."""
    return outcome.status != "answered"


def refusal_message(outcome: Outcome) -> str | None:
    """What a chatbot may tell its user when the loop declined: the outcome's messages in the question's
    language (no scores, no internals), or None for an answer."""
    return outcome.user_message() if refused(outcome) else None


def evidence_metadata(outcome: Outcome, evidence: Evidence) -> dict[str, object]:
    """What a retrieved document carries: where its text is, to the character, its own score, and
    the run that found it (``outcome``: this call's, the same object for each of its documents)."""
    return {
        "doc_id": evidence.doc_id,
        "version": evidence.version,
        "start": evidence.start,
        "end": evidence.end,
        "title": evidence.title,
        "section": list(evidence.section),
        "evidence_id": evidence.evidence_id,
        "score": evidence.score,
        "run_id": outcome.run_id,
        "status": outcome.status,
        "outcome": outcome,
    }


class LastOutcomes:
    """The last outcome of each thread and of each asyncio task: a call never reads another's."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by: weakref.WeakKeyDictionary[object, Outcome] = weakref.WeakKeyDictionary()

    @staticmethod
    def _caller() -> object:
        try:
            task = asyncio.current_task()
        except RuntimeError:  # no event loop in this thread
            task = None
        return task if task is not None else threading.current_thread()

    def put(self, outcome: Outcome) -> None:
        with self._lock:
            self._by[self._caller()] = outcome

    def get(self) -> Outcome | None:
        """The outcome of this thread's (or task's) last call; deprecated in favour of per-call ones."""
        warnings.warn(LAST_OUTCOME_DEPRECATED, DeprecationWarning, stacklevel=3)
        with self._lock:
            return self._by.get(self._caller())


class Asker:
    """Asks the evidence loop one question; built from exactly one of ``index``, ``store``, ``service``
    or ``base_url`` (+ ``api_key``). A service it opened itself, it closes in :meth:`close`.

    ``aask`` awaits ``Service.aask`` in process (the loop in a bounded worker thread) or an async HTTP
    client (one per event loop), never a thread per call."""

    def __init__(
        self,
        *,
        index: str | Path | None = None,
        store: str | None = None,
        service: Service | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        groups: Sequence[str] | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> None:
        given = [name for name, v in (("index", index), ("store", store), ("service", service),
                                      ("base_url", base_url)) if v is not None]  # fmt: skip
        if len(given) != 1:
            raise InputError(f"give one of index=, store=, service= or base_url=, not {given or 'none'}")
        if api_key is not None and base_url is None:
            raise InputError("api_key= goes with base_url= (a remote `evloop serve`)")
        self.groups = list(groups) if groups is not None else None
        self._owned = service is None and base_url is None
        self._service = service
        self._location: Path | str | None = Path(index) if index is not None else store
        self._lock = threading.Lock()
        self._http: httpx2.Client | None = None
        self._remote: dict[str, Any] | None = None
        self._ahttp: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx2.AsyncClient] = (
            weakref.WeakKeyDictionary()
        )
        if base_url is not None:
            headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
            self._remote = {"base_url": base_url.rstrip("/"), "headers": headers, "timeout": timeout_s}
            self._http = httpx2.Client(**self._remote)

    def ask(self, question: str, history: Sequence[Earlier] | None = None) -> Outcome:
        """The outcome of ``question`` (a follow-up of ``history``, oldest first), read with
        ``groups`` (a remote key's own groups by default)."""
        if self._http is not None:
            reply = self._http.post("/v1/ask", json=self._body(question, history))
            return _outcome(reply)
        return self.service().ask(question, self.groups or (), history=turns(history))

    async def aask(self, question: str, history: Sequence[Earlier] | None = None) -> Outcome:
        """``ask`` for asyncio."""
        if self._remote is not None:
            reply = await self._async_http().post("/v1/ask", json=self._body(question, history))
            return _outcome(reply)
        return await self.service().aask(question, self.groups or (), history=turns(history))

    def service(self) -> Service:
        """The in-process service, opened on first use."""
        with self._lock:
            if self._service is None:
                assert self._location is not None
                self._service = Service.open(self._location)
            return self._service

    def _body(self, question: str, history: Sequence[Earlier] | None) -> dict[str, object]:
        body: dict[str, object] = {"question": question}
        if self.groups is not None:
            body["groups"] = self.groups
        if history:
            body["history"] = [_as_json(item) for item in turns(history)]
        return body

    def _async_http(self) -> httpx2.AsyncClient:
        assert self._remote is not None
        loop = asyncio.get_running_loop()
        client = self._ahttp.get(loop)
        if client is None:
            client = self._ahttp[loop] = httpx2.AsyncClient(**self._remote)
        return client

    def close(self) -> None:
        """Close what this asker opened (not a service passed in)."""
        if self._http is not None:
            self._http.close()
        with self._lock:
            if self._owned and self._service is not None:
                self._service.close()
                self._service = None

    async def aclose(self) -> None:
        """Close the async HTTP client of the running event loop, then what ``close`` closes."""
        client = self._ahttp.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.aclose()
        self.close()


def turns(history: Sequence[Earlier] | None) -> list[HistoryItem]:
    """The earlier turns as ``Service.ask`` takes them: an earlier outcome becomes its question and
    run id (its trace read back, with what the caller may read of it)."""
    return [
        {"question": item.question, "run_id": item.run_id} if isinstance(item, Outcome) else item
        for item in history or ()
    ]


def _as_json(item: HistoryItem) -> object:
    """A turn as ``POST /v1/ask`` takes it."""
    if isinstance(item, Turn):
        return {"question": item.text, "run_id": item.run_id} if item.run_id else item.text
    return item if isinstance(item, str) else dict(item)


def _outcome(reply: httpx2.Response) -> Outcome:
    if reply.status_code != 200:
        detail = reply.json().get("detail", reply.text) if reply.text.startswith("{") else reply.text
        raise EvidenceLoopError(f"POST /v1/ask answered {reply.status_code}: {detail}")
    return Outcome.model_validate(reply.json())
