"""The LlamaIndex retriever with the real llama-index-core, in process and against `evloop serve`:
scored nodes per call, twenty calls at once, and a query engine that tells the user a refusal."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from llama_index.core import get_response_synthesizer
from llama_index.core.llms.mock import MockLLM
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.schema import MetadataMode, NodeWithScore, TextNode

from evidence_loop.agent.doors.api.toolkit import outcome_text
from evidence_loop.agent.outcome import Outcome
from evidence_loop.agent.service import Service
from evidence_loop.integrations import refusal_message
from evidence_loop.integrations.llamaindex import EvidenceLoopRetriever, query_engine
from evidence_loop.integrations.source import Retrieved
from tests.agent.test_api_server import Server
from tests.integrations.conftest import (
    ANSWERED,
    FOLLOW_UP,
    PUBLIC_KEY,
    REFUSED,
    SEVERAL,
    TWENTY,
    document_span,
)


def check_retriever(retriever: EvidenceLoopRetriever, index: Path) -> None:
    nodes = retriever.retrieve(ANSWERED)
    assert nodes
    outcome = nodes[0].node.metadata["outcome"]
    assert isinstance(outcome, Outcome) and outcome.status == "answered"
    for found in nodes:
        assert isinstance(found, NodeWithScore) and isinstance(found.node, TextNode)
        meta = found.node.metadata
        assert meta["run_id"] == outcome.run_id and meta["status"] == "answered"
        span = document_span(index, meta["doc_id"], meta["version"], meta["start"], meta["end"])
        assert found.node.get_content() == span
        assert found.score == meta["score"] is not None
    assert outcome.answer is not None
    quoted = " ".join(n.node.get_content() for n in nodes)
    assert all(c.quote in quoted for c in outcome.answer.citations)

    seen: list[Outcome] = []
    retriever.on_outcome = seen.append
    assert retriever.retrieve(REFUSED) == []
    assert [o.status for o in seen] == ["insufficient_evidence"]
    assert any("LM-Z900" in m.detail for m in seen[0].missing)
    message = refusal_message(seen[0])
    assert message is not None and "LM-Z900" in message and "帮助文档" in message


def check_gathered(retriever: EvidenceLoopRetriever) -> None:
    async def gathered() -> tuple[list[Retrieved[NodeWithScore]], list[list[NodeWithScore]]]:
        asked = await asyncio.gather(*(retriever.aask(q) for q in TWENTY))
        retrieved = await asyncio.gather(*(retriever.aretrieve(q) for q in TWENTY))
        await retriever.aclose()
        return list(asked), list(retrieved)

    asked, retrieved = asyncio.run(gathered())
    assert [found.outcome.question for found in asked] == TWENTY
    for question, found, nodes in zip(TWENTY, asked, retrieved, strict=True):
        assert (found.outcome.status != "answered") == (nodes == [])
        assert all(n.node.metadata["outcome"].question == question for n in nodes)


def check_engine_refuses(retriever: EvidenceLoopRetriever) -> None:
    """A refused question's response is the refusal with its missing pieces, sync and async, from
    the loop's own synthesizer and around an LLM's."""
    engines = [query_engine(retriever), query_engine(retriever, get_response_synthesizer(llm=MockLLM()))]
    for engine in engines:
        response = engine.query(REFUSED)
        outcome = response.metadata["outcome"] if response.metadata else None
        assert isinstance(outcome, Outcome) and outcome.status == "insufficient_evidence"
        assert str(response) == outcome_text(outcome)
        assert "REFUSED" in str(response) and "LM-Z900" in str(response)

    async def asked_async() -> list[str]:
        replies = await asyncio.gather(*(engine.aquery(REFUSED) for engine in engines))
        await retriever.aclose()
        return [str(reply) for reply in replies]

    assert all("REFUSED" in reply and "LM-Z900" in reply for reply in asyncio.run(asked_async()))


def test_the_retriever_returns_scored_nodes_or_none_with_the_refusal_in_process(index: Path) -> None:
    with Service.open(index) as service:
        check_retriever(EvidenceLoopRetriever(service=service), index)
    retriever = EvidenceLoopRetriever(index=index)
    try:
        check_retriever(retriever, index)
    finally:
        retriever.close()


@pytest.mark.processes
def test_the_retriever_reads_from_a_remote_evloop_serve(server: Server, index: Path) -> None:
    retriever = EvidenceLoopRetriever(base_url=server.url, api_key=PUBLIC_KEY)
    try:
        check_retriever(retriever, index)
        check_engine_refuses(retriever)  # closes it
    finally:
        retriever.close()


def test_twenty_gathered_calls_each_return_their_own_outcome_in_process(index: Path) -> None:
    with Service.open(index) as service:
        check_gathered(EvidenceLoopRetriever(service=service))


@pytest.mark.processes
def test_twenty_gathered_calls_each_return_their_own_outcome_from_a_remote_evloop_serve(
    server: Server,
) -> None:
    retriever = EvidenceLoopRetriever(base_url=server.url, api_key=PUBLIC_KEY)
    try:
        check_gathered(retriever)
    finally:
        retriever.close()


def test_each_node_is_scored_by_its_own_window(index: Path) -> None:
    with Service.open(index) as service:
        nodes = EvidenceLoopRetriever(service=service).retrieve(SEVERAL)
    scores = [n.score for n in nodes]
    assert len(set(scores)) == len(scores) > 1


def test_what_an_llm_reads_of_a_node_leaves_the_outcome_out(index: Path) -> None:
    with Service.open(index) as service:
        (node, *_) = EvidenceLoopRetriever(service=service).retrieve(ANSWERED)
    shown = node.node.get_content(metadata_mode=MetadataMode.LLM)
    assert "doc_id: warranty-zh" in shown and "run_id" not in shown and "outcome" not in shown


def test_a_query_engine_tells_the_user_a_refusal_with_what_is_missing(index: Path) -> None:
    with Service.open(index) as service:
        check_engine_refuses(EvidenceLoopRetriever(service=service))


def test_the_default_synthesizer_alone_answers_a_refusal_empty(index: Path) -> None:
    """Why EvidenceLoopSynthesizer exists: LlamaIndex's own synthesizer has nothing to say."""
    with Service.open(index) as service:
        retriever = EvidenceLoopRetriever(service=service)
        engine = RetrieverQueryEngine(retriever, get_response_synthesizer(llm=MockLLM()))
        assert str(engine.query(REFUSED)) == "Empty Response"


def test_an_answered_question_is_the_loops_answer_or_the_llms_from_the_evidence(index: Path) -> None:
    with Service.open(index) as service:
        retriever = EvidenceLoopRetriever(service=service)
        own = query_engine(retriever).query(ANSWERED)
        by_llm = query_engine(retriever, get_response_synthesizer(llm=MockLLM())).query(ANSWERED)
    outcome = own.metadata["outcome"] if own.metadata else None
    assert isinstance(outcome, Outcome) and outcome.answer is not None
    assert str(own) == outcome_text(outcome)
    assert by_llm.source_nodes and all(n.node.get_content() in str(by_llm) for n in by_llm.source_nodes)


def test_a_follow_up_is_read_with_its_history(index: Path) -> None:
    with Service.open(index) as service:
        retriever = EvidenceLoopRetriever(service=service)
        first = retriever.ask(ANSWERED).outcome
        asked = retriever.ask(FOLLOW_UP, history=[first]).outcome
        bound = retriever.with_history([ANSWERED]).retrieve(FOLLOW_UP)
    for resolved in (asked.resolved_question, bound[0].node.metadata["outcome"].resolved_question):
        assert resolved is not None and "LM-S10" in resolved


def test_last_outcome_is_deprecated(index: Path) -> None:
    with Service.open(index) as service:
        retriever = EvidenceLoopRetriever(service=service)
        retriever.retrieve(REFUSED)
        with pytest.warns(DeprecationWarning, match="per-call"):
            last = retriever.last_outcome
    assert last is not None and last.status == "insufficient_evidence"
