"""The HTTP API refuses the doc_ids the store refuses for every caller (tools.types.doc_id_fault): a 400."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from evidence_loop.agent.service import Service
from evidence_loop.tools.errors import InputError
from evidence_loop.tools.types import DocumentInput
from tests.agent.api_support import ADMIN

PROBLEM = "application/problem+json"
UNSAFE = ["a\x00b", "a\nb", "forged\r\n200 OK", "x\u202etxt.exe"]


def documents(client: TestClient) -> set[str]:
    return {d["doc_id"] for d in client.get("/v1/documents", headers=ADMIN.headers).json()["documents"]}


@pytest.mark.parametrize("doc_id", UNSAFE)
def test_a_json_document_with_a_control_character_in_its_doc_id_is_a_400(
    client: TestClient, doc_id: str
) -> None:
    before = documents(client)
    batch = {
        "documents": [{"doc_id": "fine", "text": "Fine text."}, {"doc_id": doc_id, "text": "Some text."}]
    }

    response = client.post("/v1/documents", json=batch, headers=ADMIN.headers)

    assert (response.status_code, response.headers["content-type"]) == (400, PROBLEM)
    assert "control character" in response.json()["detail"]
    assert documents(client) == before


@pytest.mark.parametrize("doc_id", UNSAFE)
def test_an_ndjson_line_with_a_control_character_in_its_doc_id_is_a_400(
    client: TestClient, doc_id: str
) -> None:
    line = json.dumps({"doc_id": doc_id, "text": "Some text."})

    response = client.post(
        "/v1/documents",
        content=line.encode(),
        headers={**ADMIN.headers, "content-type": "application/x-ndjson"},
    )

    assert response.status_code == 400
    assert "control character" in response.json()["detail"]


CAFE_NFC, CAFE_NFD = "caf\u00e9", "cafe\u0301"
LOOK_ALIKE = ["ca\u200bfe", "\ufeffcafe", "c\u0430fe", "\uff43afe", "保修\u2060政策"]


@pytest.mark.parametrize("doc_id", LOOK_ALIKE)
def test_a_document_under_an_id_that_looks_like_another_is_a_400(client: TestClient, doc_id: str) -> None:
    before = documents(client)

    response = client.post(
        "/v1/documents", json={"doc_id": doc_id, "text": "Some text."}, headers=ADMIN.headers
    )

    assert (response.status_code, response.headers["content-type"]) == (400, PROBLEM)
    assert documents(client) == before


def test_an_id_sent_in_nfd_is_stored_in_nfc_and_deleted_by_either(client: TestClient) -> None:
    sent = client.post(
        "/v1/documents", json={"doc_id": CAFE_NFD, "text": "The café opens at nine."}, headers=ADMIN.headers
    )
    assert sent.status_code == 200, sent.text
    assert CAFE_NFC in documents(client) and CAFE_NFD not in documents(client)

    deleted = client.delete(f"/v1/documents/{CAFE_NFD}", headers=ADMIN.headers)

    assert deleted.status_code == 204
    assert CAFE_NFC not in documents(client)


def test_an_uploaded_file_named_in_nfd_is_stored_in_nfc(client: TestClient) -> None:
    files = {"file": (f"{CAFE_NFD}.md", "# Café\n\nThe café opens at nine.\n".encode(), "text/markdown")}

    response = client.post("/v1/documents", files=files, headers=ADMIN.headers)

    assert response.status_code == 200, response.text
    assert CAFE_NFC in documents(client)


def test_the_service_takes_and_deletes_an_id_in_nfc_whichever_spelling_it_is_given(service: Service) -> None:
    service.ingest([DocumentInput(CAFE_NFD, "The café opens at nine.")])
    assert CAFE_NFC in {d.doc_id for d in service.documents()}

    service.delete(CAFE_NFD)

    assert CAFE_NFC not in {d.doc_id for d in service.documents()}
    with pytest.raises(InputError):
        service.ingest([DocumentInput("c\u0430fe", "Some text.")])
