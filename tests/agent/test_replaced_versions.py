"""A trace citing a version whose text a later, legitimate write replaced (``--replace``,
``?replace=true``) is not tampering: verify passes and names the version ("cited version replaced"),
and replay refuses it with its own 409 (``cited-version-replaced``), as it cannot re-read the text
the run read. Text changed behind the store's back still fails verify, and replay answers 409
``trace-tampered``."""

from __future__ import annotations

import dataclasses
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from evidence_loop.agent.doors.api.app import create_app
from evidence_loop.agent.doors.cli.app import main
from evidence_loop.agent.doors.cli.sample import load_sample_kb
from evidence_loop.agent.service import Service
from evidence_loop.tools.errors import CitedVersionReplacedError, TamperedTraceError
from evidence_loop.tools.store.schema import DB_NAME

QUESTION = "LM-S10 的整机保修期是多久？"


@pytest.fixture
def service(index: Path) -> Iterator[Service]:
    with Service.open(index) as opened:
        yield opened


def _ask(service: Service) -> tuple[str, str, str, int]:
    """A run's id and the doc_id, version and start of its first evidence window."""
    outcome = service.ask(QUESTION)
    assert outcome.status == "answered" and outcome.trace is not None
    first = outcome.evidence[0]
    return outcome.run_id, first.doc_id, first.version, first.start


def _rewritten(text: str, at: int) -> str:
    return text[:at] + ("甲" if text[at] != "甲" else "乙") + text[at + 1 :]


def test_a_version_replaced_after_the_run_is_named_by_verify_and_replay(
    service: Service, index: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_id, doc_id, version, start = _ask(service)
    original = next(doc for doc in load_sample_kb() if (doc.doc_id, doc.version) == (doc_id, version))
    service.ingest([dataclasses.replace(original, text=_rewritten(original.text, start))], replace=True)

    verdict = service.verify(run_id)
    assert verdict.ok and verdict.replaced == ((doc_id, version),)
    assert f"cited version replaced: {doc_id}@{version}" in verdict.reason
    with pytest.raises(CitedVersionReplacedError, match=f"cited version replaced: {doc_id}@{version}"):
        service.replay(run_id)

    with TestClient(create_app(service, None)) as client:
        checked = client.get(f"/v1/traces/{run_id}/verify").json()
        replayed = client.post(f"/v1/traces/{run_id}/replay")
    assert checked["ok"] and checked["replaced"] == [{"doc_id": doc_id, "version": version}]
    assert replayed.status_code == 409
    assert replayed.json()["type"] == "urn:evloop:problem:cited-version-replaced"
    assert f"{doc_id}@{version}" in replayed.json()["detail"]

    assert main(["trace", "verify", run_id, "--index", str(index)]) == 0
    assert f"cited version replaced: {doc_id}@{version}" in capsys.readouterr().out
    assert main(["trace", "verify", "--all", "--index", str(index)]) == 0


def test_text_changed_behind_the_stores_back_still_fails_and_replay_answers_409(
    service: Service, index: Path
) -> None:
    run_id, doc_id, version, start = _ask(service)
    service.close()
    with sqlite3.connect(index / DB_NAME) as conn:  # the text, not its recorded sha256: no write did this
        (text,) = conn.execute(
            "SELECT text FROM versions WHERE doc_id = ? AND version = ?", (doc_id, version)
        ).fetchone()
        conn.execute(
            "UPDATE versions SET text = ? WHERE doc_id = ? AND version = ?",
            (_rewritten(text, start), doc_id, version),
        )

    with Service.open(index) as reopened:
        verdict = reopened.verify(run_id)
        assert not verdict.ok and verdict.replaced == ()
        assert "is not the text cited" in verdict.reason
        with pytest.raises(TamperedTraceError):
            reopened.replay(run_id)
        with TestClient(create_app(reopened, None)) as client:
            replayed = client.post(f"/v1/traces/{run_id}/replay")
    assert replayed.status_code == 409
    assert replayed.json()["type"] == "urn:evloop:problem:trace-tampered"


def test_a_run_never_written_is_not_found_over_http(service: Service) -> None:
    run_id, *_ = _ask(service)
    assert service.traces is not None
    day = service.traces.path(run_id).parent
    (day / "unwritten-run.jsonl").write_bytes(b"")  # what an older version left on a full disk

    with TestClient(create_app(service, None)) as client:
        shown = client.get("/v1/traces/unwritten-run")
        verified = client.get(f"/v1/traces/{run_id}/verify")
    assert shown.status_code == 404 and shown.json()["type"] == "urn:evloop:problem:not-found"
    assert verified.json()["ok"]
