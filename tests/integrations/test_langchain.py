"""The LangChain retriever with the real langchain-core: a runnable chain whose fake chat model
answers from the retrieved documents, in process and against a real `evloop serve`."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.documents import Document
from langchain_core.language_models.fake_chat_models import ParrotFakeChatModel
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import Runnable, RunnableLambda, RunnablePassthrough

from evidence_loop.agent.outcome import Outcome
from evidence_loop.agent.sample import load_sample_kb
from evidence_loop.agent.service import Service
from evidence_loop.integrations import refusal_message
from evidence_loop.integrations.langchain import EvidenceLoopRetriever
from evidence_loop.tools.errors import InputError
from tests.agent.test_api_server import Server
from tests.integrations.conftest import ANSWERED, PUBLIC_KEY, REFUSED, STAFF_KEY, document_span

PROMPT = ChatPromptTemplate.from_messages(
    [("human", "Answer only from these sources, citing them.\n{context}\n\nQuestion: {question}")]
)


def cited(docs: list[Document]) -> str:
    """The sources as the prompt shows them: each text after where it stands, to the character."""
    return "\n".join(
        f"[{d.metadata['doc_id']}@{d.metadata['version']} {d.metadata['start']}:{d.metadata['end']}] "
        f"{d.page_content}"
        for d in docs
    )


def chain_over(retriever: EvidenceLoopRetriever) -> Runnable[str, str]:
    """Retrieve, then answer from the documents; with none, tell the user why in their language."""

    def answer_or_refusal(inputs: dict[str, object]) -> str | Runnable[dict[str, object], str]:
        docs = inputs["docs"]
        assert isinstance(docs, list)
        if docs:
            return PROMPT | ParrotFakeChatModel() | StrOutputParser()
        outcome = retriever.last_outcome
        assert outcome is not None
        return f"refused ({outcome.status}): " + (refusal_message(outcome) or "")

    return (
        {"docs": retriever, "question": RunnablePassthrough()}
        | RunnablePassthrough.assign(context=lambda x: cited(x["docs"]))
        | RunnableLambda(answer_or_refusal)
    )


def check_chain(retriever: EvidenceLoopRetriever, index: Path) -> None:
    chain = chain_over(retriever)
    reply = chain.invoke(ANSWERED)
    outcome = retriever.last_outcome
    assert outcome is not None and outcome.status == "answered"
    assert outcome.answer is not None
    for cite in outcome.answer.citations:  # the model's answer quotes each cited sentence and its place
        assert cite.quote in reply and f"[{cite.doc_id}@{cite.version} " in reply

    docs = retriever.invoke(ANSWERED)
    assert docs
    for doc in docs:
        meta = doc.metadata
        assert {"doc_id", "version", "start", "end", "run_id", "status"} <= set(meta)
        assert meta["status"] == "answered" and meta["run_id"] == retriever.last_outcome.run_id  # type: ignore[union-attr]
        assert doc.page_content == document_span(
            index, meta["doc_id"], meta["version"], meta["start"], meta["end"]
        )

    refusal = chain.invoke(REFUSED)
    assert refusal.startswith("refused (insufficient_evidence): ") and "LM-Z900" in refusal
    assert "帮助文档" in refusal  # the end user's words, in the question's language
    assert retriever.invoke(REFUSED) == []


def test_a_chain_answers_from_the_documents_and_tells_a_refusal_in_process(index: Path) -> None:
    with Service.open(index) as service:
        check_chain(EvidenceLoopRetriever(service=service), index)


def test_the_retriever_opens_an_index_folder_itself_and_reports_each_outcome(index: Path) -> None:
    seen: list[Outcome] = []
    retriever = EvidenceLoopRetriever(index=index, on_outcome=seen.append)
    try:
        assert retriever.invoke(REFUSED) == []
        assert [o.status for o in seen] == ["insufficient_evidence"]
        assert any(m.kind == "uncovered_slot" for m in seen[0].missing)
    finally:
        retriever.close()


def test_a_chain_answers_from_a_remote_evloop_serve(server: Server, index: Path) -> None:
    retriever = EvidenceLoopRetriever(base_url=server.url, api_key=PUBLIC_KEY)
    try:
        check_chain(retriever, index)
    finally:
        retriever.close()


def test_a_remote_key_bounds_what_the_retriever_reads(server: Server) -> None:
    question = "员工购买学习设备打几折？"
    public = EvidenceLoopRetriever(base_url=server.url, api_key=PUBLIC_KEY)
    staff = EvidenceLoopRetriever(base_url=server.url, api_key=STAFF_KEY)
    try:
        assert public.invoke(question) == []
        assert any(d.metadata["doc_id"] == "staff-discount-zh" for d in staff.invoke(question))
    finally:
        public.close()
        staff.close()


def test_it_is_built_from_exactly_one_source(index: Path) -> None:
    with pytest.raises(InputError, match="one of"):
        EvidenceLoopRetriever()
    with pytest.raises(InputError, match="one of"):
        EvidenceLoopRetriever(index=index, base_url="http://127.0.0.1:1")


def test_the_retriever_reads_a_postgresql_store(pg_url: str) -> None:
    with Service.open(pg_url) as service:
        service.ingest(load_sample_kb())
    retriever = EvidenceLoopRetriever(store=pg_url)
    try:
        docs = retriever.invoke(ANSWERED)
        assert docs and all(d.metadata["status"] == "answered" for d in docs)
        assert any(d.metadata["doc_id"] == "warranty-zh" for d in docs)
        assert retriever.invoke(REFUSED) == []
    finally:
        retriever.close()
