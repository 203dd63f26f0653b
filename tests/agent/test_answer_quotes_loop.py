"""The answer a chatbot shows, through the service, on a small help centre (words alone and with vectors):
it quotes the unit that states what is asked (never the page title, nor a neighbouring article's value of
the same kind), the asked plan's row with its header, a procedure whole and in order; and it is never
`answered` with empty text. Every quote is the stored text at its offsets."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from evidence_loop.agent.outcome import Outcome
from evidence_loop.agent.service import Service
from evidence_loop.tools.types import DocumentInput
from tests.fake_embedder import FakeEmbedder

RESET = """<!DOCTYPE html>
<html><head><title>Reset your password | Acme Help</title></head>
<body><main>
<h1>Reset your password</h1>
<p>If you forgot your password, you can reset it from the sign-in page.</p>
<h2>Steps</h2>
<p>To reset your password:</p>
<ol>
<li>On the sign-in page, click Forgot password.</li>
<li>Enter the email address of your account.</li>
<li>Open the reset link in the email. The link expires after 60 minutes.</li>
<li>Choose a new password of at least 12 characters.</li>
</ol>
</main></body></html>
"""
EXPORT = """# Export your data

You can export all projects as a ZIP archive from Settings > Data.

1. Open Settings > Data.
2. Click Export all projects.

Export links stay valid for 7 days. Exports larger than 5 GB are split into several archives.
"""
PLANS = """# Plans and pricing

Acme Cloud offers three plans. Prices are per user per month, billed monthly.

| Plan | Price per month | Storage |
|---|---|---|
| Starter | $8 | 50 GB |
| Business | $15 | 1 TB |
| Enterprise | $30 | Unlimited |

Annual billing saves 20% on every plan.
"""
SCREENSHOTS = """# Capture the screen

## Take a screenshot

## Screenshot settings
"""
DOCS = [
    DocumentInput("reset-password", RESET, title="Reset your password | Acme Help", format="html"),
    DocumentInput("export-data", EXPORT, title="Export your data", format="markdown"),
    DocumentInput("plans", PLANS, title="Plans and pricing", format="markdown"),
    DocumentInput("screenshots", SCREENSHOTS, title="Capture the screen", format="markdown"),
]


@pytest.fixture(scope="module", params=["words", "vectors"])
def service(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    root: Path = tmp_path_factory.mktemp(f"quotes-{request.param}")
    embedder = FakeEmbedder() if request.param == "vectors" else None
    with Service.open(root / "index", create=True, embedder=embedder, llm=None) as opened:
        opened.ingest(DOCS)
        yield opened


@pytest.fixture(scope="module")
def words_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """Words alone: with the 64-dimension fake embedder on four documents the judge, not the answer,
    refuses the price question (0.37 against 0.54), which is no matter of what the answer quotes."""
    root = tmp_path_factory.mktemp("quotes-plans")
    with Service.open(root / "index", create=True, embedder=None, llm=None) as opened:
        opened.ingest(DOCS)
        yield opened


def _answer(service: Service, question: str) -> str:
    outcome = service.ask(question)
    assert outcome.status == "answered", [m.detail for m in outcome.missing]
    assert outcome.answer is not None
    _exact(service, outcome)
    return outcome.answer.text


def _exact(service: Service, outcome: Outcome) -> None:
    """Every quote is the stored text at its offsets (an HTML page is stored as its clean text)."""
    snapshot = service.store.snapshot()
    assert outcome.answer is not None
    for citation in outcome.answer.citations:
        stored = snapshot.parsed(citation.doc_id, citation.version).text
        assert stored[citation.start : citation.end] == citation.quote


def test_the_link_question_quotes_the_step_stating_its_duration_not_the_title_nor_export_links(
    service: Service,
) -> None:
    text = _answer(service, "How long is the password reset link valid?")
    assert "The link expires after 60 minutes." in text
    assert "Acme Help" not in text
    assert "Export links" not in text


def test_a_price_question_quotes_the_asked_plans_row_under_its_header(words_service: Service) -> None:
    text = _answer(words_service, "How much is the Enterprise plan per month?")
    assert "| Plan | Price per month | Storage |" in text
    assert "| Enterprise | $30 | Unlimited |" in text
    assert "Starter" not in text and "Business" not in text


def test_a_how_to_question_quotes_the_whole_procedure_in_order(service: Service) -> None:
    text = _answer(service, "How do I reset my password?")
    steps = [
        "On the sign-in page, click Forgot password.",
        "Enter the email address of your account.",
        "Open the reset link in the email. The link expires after 60 minutes.",
        "Choose a new password of at least 12 characters.",
    ]
    at = [text.find(step) for step in steps]
    assert -1 not in at and at == sorted(at)


def test_evidence_of_headings_alone_is_refused_with_a_piece_that_says_so_never_answered_empty(
    service: Service,
) -> None:
    outcome = service.ask("How do I take a screenshot?")
    assert (outcome.status, outcome.answer) == ("insufficient_evidence", None)
    assert [m.kind for m in outcome.missing] == ["no_relevant_evidence"]
    assert "states nothing" in outcome.missing[0].detail
