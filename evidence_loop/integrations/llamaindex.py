"""A LlamaIndex retriever over the evidence loop (``pip install 'evidence-loop[llamaindex]'``).

Each evidence window of an answered question becomes a ``NodeWithScore`` whose node text is
``document_text[start:end]`` of the version its metadata names; the score is the outcome's
evidence score. A refusal becomes no nodes; the outcome stays on ``last_outcome`` and goes to
``on_outcome``, so a query engine can tell a refusal (``status``, ``missing``) from an empty result
and tell its user why (``evidence_loop.integrations.refusal_message(retriever.last_outcome)``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from evidence_loop.agent.outcome import Outcome
from evidence_loop.agent.service import Service
from evidence_loop.integrations.source import Asker, OutcomeCallback, evidence_metadata, refused


class EvidenceLoopRetriever(BaseRetriever):
    """Grounded evidence as scored nodes, or none and the refusal on ``last_outcome``.

    Build it from one of ``index`` (a folder), ``store`` (a PostgreSQL URL), ``service`` (an open
    :class:`Service`) or ``base_url`` and ``api_key`` (a remote ``evloop serve``).
    """

    def __init__(
        self,
        *,
        index: str | Path | None = None,
        store: str | None = None,
        service: Service | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        groups: Sequence[str] | None = None,
        on_outcome: OutcomeCallback | None = None,
    ) -> None:
        super().__init__()
        self._asker = Asker(
            index=index, store=store, service=service, base_url=base_url, api_key=api_key, groups=groups
        )
        self.on_outcome = on_outcome
        self.last_outcome: Outcome | None = None

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        outcome = self._asker.ask(query_bundle.query_str)
        self.last_outcome = outcome
        if self.on_outcome is not None:
            self.on_outcome(outcome)
        if refused(outcome):
            return []
        score = outcome.signals.score
        return [
            NodeWithScore(
                node=TextNode(
                    id_=f"{outcome.run_id}/{e.evidence_id}",
                    text=e.text,
                    metadata=evidence_metadata(outcome, e),
                ),
                score=score,
            )
            for e in outcome.evidence
        ]

    def close(self) -> None:
        """Close the service or HTTP client this retriever opened."""
        self._asker.close()
