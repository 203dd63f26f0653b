"""One recall for every door: ``Service.search`` finds what a question's first recall finds, and
refuses an embedder that did not make the index's vectors as a question does (no silent fallback to
words); the MCP search tool is the same call."""

from __future__ import annotations

from pathlib import Path

import pytest

from evidence_loop.agent.doors.api import toolkit
from evidence_loop.agent.service import Service
from evidence_loop.tools.errors import EmbedderError, InputError
from evidence_loop.tools.store.folder import Store
from evidence_loop.tools.types import DocumentInput
from tests.fake_embedder import FakeEmbedder

DOCS = [
    DocumentInput("wifi", "# Wi-Fi\n\nThe router's wifi password is on its label.\n", format="markdown"),
    DocumentInput("refund", "# Refunds\n\nA refund is paid within 14 days.\n", format="markdown"),
]


def _index(tmp_path: Path) -> Path:
    index = tmp_path / "index"
    with Store.open(index, create=True, embedder=FakeEmbedder()) as store:
        store.ingest(DOCS)
    return index


def test_search_finds_by_meaning_with_the_embedder_that_made_the_vectors(tmp_path: Path) -> None:
    with Service.open(_index(tmp_path), embedder=FakeEmbedder(), reranker=None, llm=None) as service:
        hits = service.search("wireless", 1)  # the fake embedder folds wireless into wifi
    assert [hit.unit.doc_id for hit in hits] == ["wifi"]


def test_search_with_another_embedder_refuses_as_a_question_does(tmp_path: Path) -> None:
    # the store opened without one (opening it with another embedder refuses already)
    with Service(Store.open(_index(tmp_path)), embedder=FakeEmbedder("other")) as service:
        with pytest.raises(EmbedderError, match="vectors were made by"):
            service.search("wifi password")
        with pytest.raises(EmbedderError, match="vectors were made by"):
            service.ask("What is the wifi password?")


def test_the_mcp_search_tool_is_the_services_search(tmp_path: Path) -> None:
    with Service.open(_index(tmp_path), embedder=FakeEmbedder(), reranker=None, llm=None) as service:
        found = toolkit.search(service, toolkit.PUBLIC, "wireless", 2).hits
        direct = service.search("wireless", 2)
    assert [(h.doc_id, h.start, h.score) for h in found] == [
        (h.unit.doc_id, h.unit.start, round(h.score, 6)) for h in direct
    ]


def test_an_empty_query_or_a_k_below_one_is_the_callers_error(tmp_path: Path) -> None:
    with Service.open(_index(tmp_path), embedder=None, reranker=None, llm=None) as service:
        with pytest.raises(InputError, match="empty"):
            service.search("  ")
        with pytest.raises(InputError, match="k must be"):
            service.search("refund", 0)
