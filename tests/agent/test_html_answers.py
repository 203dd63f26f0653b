"""What a chatbot shows of an HTML page: the answer quotes its clean text, never its markup or its
furniture, and stays exact on the stored text."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from evidence_loop.agent.outcome import Outcome
from evidence_loop.agent.service import Service
from evidence_loop.tools.store.folder import Store
from evidence_loop.tools.types import DocumentInput
from tests.html_pages import FURNITURE, MARKUP_RE, furnished_page


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    store = Store.open(tmp_path_factory.mktemp("html") / "ix", create=True)
    page = DocumentInput("account/reset", furnished_page(), title="Reset your password", format="html")
    store.ingest([page])
    with Service(store) as opened:
        yield opened


def ask(service: Service, question: str) -> Outcome:
    outcome = service.ask(question)
    assert outcome.status == "answered" and outcome.answer is not None
    return outcome


def test_an_answer_from_an_html_page_holds_no_markup_or_furniture(service: Service) -> None:
    text = ask(service, "How long is the password reset link valid?").answer.text  # type: ignore[union-attr]
    assert "expires after 60 minutes" in text
    assert MARKUP_RE.search(text) is None and [f for f in FURNITURE if f in text] == []


def test_an_answer_quoting_code_keeps_what_the_page_shows(service: Service) -> None:
    text = ask(service, "How do I call the reset API with my token?").answer.text  # type: ignore[union-attr]
    assert '-H "Authorization: Bearer <token>"' in text


def test_the_quotes_of_an_html_page_are_exact_on_its_stored_text(service: Service) -> None:
    outcome = ask(service, "How much is the Business plan per month?")
    stored = service.store.snapshot().parsed("account/reset", "1").text
    citations = outcome.answer.citations  # type: ignore[union-attr]
    assert citations and all(stored[c.start : c.end] == c.quote for c in citations)
    assert all(stored[e.start : e.end] == e.text for e in outcome.evidence)
