"""A LangChain retriever over the evidence loop (``pip install 'evidence-loop[langchain]'``).

Each evidence window of an answered question becomes a ``Document`` whose ``page_content`` is
``document_text[start:end]`` of the version its metadata names, with the window's own ``score``.
A refusal becomes no documents. Each call's outcome is its own: ``ask``/``aask`` return it with the
documents, every document's ``metadata["outcome"]`` holds it, and ``on_outcome`` receives it, so a
chain can tell "refused, and why" (``status``, ``missing``) from "nothing in the knowledge base",
however many calls run at once, and tell its user why in the question's language
(``refusal_message``)::

    retriever = EvidenceLoopRetriever(index=".evloop")
    found = retriever.ask("How long is the LM-X200 warranty?")
    if not found.documents:
        print(found.outcome.status, [m.detail for m in found.outcome.missing])
        print(refusal_message(found.outcome))  # for the end user

``ainvoke`` (and ``aask``) await the loop without a thread per call: ``Service.aask`` in process, an
async HTTP client for a remote ``evloop serve``. ``invoke(question, history=[...])`` reads a
follow-up with the conversation's earlier turns.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, PrivateAttr

from evidence_loop.agent.outcome import Outcome
from evidence_loop.agent.service import Service
from evidence_loop.integrations.source import (
    Asker,
    Earlier,
    LastOutcomes,
    OutcomeCallback,
    Retrieved,
    evidence_metadata,
    refused,
)


class EvidenceLoopRetriever(BaseRetriever):
    """Grounded evidence, each document with its outcome, or no documents for a refusal.

    Build it from one of ``index`` (a folder), ``store`` (a PostgreSQL URL), ``service`` (an open
    :class:`Service`) or ``base_url`` and ``api_key`` (a remote ``evloop serve``). ``history`` is the
    conversation a retriever made by ``with_history`` reads each question with.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    index: str | Path | None = None
    store: str | None = None
    service: Service | None = None
    base_url: str | None = None
    api_key: str | None = None
    groups: Sequence[str] | None = None
    on_outcome: OutcomeCallback | None = None
    history: Sequence[Earlier] | None = None
    _asker: Asker = PrivateAttr()
    _last: LastOutcomes = PrivateAttr(default_factory=LastOutcomes)

    def model_post_init(self, context: Any, /) -> None:
        self._asker = Asker(
            index=self.index,
            store=self.store,
            service=self.service,
            base_url=self.base_url,
            api_key=self.api_key,
            groups=self.groups,
        )

    @property
    def last_outcome(self) -> Outcome | None:
        """Deprecated: the last outcome of this thread or asyncio task (never another's); use the
        outcome of each call (``ask``, ``aask``, ``metadata["outcome"]``, ``on_outcome``)."""
        return self._last.get()

    def with_history(self, history: Sequence[Earlier]) -> EvidenceLoopRetriever:
        """This retriever (the same service or client) reading each question as a follow-up of
        ``history``: for a chain, whose retriever step is given the question alone."""
        return self.model_copy(update={"history": list(history)})

    def ask(self, question: str, history: Sequence[Earlier] | None = None) -> Retrieved[Document]:
        """The documents of one question and its outcome."""
        return self._retrieved(self._asker.ask(question, self._turns(history)))

    async def aask(self, question: str, history: Sequence[Earlier] | None = None) -> Retrieved[Document]:
        """``ask`` for asyncio, without a thread per call."""
        return self._retrieved(await self._asker.aask(question, self._turns(history)))

    def _get_relevant_documents(
        self,
        query: str,
        *,
        run_manager: CallbackManagerForRetrieverRun,
        history: Sequence[Earlier] | None = None,
    ) -> list[Document]:
        return self.ask(query, history).documents

    async def _aget_relevant_documents(
        self,
        query: str,
        *,
        run_manager: AsyncCallbackManagerForRetrieverRun,
        history: Sequence[Earlier] | None = None,
    ) -> list[Document]:
        return (await self.aask(query, history)).documents

    def _turns(self, history: Sequence[Earlier] | None) -> Sequence[Earlier] | None:
        return history if history is not None else self.history

    def _retrieved(self, outcome: Outcome) -> Retrieved[Document]:
        self._last.put(outcome)
        if self.on_outcome is not None:
            self.on_outcome(outcome)
        if refused(outcome):
            return Retrieved([], outcome)
        documents = [
            Document(
                page_content=e.text,
                metadata=evidence_metadata(outcome, e),
                id=f"{outcome.run_id}/{e.evidence_id}",
            )
            for e in outcome.evidence
        ]
        return Retrieved(documents, outcome)

    def close(self) -> None:
        """Close the service or HTTP client this retriever opened."""
        self._asker.close()

    async def aclose(self) -> None:
        """Close the async HTTP client of the running event loop too."""
        await self._asker.aclose()
