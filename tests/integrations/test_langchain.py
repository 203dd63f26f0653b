"""The LangChain retriever with the real langchain-core: a runnable chain whose fake chat model
answers from the retrieved documents, in process and against a real `evloop serve`."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest
from langchain_core.documents import Document
from langchain_core.language_models.fake_chat_models import ParrotFakeChatModel
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import Runnable, RunnableLambda, RunnablePassthrough

from evidence_loop.agent.doors.cli.sample import load_sample_kb
from evidence_loop.agent.outcome import Outcome
from evidence_loop.agent.service import Service
from evidence_loop.integrations import refusal_message
from evidence_loop.integrations.langchain import EvidenceLoopRetriever
from evidence_loop.integrations.source import Retrieved
from evidence_loop.tools.errors import InputError
from tests.agent.test_api_server import Server
from tests.integrations.conftest import (
    ANSWERED,
    FOLLOW_UP,
    PUBLIC_KEY,
    REFUSED,
    SEVERAL,
    STAFF_KEY,
    TWENTY,
    document_span,
)

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
        found = inputs["found"]
        assert isinstance(found, Retrieved)
        if found.documents:
            return PROMPT | ParrotFakeChatModel() | StrOutputParser()
        outcome = found.outcome
        return f"refused ({outcome.status}): " + (refusal_message(outcome) or "")

    return (
        {"found": RunnableLambda(retriever.ask, afunc=retriever.aask), "question": RunnablePassthrough()}
        | RunnablePassthrough.assign(context=lambda x: cited(x["found"].documents))
        | RunnableLambda(answer_or_refusal)
    )


def check_chain(retriever: EvidenceLoopRetriever, index: Path) -> None:
    chain = chain_over(retriever)
    reply = chain.invoke(ANSWERED)
    outcome = retriever.ask(ANSWERED).outcome
    assert outcome.status == "answered" and outcome.answer is not None
    for cite in outcome.answer.citations:  # the model's answer quotes each cited sentence and its place
        assert cite.quote in reply and f"[{cite.doc_id}@{cite.version} " in reply

    docs = retriever.invoke(ANSWERED)
    assert docs
    for doc in docs:
        meta = doc.metadata
        assert {"doc_id", "version", "start", "end", "run_id", "status", "score", "outcome"} <= set(meta)
        assert meta["status"] == "answered" and meta["run_id"] == meta["outcome"].run_id
        assert doc.page_content == document_span(
            index, meta["doc_id"], meta["version"], meta["start"], meta["end"]
        )

    refusal = chain.invoke(REFUSED)
    assert refusal.startswith("refused (insufficient_evidence): ") and "LM-Z900" in refusal
    assert "帮助文档" in refusal  # the end user's words, in the question's language
    assert retriever.invoke(REFUSED) == []

    async def refused_async() -> str:
        reply = await chain.ainvoke(REFUSED)
        await retriever.aclose()
        return reply

    assert asyncio.run(refused_async()) == refusal


def check_gathered(retriever: EvidenceLoopRetriever) -> None:
    """Twenty questions at once, each with its own outcome, asked and invoked."""

    async def gathered() -> tuple[list[Retrieved[Document]], list[list[Document]]]:
        asked = await asyncio.gather(*(retriever.aask(q) for q in TWENTY))
        invoked = await asyncio.gather(*(retriever.ainvoke(q) for q in TWENTY))
        await retriever.aclose()
        return list(asked), list(invoked)

    asked, invoked = asyncio.run(gathered())
    assert [found.outcome.question for found in asked] == TWENTY
    assert len({found.outcome.run_id for found in asked}) == len(TWENTY)
    for question, found, docs in zip(TWENTY, asked, invoked, strict=True):
        refused = found.outcome.status != "answered"
        assert refused == (docs == []) == (found.documents == [])
        assert all(d.metadata["outcome"].question == question for d in docs)


def test_a_chain_answers_from_the_documents_and_tells_a_refusal_in_process(index: Path) -> None:
    with Service.open(index) as service:
        check_chain(EvidenceLoopRetriever(service=service), index)


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


@pytest.mark.processes
def test_gathered_remote_calls_start_no_thread(server: Server) -> None:
    threads: list[int] = []
    retriever = EvidenceLoopRetriever(
        base_url=server.url, api_key=PUBLIC_KEY, on_outcome=lambda _: threads.append(threading.active_count())
    )

    async def gathered() -> int:
        await retriever.ainvoke(ANSWERED)  # the client made, its connection open
        before = threading.active_count()
        await asyncio.gather(*(retriever.ainvoke(q) for q in TWENTY))
        await retriever.aclose()
        return before

    before = asyncio.run(gathered())
    assert max(threads[1:]) == before


def test_each_document_carries_its_own_windows_score(index: Path) -> None:
    with Service.open(index) as service:
        found = EvidenceLoopRetriever(service=service).ask(SEVERAL)
    scores = [d.metadata["score"] for d in found.documents]
    assert scores == [e.score for e in found.outcome.evidence]
    assert len(set(scores)) == len(scores) > 1


def test_a_follow_up_is_read_with_its_history(index: Path) -> None:
    with Service.open(index) as service:
        retriever = EvidenceLoopRetriever(service=service)
        first = retriever.ask(ANSWERED).outcome
        docs = retriever.invoke(FOLLOW_UP, history=[first])
        bound = retriever.with_history([ANSWERED]).invoke(FOLLOW_UP)
    for read in (docs, bound):
        resolved = read[0].metadata["outcome"].resolved_question
        assert resolved is not None and "LM-S10" in resolved


def test_last_outcome_is_deprecated_and_never_another_tasks(index: Path) -> None:
    with Service.open(index) as service:
        retriever = EvidenceLoopRetriever(service=service)

        async def each_reads_its_own(question: str) -> str | None:
            await retriever.ainvoke(question)
            with pytest.warns(DeprecationWarning, match="per-call"):
                last = retriever.last_outcome
            return last.question if last is not None else None

        async def gathered() -> list[str | None]:
            return list(await asyncio.gather(*(each_reads_its_own(q) for q in TWENTY[:8])))

        assert asyncio.run(gathered()) == TWENTY[:8]
        with pytest.warns(DeprecationWarning):
            assert retriever.last_outcome is None  # this thread asked nothing itself


def test_the_retriever_opens_an_index_folder_itself_and_reports_each_outcome(index: Path) -> None:
    seen: list[Outcome] = []
    retriever = EvidenceLoopRetriever(index=index, on_outcome=seen.append)
    try:
        assert retriever.invoke(REFUSED) == []
        assert [o.status for o in seen] == ["insufficient_evidence"]
        assert any(m.kind == "uncovered_slot" for m in seen[0].missing)
    finally:
        retriever.close()


@pytest.mark.processes
def test_a_chain_answers_from_a_remote_evloop_serve(server: Server, index: Path) -> None:
    retriever = EvidenceLoopRetriever(base_url=server.url, api_key=PUBLIC_KEY)
    try:
        check_chain(retriever, index)
    finally:
        retriever.close()


@pytest.mark.processes
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
