"""The HTTP API refuses the doc_ids the store refuses for every caller (tools.types.doc_id_fault): a 400."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

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
