"""A conflict the evidence never reached: once a statement answers, a second lookup by its own words
and vector finds another article stating the same attribute in other words, and the conflict is
raised with both sides cited; a look-alike about another scope is set aside with its reason; a
policy recorded before the lookup runs as it did."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest

from evidence_loop.agent.outcome import Outcome
from evidence_loop.agent.service import Service
from evidence_loop.policies.config import Policy
from evidence_loop.tools.types import DocumentInput
from evidence_loop.traces.records.steps import ConflictScanStep
from tests.fake_embedder import FakeEmbedder

RETURNS = DocumentInput(
    "returns",
    "# Returns\n\nYou can send back any unopened item within 30 days of delivery.\n\n## Your money\n\n"
    "Your money is paid back to the original card within 5 business days after we receive the parcel.\n",
    format="markdown",
)
FAQ = DocumentInput(  # not one word of the question: recall never reaches it
    "refund-faq",
    "# Refund FAQ\n\nRefunds usually reach your original card within 10 business days after we "
    "receive the parcel.\n",
    format="markdown",
)
HONG_KONG = DocumentInput(  # the same words, for one place: a rule of its own
    "refunds-hong-kong",
    "# Refunds in Hong Kong\n\nIn Hong Kong, refunds usually reach your original card within 10 business "
    "days after we receive the parcel.\n",
    format="markdown",
)
FILLER = [
    DocumentInput(f"topic-{i}", f"# Topic {i}\n\n{text}\n", format="markdown")
    for i, text in enumerate(
        [
            "Passwords must have at least 8 characters and one digit.",
            "You can change your email address under Settings > Profile.",
            "Gift vouchers never expire and can be used on any order.",
            "Our chat team answers from 9 am to 6 pm on weekdays.",
            "Invoices are sent to the email address on your account.",
        ]
    )
]
QUESTION = "how long till i get my money back"


def service_over(tmp_path: Path, docs: list[DocumentInput], policy: Policy | None = None) -> Service:
    service = Service.open(tmp_path / "index", create=True, embedder=FakeEmbedder(), policy=policy)
    service.ingest([*docs, *FILLER])
    return service


@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """Both articles, ingested once for the tests that only ask."""
    service = service_over(tmp_path_factory.mktemp("both"), [RETURNS, FAQ])
    yield service
    service.close()


def sides(outcome: Outcome) -> list[tuple[str, str]]:
    return [(side.citation.doc_id, side.value) for c in outcome.conflicts for side in c.values]


def test_another_article_stating_the_answer_in_other_words_is_a_conflict(both: Service) -> None:
    outcome = both.ask(QUESTION)

    assert outcome.status == "conflicting_evidence"
    assert sorted(sides(outcome)) == [("refund-faq", "10 business days"), ("returns", "5 business days")]


def test_each_side_of_the_wider_conflict_is_cited_at_its_exact_offsets(both: Service) -> None:
    outcome = both.ask(QUESTION)

    texts = {RETURNS.doc_id: RETURNS.text, FAQ.doc_id: FAQ.text}
    cited = [side.citation for c in outcome.conflicts for side in c.values]
    assert cited and all(texts[c.doc_id][c.start : c.end] == c.quote for c in cited)


def test_before_the_wider_lookup_the_same_articles_were_answered_without_a_conflict(tmp_path: Path) -> None:
    before = dataclasses.replace(Policy(), conflict_wider_k=0)
    service = service_over(tmp_path, [RETURNS, FAQ], before)
    outcome = service.ask(QUESTION)
    service.close()

    assert (outcome.status, outcome.conflicts) == ("answered", [])


def test_a_look_alike_about_one_place_is_set_aside_with_its_reason(tmp_path: Path) -> None:
    service = service_over(tmp_path, [RETURNS, HONG_KONG])
    outcome = service.ask(QUESTION)
    scans = [e.data for e in service.trace(outcome.run_id).events if isinstance(e.data, ConflictScanStep)]
    service.close()

    assert (outcome.status, outcome.conflicts) == ("answered", [])
    dropped = [d for scan in scans for d in scan.dropped]
    assert [(d["values"][1]["doc_id"], "'hongkong'" in d["dropped"]) for d in dropped] == [
        ("refunds-hong-kong", True)
    ]
