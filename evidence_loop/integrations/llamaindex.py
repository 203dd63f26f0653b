"""A LlamaIndex retriever over the evidence loop (``pip install 'evidence-loop[llamaindex]'``).

Each evidence window of an answered question becomes a ``NodeWithScore`` whose node text is
``document_text[start:end]`` of the version its metadata names; its score is the window's own
evidence score. A refusal becomes no nodes. Each call's outcome is its own: ``ask``/``aask`` return
it with the nodes, every node's ``metadata["outcome"]`` holds it (left out of what an LLM or an
embedder reads of the node), and ``on_outcome`` receives it.

A ``RetrieverQueryEngine`` answers "Empty Response" when its retriever returns no nodes; with
:class:`EvidenceLoopSynthesizer` (or :func:`query_engine`) a refusal reaches the user as the refusal,
with what is missing, and no LLM is asked to make up an answer from nothing::

    retriever = EvidenceLoopRetriever(index=".evloop")
    engine = query_engine(retriever)  # the loop's own answers
    engine = query_engine(retriever, get_response_synthesizer(llm=my_llm))  # an LLM's, from the evidence
    print(engine.query("LM-Z900 的整机保修期是多久？"))  # the refusal, with what is missing
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.base.response.schema import RESPONSE_TYPE, Response
from llama_index.core.llms.mock import MockLLM
from llama_index.core.prompts.mixin import PromptDictType
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.response_synthesizers import BaseSynthesizer
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from evidence_loop.agent.doors.api.toolkit import outcome_text
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

_OUTCOME_OF_QUERY = "_evidence_loop_outcome"  # the outcome a query bundle was retrieved with
UNSHOWN_METADATA = ["outcome", "evidence_id", "run_id", "status", "score"]


class EvidenceLoopRetriever(BaseRetriever):
    """Grounded evidence as scored nodes, each with its outcome, or none for a refusal.

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
        self.history: list[Earlier] | None = None
        self._last = LastOutcomes()

    @property
    def last_outcome(self) -> Outcome | None:
        """Deprecated: the last outcome of this thread or asyncio task (never another's); use the
        outcome of each call (``ask``, ``aask``, ``metadata["outcome"]``, ``on_outcome``)."""
        return self._last.get()

    def with_history(self, history: Sequence[Earlier]) -> EvidenceLoopRetriever:
        """This retriever (the same service or client) reading each question as a follow-up of
        ``history``: for a query or chat engine, which hands its retriever the question alone."""
        bound = copy.copy(self)
        bound.history = list(history)
        return bound

    def ask(self, question: str, history: Sequence[Earlier] | None = None) -> Retrieved[NodeWithScore]:
        """The nodes of one question and its outcome."""
        return self._retrieved(self._asker.ask(question, self._turns(history)))

    async def aask(self, question: str, history: Sequence[Earlier] | None = None) -> Retrieved[NodeWithScore]:
        """``ask`` for asyncio, without a thread per call."""
        return self._retrieved(await self._asker.aask(question, self._turns(history)))

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        found = self.ask(query_bundle.query_str)
        setattr(query_bundle, _OUTCOME_OF_QUERY, found.outcome)  # for the synthesizer of this query
        return found.documents

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        found = await self.aask(query_bundle.query_str)
        setattr(query_bundle, _OUTCOME_OF_QUERY, found.outcome)
        return found.documents

    def _turns(self, history: Sequence[Earlier] | None) -> Sequence[Earlier] | None:
        return history if history is not None else self.history

    def _retrieved(self, outcome: Outcome) -> Retrieved[NodeWithScore]:
        self._last.put(outcome)
        if self.on_outcome is not None:
            self.on_outcome(outcome)
        if refused(outcome):
            return Retrieved([], outcome)
        nodes = [
            NodeWithScore(
                node=TextNode(
                    id_=f"{outcome.run_id}/{e.evidence_id}",
                    text=e.text,
                    metadata=evidence_metadata(outcome, e),
                    excluded_llm_metadata_keys=UNSHOWN_METADATA,
                    excluded_embed_metadata_keys=UNSHOWN_METADATA,
                ),
                score=e.score,
            )
            for e in outcome.evidence
        ]
        return Retrieved(nodes, outcome)

    def close(self) -> None:
        """Close the service or HTTP client this retriever opened."""
        self._asker.close()

    async def aclose(self) -> None:
        """Close the async HTTP client of the running event loop too."""
        await self._asker.aclose()


def outcome_of(query: str | QueryBundle) -> Outcome | None:
    """The outcome an :class:`EvidenceLoopRetriever` retrieved this query bundle with, if it did."""
    outcome = getattr(query, _OUTCOME_OF_QUERY, None)
    return outcome if isinstance(outcome, Outcome) else None


class EvidenceLoopSynthesizer(BaseSynthesizer):
    """A response synthesizer that keeps the loop's refusals: a refused question's response is the
    refusal with what is missing (or both sides of a conflict), never "Empty Response" and never an
    LLM's guess. An answered one is ``inner``'s response from the nodes, or without ``inner`` the
    loop's own extractive answer with its citations (no LLM at all)."""

    def __init__(self, inner: BaseSynthesizer | None = None) -> None:
        # BaseSynthesizer wants a model; without ``inner`` none is ever asked (MockLLM: nothing to set up)
        super().__init__(llm=inner._llm if inner is not None else MockLLM())
        self._inner = inner

    def synthesize(
        self,
        query: str | QueryBundle,
        nodes: list[NodeWithScore],
        additional_source_nodes: Sequence[NodeWithScore] | None = None,
        **response_kwargs: Any,
    ) -> RESPONSE_TYPE:
        own = self._own(query, nodes)
        if own is not None:
            return own
        assert self._inner is not None
        return self._inner.synthesize(query, nodes, additional_source_nodes, **response_kwargs)

    async def asynthesize(
        self,
        query: str | QueryBundle,
        nodes: list[NodeWithScore],
        additional_source_nodes: Sequence[NodeWithScore] | None = None,
        **response_kwargs: Any,
    ) -> RESPONSE_TYPE:
        own = self._own(query, nodes)
        if own is not None:
            return own
        assert self._inner is not None
        return await self._inner.asynthesize(query, nodes, additional_source_nodes, **response_kwargs)

    def _own(self, query: str | QueryBundle, nodes: list[NodeWithScore]) -> Response | None:
        """The response the loop gives itself: a refusal's, or without ``inner`` an answer's."""
        outcome = outcome_of(query)
        if outcome is not None and (refused(outcome) or self._inner is None):
            metadata = {"run_id": outcome.run_id, "status": outcome.status, "outcome": outcome}
            return Response(outcome_text(outcome), source_nodes=list(nodes), metadata=metadata)
        if self._inner is None:
            return Response(self._empty_response, source_nodes=list(nodes))
        return None

    def _get_prompts(self) -> PromptDictType:
        return self._inner.get_prompts() if self._inner is not None else {}

    def _update_prompts(self, prompts_dict: PromptDictType) -> None:
        if self._inner is not None:
            self._inner.update_prompts(prompts_dict)

    def get_response(self, query_str: str, text_chunks: Sequence[str], **response_kwargs: Any) -> str:
        if self._inner is None:
            return "\n\n".join(text_chunks)
        return str(self._inner.get_response(query_str, text_chunks, **response_kwargs))

    async def aget_response(self, query_str: str, text_chunks: Sequence[str], **response_kwargs: Any) -> str:
        if self._inner is None:
            return "\n\n".join(text_chunks)
        return str(await self._inner.aget_response(query_str, text_chunks, **response_kwargs))


def query_engine(
    retriever: EvidenceLoopRetriever, synthesizer: BaseSynthesizer | None = None
) -> RetrieverQueryEngine:
    """A ``RetrieverQueryEngine`` over ``retriever`` whose refusals reach the user as refusals: the
    loop's own answers, or ``synthesizer``'s (an LLM's) from the evidence of answered questions."""
    return RetrieverQueryEngine(retriever, response_synthesizer=EvidenceLoopSynthesizer(synthesizer))
