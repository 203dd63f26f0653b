"""A LangChain retriever over the evidence loop (``pip install 'evidence-loop[langchain]'``).

Each evidence window of an answered question becomes a ``Document`` whose ``page_content`` is
``document_text[start:end]`` of the version its metadata names. A refusal becomes no documents; the
outcome stays on ``last_outcome`` and goes to ``on_outcome``, so a chain can tell "refused, and
why" (``status``, ``missing``) from "nothing in the knowledge base", and tell its user why in the
question's language (``refusal_message``)::

    retriever = EvidenceLoopRetriever(index=".evloop")
    docs = retriever.invoke("How long is the LM-X200 warranty?")
    if not docs and retriever.last_outcome is not None:
        print(retriever.last_outcome.status, [m.detail for m in retriever.last_outcome.missing])
        print(refusal_message(retriever.last_outcome))  # for the end user
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, PrivateAttr

from evidence_loop.agent.outcome import Outcome
from evidence_loop.agent.service import Service
from evidence_loop.integrations.source import Asker, OutcomeCallback, evidence_metadata, refused


class EvidenceLoopRetriever(BaseRetriever):
    """Grounded evidence, or no documents and the refusal on ``last_outcome``.

    Build it from one of ``index`` (a folder), ``store`` (a PostgreSQL URL), ``service`` (an open
    :class:`Service`) or ``base_url`` and ``api_key`` (a remote ``evloop serve``).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    index: str | Path | None = None
    store: str | None = None
    service: Service | None = None
    base_url: str | None = None
    api_key: str | None = None
    groups: Sequence[str] | None = None
    on_outcome: OutcomeCallback | None = None
    last_outcome: Outcome | None = None
    _asker: Asker = PrivateAttr()

    def model_post_init(self, context: Any, /) -> None:
        self._asker = Asker(
            index=self.index,
            store=self.store,
            service=self.service,
            base_url=self.base_url,
            api_key=self.api_key,
            groups=self.groups,
        )

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        outcome = self._asker.ask(query)
        self.last_outcome = outcome
        if self.on_outcome is not None:
            self.on_outcome(outcome)
        if refused(outcome):
            return []
        return [
            Document(
                page_content=e.text,
                metadata=evidence_metadata(outcome, e),
                id=f"{outcome.run_id}/{e.evidence_id}",
            )
            for e in outcome.evidence
        ]

    def close(self) -> None:
        """Close the service or HTTP client this retriever opened."""
        self._asker.close()
