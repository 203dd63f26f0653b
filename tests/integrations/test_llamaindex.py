"""The LlamaIndex retriever with the real llama-index-core, in process and against `evloop serve`."""

from __future__ import annotations

from pathlib import Path

from llama_index.core.schema import NodeWithScore, TextNode

from evidence_loop.agent.outcome import Outcome
from evidence_loop.agent.service import Service
from evidence_loop.integrations import refusal_message
from evidence_loop.integrations.llamaindex import EvidenceLoopRetriever
from tests.agent.test_api_server import Server
from tests.integrations.conftest import ANSWERED, PUBLIC_KEY, REFUSED, document_span


def check_retriever(retriever: EvidenceLoopRetriever, index: Path) -> None:
    nodes = retriever.retrieve(ANSWERED)
    outcome = retriever.last_outcome
    assert outcome is not None and outcome.status == "answered" and nodes
    for found in nodes:
        assert isinstance(found, NodeWithScore) and isinstance(found.node, TextNode)
        meta = found.node.metadata
        assert meta["run_id"] == outcome.run_id and meta["status"] == "answered"
        span = document_span(index, meta["doc_id"], meta["version"], meta["start"], meta["end"])
        assert found.node.get_content() == span
        assert found.score == outcome.signals.score
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


def test_the_retriever_returns_scored_nodes_or_none_with_the_refusal_in_process(index: Path) -> None:
    with Service.open(index) as service:
        check_retriever(EvidenceLoopRetriever(service=service), index)
    retriever = EvidenceLoopRetriever(index=index)
    try:
        check_retriever(retriever, index)
    finally:
        retriever.close()


def test_the_retriever_reads_from_a_remote_evloop_serve(server: Server, index: Path) -> None:
    retriever = EvidenceLoopRetriever(base_url=server.url, api_key=PUBLIC_KEY)
    try:
        check_retriever(retriever, index)
    finally:
        retriever.close()
