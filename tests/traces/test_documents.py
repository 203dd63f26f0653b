"""The documents a schema 3 header names by hash: stored once per store, checked by verify, carried
by an export, and each run written to PostgreSQL in one statement."""

from __future__ import annotations

import json
import re
from pathlib import Path

import psycopg
import pytest

from evidence_loop.agent.doors.cli.app import main
from evidence_loop.traces.records.hashing import digest
from evidence_loop.traces.records.reader import read_trace
from evidence_loop.traces.stores.pg_store import PgTraceStore
from evidence_loop.traces.stores.store import TraceStore
from evidence_loop.traces.verification.verify import HEADER_SEQ
from tests.pg_server import PgServer
from tests.traces.conftest import SAMPLE_STEPS, HeaderFactory


def _write(store: TraceStore, make_header: HeaderFactory, run_id: str, **fields: object) -> str:
    with store.begin(make_header(run_id=run_id, **fields)) as writer:
        for step in SAMPLE_STEPS:
            writer.append(step)
        return writer.finish("answered")


def _blobs(store: TraceStore) -> dict[str, object]:
    return {path.stem: json.loads(path.read_bytes()) for path in (store.root / "blobs").glob("*.json")}


def test_the_policy_and_llm_settings_are_stored_once_and_named_by_hash(
    store: TraceStore, make_header: HeaderFactory
) -> None:
    header = make_header()
    for run_id in ("r-1", "r-2", "r-3"):
        _write(store, make_header, run_id)
    blobs = _blobs(store)
    assert blobs == {digest(header.policy): header.policy, digest(header.llm): header.llm}

    written = json.loads(store.path("r-2").read_bytes().split(b"\n")[0])
    assert "policy" not in written and "llm" not in written
    assert written["documents"] == {"policy": digest(header.policy), "llm": digest(header.llm)}
    assert written["policy_hash"] == digest(header.policy)
    trace = store.read("r-2")
    assert (trace.named("policy"), trace.named("llm")) == (header.policy, header.llm)
    assert store.verify("r-2").ok

    _write(store, make_header, "r-4", policy={"accept_score": 0.5, "max_slides": 6})
    assert len(_blobs(store)) == 3  # a new policy is one more document; the LLM's is shared


def test_verify_fails_when_a_named_document_is_missing_or_changed(
    store: TraceStore, make_header: HeaderFactory
) -> None:
    _write(store, make_header, "r-1")
    policy = store.root / "blobs" / f"{digest(make_header().policy)}.json"
    original = policy.read_bytes()

    policy.write_bytes(original.replace(b"0.75", b"0.5"))
    changed = store.verify("r-1")
    assert (changed.ok, changed.first_bad_seq) == (False, HEADER_SEQ)
    assert changed.reason.startswith("document changed: the stored policy document")

    policy.unlink()
    missing = store.verify("r-1")
    assert (missing.ok, missing.first_bad_seq) == (False, HEADER_SEQ)
    assert missing.reason.startswith("document missing: the policy document")
    assert [(run, result.ok) for run, result in store.verify_all()] == [("r-1", False)]

    policy.write_bytes(original)
    assert store.verify("r-1").ok


def test_an_export_carries_its_documents_and_verifies_without_its_store(
    store: TraceStore, make_header: HeaderFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _write(store, make_header, "r-1")
    assert main(["trace", "export", "r-1", "--traces", str(store.root), "--as-written"]) == 0
    records = json.loads(capsys.readouterr().out)
    assert records[0]["carried"] == {digest(make_header().policy): make_header().policy, **{
        digest(make_header().llm): make_header().llm}}  # fmt: skip
    export = tmp_path / "r-1.json"
    export.write_text(json.dumps(records, ensure_ascii=False), encoding="utf-8")
    fresh = tmp_path / "elsewhere"

    assert main(["trace", "verify", str(export), "--traces", str(fresh)]) == 0
    assert "r-1.json: ok - hash chain verifies over 8 events; complete" in capsys.readouterr().out
    assert main(["trace", "show", str(export), "--traces", str(fresh)]) == 0
    shown = capsys.readouterr().out
    assert f"policy    {digest(make_header().policy)[:12]}" in shown
    assert "llm       qwen2.5-7b at http://127.0.0.1:8000/v1" in shown

    records[0]["carried"][digest(make_header().policy)]["accept_score"] = 0.5
    export.write_text(json.dumps(records, ensure_ascii=False), encoding="utf-8")
    assert main(["trace", "verify", str(export), "--traces", str(fresh)]) == 1
    assert "FAILED - document changed: the stored policy document" in capsys.readouterr().out


def test_a_trace_read_without_its_store_verifies_its_chain_and_names_its_policy(
    store: TraceStore, make_header: HeaderFactory
) -> None:
    _write(store, make_header, "r-1")
    alone = read_trace(store.path("r-1"))
    assert alone.documents is None and alone.named("policy") == {}
    assert (alone.header.policy_hash, alone.header.policy) == (digest(make_header().policy), {})
    assert read_trace(store.path("r-1")) == alone and store.verify(store.path("r-1")).ok


def _statements(log: Path, start: int) -> list[str]:
    """The statements the server logged after byte ``start`` of its log."""
    text = log.read_bytes()[start:].decode("utf-8", "replace")
    return re.findall(r"LOG:  (?:statement|execute [^:]*): (.*)", text)


def test_postgresql_writes_a_run_and_its_documents_in_one_statement(
    pg_server: PgServer, pg_url: str, make_header: HeaderFactory
) -> None:
    database = pg_url.split("/")[3].split("?")[0]
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f"ALTER DATABASE {database} SET log_statement = 'all'")
    log = pg_server.root / "server.log"
    store = PgTraceStore(pg_url)
    try:
        for run_id in ("r-1", "r-2"):
            start = log.stat().st_size
            _write(store, make_header, run_id)
            # (the writer's first run of a day is followed, once it is released, by the day's anchors)
            statements = [s for s in _statements(log, start) if not s.startswith("WITH newest AS")]
            assert len(statements) == 1 and statements[0].startswith("WITH documents AS"), statements
        trace = store.read("r-2")
        assert trace.named("policy") == make_header().policy and store.verify("r-2").ok
    finally:
        store.close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        rows = conn.execute("SELECT hash, body FROM trace_documents ORDER BY hash").fetchall()
    header = make_header()
    assert {h: json.loads(body) for h, body in rows} == {
        digest(header.policy): header.policy,
        digest(header.llm): header.llm,
    }


@pytest.mark.parametrize("backend", ["folder", pytest.param("postgresql", marks=pytest.mark.postgres)])
def test_an_exported_run_imports_with_its_documents_into_a_fresh_store(
    backend: str,
    request: pytest.FixtureRequest,
    store: TraceStore,
    make_header: HeaderFactory,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    final = _write(store, make_header, "r-1")
    assert main(["trace", "export", "r-1", "--traces", str(store.root), "--as-written"]) == 0
    export = tmp_path / "r-1.json"
    export.write_text(capsys.readouterr().out, encoding="utf-8")

    where = ["--traces", str(tmp_path / "fresh")]
    if backend == "postgresql":
        where = ["--store", request.getfixturevalue("pg_url")]
    assert main(["trace", "import", str(export), *where]) == 0
    assert f"r-1: imported ({final})" in capsys.readouterr().out
    assert main(["trace", "verify", "r-1", *where]) == 0
    assert "r-1: ok - hash chain verifies over 8 events; complete" in capsys.readouterr().out
    assert main(["trace", "show", "r-1", *where]) == 0
    assert main(["trace", "import", str(export), *where]) == 2  # the run is there already
    assert "already has a trace" in capsys.readouterr().err
