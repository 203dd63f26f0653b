"""Who may write what (docs/write-permissions.md), over HTTP and through ``Service``, on both backends.

A key writes (creates, replaces, updates, deletes) a document only when it holds every group of the
document's ACL, the live version's, the named stored version's and the new one alike; a public
document takes the ``publish`` scope. A refusal is a 403 problem that shows no document's text, and
writes nothing of its batch.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from evidence_loop.agent.access.keys import Keyring
from evidence_loop.agent.access.write_access import Writer
from evidence_loop.agent.doors.cli.app import main
from evidence_loop.agent.service import Service
from evidence_loop.tools.errors import DocIdNotWritableError, InputError, NotFoundError, WriteRefusedError
from evidence_loop.tools.store.location import Location
from evidence_loop.tools.types import DocumentInput
from tests.agent.api_support import Key, api_client

ROOT = Key("root", "wk-root", ("alpha", "beta", "gamma"), ("ingest", "publish"))
KA = Key("ka", "wk-alpha", ("alpha",), ("ingest",))
KA_PUBLISH = Key("ka-publish", "wk-alpha-publish", ("alpha",), ("ingest", "publish"))
KEYS = (ROOT, KA, KA_PUBLISH)
WRITE_NOT_ALLOWED = "urn:evloop:problem:write-not-allowed"
NOT_WRITABLE = "urn:evloop:problem:doc-id-not-writable"

SEEDS = (
    DocumentInput("shared-ag", "Shared rule. Alpha and gamma refund within 14 days.", acl=("alpha", "gamma")),
    DocumentInput("alpha-only", "Alpha rule. Alpha orders ship within 3 days.", acl=("alpha",)),
    DocumentInput("alpha-only", "Old rule. Beta kept 9 units.", version="old", acl=("alpha", "beta")),
    DocumentInput("alpha-only", "Alpha rule. Alpha orders ship within 2 days.", version="2", acl=("alpha",)),
    DocumentInput("public-faq", "Public rule. Anyone may return a tablet within 30 days."),
    DocumentInput("gamma-doc", "Gamma rule. The gamma vault code is 4417.", acl=("gamma",)),
)  # fmt: skip
SEED_TEXTS = tuple(d.text for d in SEEDS)


def doc(
    doc_id: str, version: str, acl: tuple[str, ...], text: str = "New rule. Orders ship at once."
) -> dict[str, Any]:
    return {"doc_id": doc_id, "version": version, "acl": list(acl), "text": text}


@pytest.fixture
def service(store_location: Location) -> Iterator[Service]:
    service = Service.open(store_location, create=True)
    service.ingest(SEEDS)
    yield service
    service.close()


@pytest.fixture
def client(service: Service) -> TestClient:
    return api_client(service, keys_for=KEYS)


def live(service: Service) -> dict[str, tuple[str, tuple[str, ...]]]:
    return {d.doc_id: (d.current_version, d.acl) for d in service.documents()}


def post(client: TestClient, key: Key, body: dict[str, Any], replace: bool = False) -> tuple[int, str]:
    response = client.post(f"/v1/documents?replace={str(replace).lower()}", json=body, headers=key.headers)
    assert not any(text in response.text for text in SEED_TEXTS), response.text
    return response.status_code, response.json().get("type", "")


def delete(client: TestClient, key: Key, doc_id: str) -> tuple[int, str]:
    response = client.delete(f"/v1/documents/{doc_id}", headers=key.headers)
    return response.status_code, response.json().get("type", "") if response.content else ""


# --- one group in common is not enough --------------------------------------------------------------


def test_a_key_cannot_change_a_document_that_another_group_also_reads(
    client: TestClient, service: Service
) -> None:
    before = live(service)

    assert post(client, KA, doc("shared-ag", "2", ("alpha",))) == (403, WRITE_NOT_ALLOWED)
    assert post(client, KA, doc("shared-ag", "2", ("alpha", "gamma"))) == (403, WRITE_NOT_ALLOWED)
    assert live(service) == before


def test_the_refusal_names_the_groups_of_the_live_acl_the_key_lacks(client: TestClient) -> None:
    response = client.post("/v1/documents", json=doc("shared-ag", "2", ("alpha",)), headers=KA.headers)

    assert "gamma" in response.json()["detail"]


def test_a_key_holding_every_group_of_the_document_writes_it(client: TestClient, service: Service) -> None:
    assert post(client, KA, doc("alpha-only", "3", ("alpha",)))[0] == 200
    assert post(client, ROOT, doc("shared-ag", "2", ("alpha", "gamma")))[0] == 200
    assert live(service)["alpha-only"] == ("3", ("alpha",))
    assert live(service)["shared-ag"] == ("2", ("alpha", "gamma"))


def test_a_key_cannot_widen_a_document_to_a_group_it_does_not_hold(
    client: TestClient, service: Service
) -> None:
    response = client.post(
        "/v1/documents", json=doc("alpha-only", "3", ("alpha", "gamma")), headers=KA.headers
    )

    assert (response.status_code, response.json()["type"]) == (403, WRITE_NOT_ALLOWED)
    assert "gamma" in response.json()["detail"]
    assert live(service)["alpha-only"] == ("2", ("alpha",))


def test_creating_a_document_with_a_group_the_creator_lacks_is_refused(
    client: TestClient, service: Service
) -> None:
    assert post(client, ROOT, doc("delta-new", "1", ("alpha", "delta"))) == (403, WRITE_NOT_ALLOWED)
    assert post(client, ROOT, doc("alpha-new", "1", ("alpha",)))[0] == 200
    assert "delta-new" not in live(service)


def test_a_key_that_cannot_create_doc_ids_gets_the_same_refusal_for_a_hidden_and_a_free_one(
    client: TestClient,
) -> None:
    assert post(client, KA, doc("gamma-doc", "2", ("alpha",))) == post(
        client, KA, doc("free-doc", "1", ("alpha",))
    )
    assert post(client, KA, doc("free-doc", "1", ("alpha",))) == (403, NOT_WRITABLE)


# --- a stored version is guarded by its own ACL -----------------------------------------------------


def test_replacing_a_stored_version_takes_every_group_of_that_version(
    client: TestClient, service: Service
) -> None:
    attempt = doc("alpha-only", "old", ("alpha",), "Old alpha rule, rewritten.")

    status = client.post("/v1/documents?replace=true", json=attempt, headers=KA.headers)

    assert (status.status_code, status.json()["type"]) == (403, WRITE_NOT_ALLOWED)
    assert (
        "beta" not in status.json()["detail"]
    )  # the version is not the key's to read: its groups stay unnamed
    assert service.snapshot().parsed("alpha-only", "old").text == SEEDS[2].text


def test_a_key_holding_every_group_of_the_stored_version_replaces_it(
    client: TestClient, service: Service
) -> None:
    attempt = doc("alpha-only", "old", ("alpha", "beta"), "Old alpha rule, rewritten.")

    assert post(client, ROOT, attempt, replace=True)[0] == 200
    assert service.snapshot().parsed("alpha-only", "old").text == "Old alpha rule, rewritten."


# --- delete ------------------------------------------------------------------------------------------


def test_deleting_takes_every_group_of_the_live_acl(client: TestClient, service: Service) -> None:
    assert delete(client, KA, "shared-ag") == (403, WRITE_NOT_ALLOWED)
    assert delete(client, KA, "alpha-only") == (204, "")
    assert set(live(service)) == {"shared-ag", "public-faq", "gamma-doc"}


def test_deleting_a_hidden_document_is_the_same_404_as_an_unknown_one(
    client: TestClient, service: Service
) -> None:
    hidden = client.delete("/v1/documents/gamma-doc", headers=KA.headers)
    unknown = client.delete("/v1/documents/no-such-doc", headers=KA.headers)

    assert (hidden.status_code, hidden.json()["detail"].replace("gamma-doc", "X")) == (
        unknown.status_code,
        unknown.json()["detail"].replace("no-such-doc", "X"),
    )
    assert hidden.status_code == 404
    assert "gamma-doc" in live(service)


# --- public documents --------------------------------------------------------------------------------


def test_writing_a_public_document_takes_the_publish_scope(client: TestClient, service: Service) -> None:
    assert post(client, KA, doc("public-faq", "2", ())) == (403, WRITE_NOT_ALLOWED)
    assert post(client, KA_PUBLISH, doc("public-faq", "2", ()))[0] == 200
    assert live(service)["public-faq"] == ("2", ())


def test_making_a_document_public_takes_the_publish_scope(client: TestClient, service: Service) -> None:
    assert post(client, KA, doc("alpha-only", "3", ())) == (403, WRITE_NOT_ALLOWED)
    assert post(client, KA, doc("public-faq", "2", ("alpha",))) == (403, WRITE_NOT_ALLOWED)
    assert post(client, KA_PUBLISH, doc("alpha-only", "3", ()))[0] == 200
    assert live(service)["alpha-only"] == ("3", ())


def test_deleting_a_public_document_takes_the_publish_scope(client: TestClient, service: Service) -> None:
    response = client.delete("/v1/documents/public-faq", headers=KA.headers)

    assert (response.status_code, response.json()["type"]) == (403, WRITE_NOT_ALLOWED)
    assert "publish" in response.json()["detail"]
    assert delete(client, KA_PUBLISH, "public-faq") == (204, "")


def test_a_refused_document_writes_nothing_of_its_batch(client: TestClient, service: Service) -> None:
    batch = {"documents": [doc("alpha-only", "3", ("alpha",)), doc("shared-ag", "2", ("alpha",))]}

    assert post(client, KA, batch) == (403, WRITE_NOT_ALLOWED)
    assert live(service)["alpha-only"] == ("2", ("alpha",))


# --- the same rule through Service, when a writer is given -------------------------------------------


def as_writer(key: Key, creates: bool = False) -> Writer:
    return Writer(key.name, frozenset(key.groups), publish="publish" in key.scopes, creates=creates)


def test_service_ingest_with_a_writer_enforces_the_rule(service: Service) -> None:
    refused = DocumentInput("shared-ag", "Shared rule. Refunds within 1 day.", version="2", acl=("alpha",))

    with pytest.raises(WriteRefusedError, match="gamma"):
        service.ingest([refused], writer=as_writer(KA))
    with pytest.raises(DocIdNotWritableError):
        service.ingest([DocumentInput("free-doc", "A rule.", acl=("alpha",))], writer=as_writer(KA))
    with pytest.raises(WriteRefusedError, match="publish"):
        service.ingest([DocumentInput("public-faq", "A rule.", version="2")], writer=as_writer(KA))
    assert (
        service.ingest(
            [DocumentInput("free-doc", "A rule.", acl=("alpha",))], writer=as_writer(KA, True)
        ).documents
        == 1
    )
    assert live(service)["shared-ag"] == ("1", ("alpha", "gamma"))


def test_service_delete_with_a_writer_enforces_the_rule(service: Service) -> None:
    with pytest.raises(WriteRefusedError):
        service.delete("shared-ag", writer=as_writer(KA))
    with pytest.raises(NotFoundError):
        service.delete("gamma-doc", writer=as_writer(KA))
    service.delete("alpha-only", writer=as_writer(KA))

    assert set(live(service)) == {"shared-ag", "public-faq", "gamma-doc"}


def test_service_without_a_writer_writes_as_the_operator(service: Service) -> None:
    service.ingest([DocumentInput("shared-ag", "Shared rule. Refunds within 1 day.", version="2")])

    assert live(service)["shared-ag"] == ("2", ())


# --- the publish scope in the keys file --------------------------------------------------------------


def test_keys_add_grants_publish_with_ingest(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    keys = tmp_path / "keys.json"

    assert main(["keys", "add", "help-centre", "--scopes", "ingest,publish", "--file", str(keys)]) == 0
    assert Keyring.load(keys).keys[0].scopes == {"ingest", "publish"}


def test_keys_add_refuses_publish_without_ingest(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    keys = tmp_path / "keys.json"

    assert main(["keys", "add", "x", "--scopes", "ask,publish", "--file", str(keys)]) == 2
    assert "ingest,publish" in capsys.readouterr().err
    assert not keys.exists()


def test_a_keys_file_granting_publish_without_ingest_is_refused(tmp_path: Path) -> None:
    keys = tmp_path / "keys.json"
    record = {"name": "x", "sha256": "0" * 64, "groups": [], "scopes": ["publish"]}
    keys.write_text(json.dumps({"keys": [record]}))

    with pytest.raises(InputError, match="needs the scope ingest"):
        Keyring.load(keys)


# --- the help-centre writer of docs/write-permissions.md ----------------------------------------------

HELP_CENTRE = Key("help-centre", "wk-help", (), ("ingest", "publish"))


def test_the_documented_help_centre_key_creates_public_articles_while_other_keys_hold_groups(
    service: Service,
) -> None:
    client = api_client(service, keys_for=(*KEYS, HELP_CENTRE))

    assert post(client, HELP_CENTRE, doc("new-article", "1", ()))[0] == 200
    assert live(service)["new-article"] == ("1", ())


def test_the_help_centre_key_cannot_take_a_doc_id_a_hidden_document_holds(service: Service) -> None:
    client = api_client(service, keys_for=(*KEYS, HELP_CENTRE))

    response = client.post("/v1/documents", json=doc("gamma-doc", "2", ()), headers=HELP_CENTRE.headers)

    assert (response.status_code, response.json()["type"]) == (403, NOT_WRITABLE)
    assert "4417" not in response.text and live(service)["gamma-doc"] == ("1", ("gamma",))


def test_a_key_with_publish_creates_no_restricted_doc_id_it_could_not_tell_free(service: Service) -> None:
    response = api_client(service, keys_for=KEYS).post(
        "/v1/documents", json=doc("alpha-new", "1", ("alpha",)), headers=KA_PUBLISH.headers
    )

    assert (response.status_code, response.json()["rule"]) == (403, "create-doc-id")
    assert "cover every group of the keys file" in response.json()["allowed_by"]


def test_a_refusal_names_the_rule_and_the_groups_that_would_allow_it(client: TestClient) -> None:
    response = client.post("/v1/documents", json=doc("shared-ag", "2", ("alpha",)), headers=KA.headers)

    body = response.json()
    assert (body["rule"], body["allowed_by"]) == ("every-group", "a key that also holds gamma")


def test_a_refusal_of_a_public_document_names_the_publish_scope(client: TestClient) -> None:
    body = client.post("/v1/documents", json=doc("public-faq", "2", ()), headers=KA.headers).json()

    assert body["rule"] == "publish"
    assert "--scopes ingest,publish" in body["allowed_by"]
