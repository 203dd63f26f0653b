"""What a caller cannot learn about documents its groups may not read: not a word, not a score, not
that they exist. Spelling, term weights, BM25 scores, fingerprints, the readiness probe and the
documents routes answer as if the restricted documents were not there."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from evidence_loop.agent.doors.cli.sample import load_sample_kb
from evidence_loop.agent.service import Service
from evidence_loop.policies.config import Policy
from evidence_loop.tools.types import DocumentInput
from tests.agent.api_support import (
    ADMIN,
    INGEST_PUBLIC,
    INGEST_STAFF,
    PUBLIC,
    STAFF,
    Key,
    api_client,
    open_sample,
)

KESTREL = DocumentInput(
    "refund-approvals-staff",
    "# Refund approvals\n\n## Who approves\n\nRefunds above 2,000 yuan are approved by the Kestrel desk. "
    "Kestrel reviews each request within two working days.\n",
    title="Refund approvals",
    format="markdown",
    acl=("staff",),
)
TYPO = "who approves, kestrex?"
QUESTIONS = (
    TYPO,
    "Who approves refunds above 2,000 yuan?",
    "How long is the warranty of the LM-X200 tablet?",
    "What discount can sales reps offer schools on the LM-X200?",
    "员工购买学习设备打几折？",
    "LM-S10 整机保修多久？",
    "满多少元可以免费配送？",
    "会员购买学习设备有什么折扣？员工呢？",
)
# Differ from run to run whatever the corpus: identity, time, and the hashes chained from them.
VOLATILE = {"run_id", "latency_ms", "trace", "created_at", "hash", "prev_hash"}


@pytest.fixture
def both(tmp_path: Path) -> Iterator[tuple[TestClient, TestClient]]:
    """Clients of the sample help centre with its staff pages and Kestrel's, and of its public pages only."""
    everything = open_sample(tmp_path / "all", extra=(KESTREL,))
    only = Service.open(tmp_path / "public" / "index", create=True)
    only.ingest([d for d in load_sample_kb() if not d.acl])
    yield api_client(everything), api_client(only)
    everything.close()
    only.close()


def ask(client: TestClient, question: str, key: Key = PUBLIC) -> dict[str, Any]:
    response = client.post("/v1/ask", json={"question": question}, headers=key.headers)
    assert response.status_code == 200, response.text
    return dict(response.json())


def trace_of(client: TestClient, run_id: str, key: Key = PUBLIC) -> dict[str, Any]:
    response = client.get(f"/v1/traces/{run_id}", headers=key.headers)
    assert response.status_code == 200, response.text
    return dict(response.json())


def stable(value: Any) -> Any:
    """``value`` without the fields that differ between any two runs."""
    if isinstance(value, dict):
        return {k: stable(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [stable(v) for v in value]
    return value


def test_a_public_caller_misspelling_a_staff_only_word_learns_nothing_of_it(
    both: tuple[TestClient, TestClient],
) -> None:
    client, _ = both
    outcome = ask(client, TYPO)
    trace = trace_of(client, outcome["run_id"])

    found = {
        part: "kestrel" in repr(value).lower()
        for part, value in (
            ("outcome", outcome),
            ("missing", outcome["missing"]),
            ("signals", outcome["signals"]),
            ("trace", trace),
        )
    }
    assert found == {"outcome": False, "missing": False, "signals": False, "trace": False}


def test_a_staff_caller_still_gets_the_staff_word_corrected(both: tuple[TestClient, TestClient]) -> None:
    client, _ = both

    outcome = ask(client, TYPO, STAFF)

    assert (outcome["status"], {e["doc_id"] for e in outcome["evidence"]} >= {KESTREL.doc_id}) == (
        "answered",
        True,
    )


def test_public_outcomes_and_traces_are_identical_with_and_without_restricted_documents(
    both: tuple[TestClient, TestClient],
) -> None:
    everything, only = both

    def seen(client: TestClient, question: str) -> tuple[Any, Any]:
        outcome = ask(client, question)
        return stable(outcome), stable(trace_of(client, outcome["run_id"]))

    with_staff = [seen(everything, q) for q in QUESTIONS]
    without = [seen(only, q) for q in QUESTIONS]

    assert [o["status"] for o, _ in with_staff] == [o["status"] for o, _ in without]
    assert with_staff == without


def test_readyz_says_the_same_with_and_without_restricted_documents(
    both: tuple[TestClient, TestClient],
) -> None:
    everything, only = both

    assert (
        everything.get("/readyz").json()
        == only.get("/readyz").json()
        == {"status": "ready", "policy": Policy().digest()}
    )


def test_writing_a_hidden_doc_id_gets_the_same_refusal_as_writing_a_free_one(client: TestClient) -> None:
    def attempt(doc_id: str) -> tuple[int, dict[str, Any]]:
        doc = {"doc_id": doc_id, "text": "# Gift cards\n\nGift cards never expire.\n", "version": "9"}
        response = client.post("/v1/documents", json=doc, headers=INGEST_PUBLIC.headers)
        body = dict(response.json())
        return response.status_code, {**body, "detail": body["detail"].replace(doc_id, "<id>")}

    hidden, free = attempt("staff-discount-zh"), attempt("gift-cards-zh")

    assert hidden == free
    assert hidden[0] == 403


def test_deleting_a_hidden_doc_id_gets_the_same_answer_as_deleting_a_free_one(client: TestClient) -> None:
    def attempt(doc_id: str) -> tuple[int, dict[str, Any]]:
        response = client.delete(f"/v1/documents/{doc_id}", headers=INGEST_PUBLIC.headers)
        body = dict(response.json())
        return response.status_code, {**body, "detail": body["detail"].replace(doc_id, "<id>")}

    assert attempt("staff-discount-zh") == attempt("gift-cards-zh")


def test_a_key_rewrites_the_documents_it_can_read(client: TestClient) -> None:
    update = {
        "doc_id": "staff-discount-zh",
        "text": "# 员工优惠\n\n员工购机享受8折。\n",
        "version": "2",
        "acl": ["staff"],
    }

    response = client.post("/v1/documents", json=update, headers=INGEST_STAFF.headers)

    assert (response.status_code, response.json()["versions_added"]) == (200, 1)


def test_a_key_covering_every_group_of_the_keys_file_creates_new_documents(client: TestClient) -> None:
    doc = {"doc_id": "gift-cards-zh", "text": "# 礼品卡\n\n礼品卡长期有效。\n", "acl": ["staff"]}

    response = client.post("/v1/documents", json=doc, headers=ADMIN.headers)

    assert response.status_code == 200
