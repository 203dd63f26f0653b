"""Where a retriever's outcomes come from: a :class:`Service` in process, or ``evloop serve`` over HTTP.

Only the standard library, pydantic and httpx2 (already dependencies): the framework packages are
imported by the modules that adapt to them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import httpx2

from evidence_loop.agent.outcome import Evidence, Outcome
from evidence_loop.agent.service import Service
from evidence_loop.tools.errors import EvidenceLoopError, InputError

DEFAULT_TIMEOUT_S = 60.0
OutcomeCallback = Callable[[Outcome], None]


def refused(outcome: Outcome) -> bool:
    """Whether the loop declined to answer: not enough evidence, or sources that disagree."""
    return outcome.status != "answered"


def refusal_message(outcome: Outcome) -> str | None:
    """What a chatbot may tell its user when the loop declined: the outcome's messages in the question's
    language (no scores, no internals), or None for an answer."""
    return outcome.user_message() if refused(outcome) else None


def evidence_metadata(outcome: Outcome, evidence: Evidence) -> dict[str, object]:
    """What a retrieved document carries: where its text is, to the character, and which run found it."""
    return {
        "doc_id": evidence.doc_id,
        "version": evidence.version,
        "start": evidence.start,
        "end": evidence.end,
        "title": evidence.title,
        "section": list(evidence.section),
        "evidence_id": evidence.evidence_id,
        "run_id": outcome.run_id,
        "status": outcome.status,
    }


class Asker:
    """Asks the evidence loop one question; built from exactly one of ``index``, ``store``, ``service``
    or ``base_url`` (+ ``api_key``). A service it opened itself, it closes in :meth:`close`."""

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
        if base_url is not None:
            headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
            self._http = httpx2.Client(base_url=base_url.rstrip("/"), headers=headers, timeout=timeout_s)

    def ask(self, question: str) -> Outcome:
        """The outcome of ``question``, read with ``groups`` (a remote key's own groups by default)."""
        if self._http is not None:
            return self._ask_remote(self._http, question)
        return self.service().ask(question, self.groups or ())

    def service(self) -> Service:
        """The in-process service, opened on first use."""
        with self._lock:
            if self._service is None:
                assert self._location is not None
                self._service = Service.open(self._location)
            return self._service

    def _ask_remote(self, http: httpx2.Client, question: str) -> Outcome:
        body: dict[str, object] = {"question": question}
        if self.groups is not None:
            body["groups"] = self.groups
        reply = http.post("/v1/ask", json=body)
        if reply.status_code != 200:
            detail = reply.json().get("detail", reply.text) if reply.text.startswith("{") else reply.text
            raise EvidenceLoopError(f"POST /v1/ask answered {reply.status_code}: {detail}")
        return Outcome.model_validate(reply.json())

    def close(self) -> None:
        """Close what this asker opened (not a service passed in)."""
        if self._http is not None:
            self._http.close()
        with self._lock:
            if self._owned and self._service is not None:
                self._service.close()
                self._service = None
