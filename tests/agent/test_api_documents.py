"""POST/GET /v1/documents and DELETE /v1/documents/{doc_id}: formats, all-or-nothing, and key groups."""

from __future__ import annotations

import json
from typing import Any

from fastapi.testclient import TestClient

from evidence_loop.agent.doors.api import Limits
from evidence_loop.agent.service import Service
from tests.agent.api_support import (
    ADMIN,
    INGEST_PUBLIC,
    INGEST_STAFF,
    PUBLIC,
    Key,
    Reply,
    api_client,
)

PROBLEM = "application/problem+json"
NEW_DOC = {
    "doc_id": "gift-cards-zh",
    "title": "礼品卡说明",
    "text": "# 礼品卡说明\n\n礼品卡自购买之日起有效期为36个月，过期后余额不退。",
    "format": "markdown",
}


def listed(client: TestClient, key: Key = ADMIN) -> dict[str, dict[str, Any]]:
    response = client.get("/v1/documents", headers=key.headers)
    assert response.status_code == 200, response.text
    return {d["doc_id"]: d for d in response.json()["documents"]}


def status_and_type(response: Reply) -> tuple[int, str]:
    return response.status_code, response.headers["content-type"]


# --- what can be sent ----------------------------------------------------------------------------------


def test_one_document_in_the_corpus_shape_is_ingested_and_listed(client: TestClient) -> None:
    response = client.post("/v1/documents", json=NEW_DOC, headers=ADMIN.headers)

    assert (response.status_code, response.json()["documents"]) == (200, 1)
    assert listed(client)["gift-cards-zh"]["title"] == "礼品卡说明"


def test_an_ingested_document_answers_the_next_question(client: TestClient) -> None:
    client.post("/v1/documents", json=NEW_DOC, headers=ADMIN.headers)

    outcome = client.post("/v1/ask", json={"question": "礼品卡有效期多久？"}, headers=PUBLIC.headers).json()

    assert (outcome["status"], outcome["answer"]["citations"][0]["doc_id"]) == ("answered", "gift-cards-zh")


def test_a_batch_is_ingested_in_one_generation(client: TestClient, service: Service) -> None:
    before = service.store.generation
    batch = {"documents": [{**NEW_DOC, "doc_id": f"gift-{i}"} for i in range(3)]}

    report = client.post("/v1/documents", json=batch, headers=ADMIN.headers).json()

    assert (report["documents"], report["generation"]) == (3, before + 1)


def test_json_lines_are_read_as_corpus_jsonl(client: TestClient) -> None:
    lines = "\n".join(json.dumps({**NEW_DOC, "doc_id": f"line-{i}"}, ensure_ascii=False) for i in range(2))

    response = client.post(
        "/v1/documents",
        content=lines.encode(),
        headers={**ADMIN.headers, "content-type": "application/x-ndjson"},
    )

    assert response.json()["documents"] == 2


def test_a_bad_json_line_is_a_422_naming_the_line(client: TestClient) -> None:
    lines = json.dumps(NEW_DOC) + "\n" + json.dumps({"doc_id": "no-text"})

    response = client.post(
        "/v1/documents",
        content=lines.encode(),
        headers={**ADMIN.headers, "content-type": "application/x-ndjson"},
    )

    assert (response.status_code, response.json()["errors"][0]["loc"]) == (422, ["body", "line 2", "text"])


def test_an_uploaded_markdown_file_takes_its_name_as_doc_id_and_its_heading_as_title(
    client: TestClient,
) -> None:
    files = {"file": ("gift-cards.md", NEW_DOC["text"].encode(), "text/markdown")}

    response = client.post("/v1/documents", files=files, data={"acl": "staff"}, headers=ADMIN.headers)

    assert response.status_code == 200, response.text
    doc = listed(client)["gift-cards"]
    assert (doc["title"], doc["acl"]) == ("礼品卡说明", ["staff"])


def test_an_upload_of_another_file_type_is_a_415_problem(client: TestClient) -> None:
    files = {"file": ("manual.pdf", b"%PDF-1.7", "application/pdf")}

    response = client.post("/v1/documents", files=files, headers=ADMIN.headers)

    assert status_and_type(response) == (415, PROBLEM)


def test_an_upload_that_is_not_utf8_is_a_400_naming_the_line(client: TestClient) -> None:
    files = {"file": ("old.txt", "第一行\n第二行".encode("gbk"), "text/plain")}

    response = client.post("/v1/documents", files=files, headers=ADMIN.headers)

    assert response.status_code == 400
    assert response.json()["detail"].startswith("old.txt:1: not valid UTF-8")


def test_an_unknown_form_field_is_a_422_naming_it(client: TestClient) -> None:
    files = {"file": ("gift-cards.md", NEW_DOC["text"].encode(), "text/markdown")}

    response = client.post("/v1/documents", files=files, data={"tags": "x"}, headers=ADMIN.headers)

    assert response.status_code == 422
    assert response.json()["detail"].startswith("unknown form fields: tags")


def test_a_doc_id_for_several_uploaded_files_is_a_422(client: TestClient) -> None:
    files = [("file", (f"{n}.md", NEW_DOC["text"].encode(), "text/markdown")) for n in ("a", "b")]

    response = client.post("/v1/documents", files=files, data={"doc_id": "x"}, headers=ADMIN.headers)

    assert response.status_code == 422


def test_another_content_type_is_a_415_problem(client: TestClient) -> None:
    response = client.post(
        "/v1/documents", content=b"doc", headers={**ADMIN.headers, "content-type": "text/plain"}
    )

    assert status_and_type(response) == (415, PROBLEM)


def test_an_unknown_field_in_a_document_is_a_422(client: TestClient) -> None:
    response = client.post("/v1/documents", json={**NEW_DOC, "tags": ["x"]}, headers=ADMIN.headers)

    assert response.json()["errors"][0]["loc"] == ["body", "tags"]


def test_a_batch_over_the_limit_is_a_413_naming_the_limit(service: Service) -> None:
    client = api_client(service, Limits(batch_documents=2))
    batch = {"documents": [{**NEW_DOC, "doc_id": f"gift-{i}"} for i in range(3)]}

    response = client.post("/v1/documents", json=batch, headers=ADMIN.headers)

    assert response.status_code == 413
    assert "the batch has 3 documents; the limit is 2" in response.json()["detail"]


def test_a_changed_text_under_a_stored_version_is_a_409_and_writes_nothing(client: TestClient) -> None:
    changed = {**NEW_DOC, "doc_id": "warranty-zh", "format": "text", "version": "1"}
    batch = {"documents": [{**NEW_DOC, "doc_id": "fresh"}, changed]}

    response = client.post("/v1/documents", json=batch, headers=ADMIN.headers)

    assert response.status_code == 409
    assert "fresh" not in listed(client)


def test_replace_overwrites_a_stored_version(client: TestClient) -> None:
    changed = {**NEW_DOC, "doc_id": "warranty-zh", "format": "text"}

    response = client.post("/v1/documents?replace=true", json=changed, headers=ADMIN.headers)

    assert (response.status_code, listed(client)["warranty-zh"]["title"]) == (200, "礼品卡说明")


# --- deleting --------------------------------------------------------------------------------------


def test_deleting_a_document_is_a_204_and_it_is_no_longer_listed(client: TestClient) -> None:
    response = client.delete("/v1/documents/warranty-zh", headers=ADMIN.headers)

    assert (response.status_code, "warranty-zh" in listed(client)) == (204, False)


def test_deleting_an_unknown_document_is_a_404_problem(client: TestClient) -> None:
    assert status_and_type(client.delete("/v1/documents/nope", headers=ADMIN.headers)) == (404, PROBLEM)


def test_a_doc_id_with_slashes_can_be_deleted(client: TestClient) -> None:
    client.post("/v1/documents", json={**NEW_DOC, "doc_id": "help/gift-cards"}, headers=ADMIN.headers)

    assert client.delete("/v1/documents/help/gift-cards", headers=ADMIN.headers).status_code == 204


# --- the key's groups bound what it manages ----------------------------------------------------------


def test_a_key_without_the_ingest_scope_is_a_403(client: TestClient) -> None:
    assert client.get("/v1/documents", headers=PUBLIC.headers).status_code == 403


def test_the_listing_leaves_out_documents_the_key_may_not_read(client: TestClient) -> None:
    assert (
        "staff-discount-zh" in listed(client, INGEST_STAFF),
        "staff-discount-zh" in listed(client, INGEST_PUBLIC),
    ) == (
        True,
        False,
    )


def test_deleting_a_document_the_key_may_not_read_is_the_same_404_as_an_unknown_one(
    client: TestClient,
) -> None:
    hidden = client.delete("/v1/documents/staff-discount-zh", headers=INGEST_PUBLIC.headers)
    unknown = client.delete("/v1/documents/no-such-doc", headers=INGEST_PUBLIC.headers)

    assert (hidden.status_code, hidden.json()["title"]) == (unknown.status_code, unknown.json()["title"])
    assert "staff-discount-zh" in listed(client)


def test_a_key_cannot_write_a_document_its_groups_could_not_read(client: TestClient) -> None:
    response = client.post("/v1/documents", json={**NEW_DOC, "acl": ["staff"]}, headers=INGEST_PUBLIC.headers)

    assert response.status_code == 403
    assert "gift-cards-zh" not in listed(client)


def test_a_key_cannot_overwrite_a_document_restricted_from_it(client: TestClient) -> None:
    takeover = {**NEW_DOC, "doc_id": "staff-discount-zh", "version": "2"}

    response = client.post("/v1/documents", json=takeover, headers=INGEST_PUBLIC.headers)

    assert response.status_code == 403
    assert listed(client)["staff-discount-zh"]["current_version"] == "1"


def test_a_key_that_cannot_read_every_group_creates_no_doc_id_even_in_its_own_groups(
    client: TestClient,
) -> None:
    # a sales document might hold the doc_id: only a key reading every group can know it is free
    response = client.post("/v1/documents", json={**NEW_DOC, "acl": ["staff"]}, headers=INGEST_STAFF.headers)

    assert (response.status_code, "gift-cards-zh" in listed(client)) == (403, False)
