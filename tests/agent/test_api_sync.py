"""A help centre kept in sync over HTTP: PUT of one document, POST /v1/sync of a source, DELETE; on both
backends (an index folder, a PostgreSQL database)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from evidence_loop.agent.doors.cli.sample import load_sample_kb
from evidence_loop.agent.service import Service
from evidence_loop.tools.store.location import Location
from tests.agent.api_support import ADMIN, INGEST_STAFF, PUBLIC, Key, api_client

GIFT = "# 礼品卡说明\n\n礼品卡自购买之日起有效期为36个月，过期后余额不退。"
GIFT_V2 = "# 礼品卡说明\n\n礼品卡自购买之日起有效期为24个月，过期后余额不退。"
HELP = "help-centre-export"


@pytest.fixture
def service(store_location: Location, tmp_path: Path) -> Iterator[Service]:
    """The sample help centre on each backend, traced."""
    with Service.open(store_location, create=True, traces=tmp_path / "traces") as opened:
        opened.ingest(load_sample_kb())
        yield opened


@pytest.fixture
def client(service: Service) -> TestClient:
    return api_client(service)


def put(client: TestClient, doc_id: str, text: str, key: Key = ADMIN, **fields: Any) -> dict[str, Any]:
    response = client.put(
        f"/v1/documents/{doc_id}", json={"text": text, "format": "markdown", **fields}, headers=key.headers
    )
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def sync(client: TestClient, docs: dict[str, str], **params: Any) -> Any:
    batch = {"documents": [{"doc_id": d, "text": t, "format": "markdown"} for d, t in docs.items()]}
    return client.post("/v1/sync", params={"source": HELP, **params}, json=batch, headers=ADMIN.headers)


def versions(client: TestClient) -> dict[str, tuple[str, list[str]]]:
    listed = client.get("/v1/documents", headers=ADMIN.headers).json()["documents"]
    return {d["doc_id"]: (d["current_version"], d["versions"]) for d in listed}


def answer_text(client: TestClient, question: str) -> str | None:
    outcome = client.post("/v1/ask", json={"question": question}, headers=PUBLIC.headers).json()
    return outcome["answer"]["text"] if outcome["answer"] else None


def test_a_put_of_new_text_makes_a_new_version_and_keeps_the_old(client: TestClient) -> None:
    put(client, "gift-cards", GIFT)
    report = put(client, "gift-cards", GIFT_V2)
    assert report["outcomes"] == [{"doc_id": "gift-cards", "version": "2", "outcome": "changed"}]
    assert versions(client)["gift-cards"] == ("2", ["1", "2"])
    assert "24个月" in (answer_text(client, "礼品卡有效期多久？") or "")


def test_a_put_of_the_same_text_changes_nothing(client: TestClient, service: Service) -> None:
    put(client, "gift-cards", GIFT)
    generation = service.store.generation
    report = put(client, "gift-cards", GIFT)
    assert (report["unchanged"], report["generation"], service.store.generation) == (
        1,
        generation,
        generation,
    )


def test_a_put_takes_a_doc_id_as_long_as_a_post_takes_and_no_longer(client: TestClient) -> None:
    longest = put(client, "a" * 512, GIFT)
    refused = client.put("/v1/documents/" + "a" * 513, json={"text": GIFT}, headers=ADMIN.headers)
    posted = client.post("/v1/documents", json={"doc_id": "a" * 513, "text": GIFT}, headers=ADMIN.headers)
    assert (longest["added"], refused.status_code, refused.json()["type"]) == (1, 422, posted.json()["type"])


def test_a_put_is_held_to_the_write_rule(client: TestClient) -> None:
    response = client.put(
        "/v1/documents/staff-discount-zh", json={"text": GIFT, "acl": []}, headers=INGEST_STAFF.headers
    )
    assert (response.status_code, response.json()["type"]) == (403, "urn:evloop:problem:write-not-allowed")


def test_a_sync_with_prune_retires_the_sources_documents_that_are_gone(client: TestClient) -> None:
    sync(client, {"gift-cards": GIFT, "gift-returns": "# 礼品卡退换\n\n礼品卡一经售出不予退换。"})
    report = sync(client, {"gift-cards": GIFT}, prune=True).json()
    assert (report["unchanged"], report["retired"]) == (1, 1)
    assert "gift-returns" not in versions(client)
    assert "不予退换" not in (answer_text(client, "礼品卡可以退换吗？") or "")


def test_a_sync_leaves_the_documents_of_other_sources(client: TestClient) -> None:
    before = set(versions(client))
    sync(client, {"gift-cards": GIFT}, prune=True)
    assert set(versions(client)) == before | {"gift-cards"}


def test_a_dry_run_sync_says_what_it_would_do_and_writes_nothing(
    client: TestClient, service: Service
) -> None:
    sync(client, {"gift-cards": GIFT})
    generation = service.store.generation
    report = sync(client, {"gift-cards": GIFT_V2, "gift-new": GIFT}, dry_run=True).json()
    assert report["dry_run"] is True
    assert report["outcomes"] == [
        {"doc_id": "gift-cards", "version": "2", "outcome": "changed"},
        {"doc_id": "gift-new", "version": "1", "outcome": "added"},
    ]
    assert (service.store.generation, versions(client)["gift-cards"]) == (generation, ("1", ["1"]))


def test_a_sync_needs_a_source(client: TestClient) -> None:
    response = client.post("/v1/sync", json={"doc_id": "a", "text": "x"}, headers=ADMIN.headers)
    assert response.status_code == 422


def test_a_delete_retires_a_document_and_keeps_its_versions(client: TestClient, service: Service) -> None:
    put(client, "gift-cards", GIFT)
    assert client.delete("/v1/documents/gift-cards", headers=ADMIN.headers).status_code == 204
    assert "gift-cards" not in versions(client)
    assert service.store.snapshot().parsed("gift-cards", "1").text == GIFT


def test_a_source_that_does_not_print_is_refused(client: TestClient) -> None:
    response = client.post(
        "/v1/sync", params={"source": "kb\n"}, json={"doc_id": "a", "text": "x"}, headers=ADMIN.headers
    )
    assert (response.status_code, response.json()["type"]) == (422, "urn:evloop:problem:bad-source")
