"""Every way documents come in leaves the corpus in the same state: its scale for the judge measured
and committed with the generation, so a question gets the outcome `evloop eval` gives it. Where that
state cannot be had, `ask` says so and names the command that repairs it.

The command line runs with an embedder behind a loopback OpenAI-compatible endpoint (the small
deterministic one of ``tests.fake_embedder``), as a user's would run with the built-in one.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from evidence_loop.agent.doors.cli.app import main
from evidence_loop.agent.doors.cli.sample import load_sample_kb
from evidence_loop.agent.service import Service
from evidence_loop.tools.models.embedder import build_embedder
from evidence_loop.tools.models.embedder_config import EmbedConfig
from evidence_loop.tools.models.embedding import Embedder
from evidence_loop.tools.store.folder import Store
from evidence_loop.tools.store.postgres import PgStore
from evidence_loop.tools.types import DocumentInput
from tests.agent.api_support import api_client
from tests.fake_embedder import FakeEmbedder
from tests.fake_embedding_server import FakeEmbeddingServer

# The sample help centre's questions, some it answers and some it cannot: on this corpus the judge
# and the lexical rule decide several of them differently, so a path that skipped the scale shows.
QUESTIONS = [
    ("q1", "What is the refund policy for tablets?", "refuse"),
    ("q2", "How long does shipping to Hong Kong take?", "refuse"),
    ("q3", "会员积分可以转让吗？", "refuse"),
    ("q4", "How do I reset the Wi-Fi on my router?", "answer"),
    ("q5", "What colour is the company logo?", "refuse"),
    ("q6", "How much does overnight shipping cost?", "refuse"),
    ("q7", "退货需要多少天内申请？", "answer"),
    ("q8", "Does the Premium plan cover accidental damage?", "answer"),
]
MEASURED = "measured the corpus's scale from"


@pytest.fixture(scope="module")
def embedding_server() -> Iterator[FakeEmbeddingServer]:
    server = FakeEmbeddingServer().start()
    yield server
    server.stop()


@pytest.fixture
def embedding_env(embedding_server: FakeEmbeddingServer, monkeypatch: pytest.MonkeyPatch) -> Embedder:
    """The environment points `evloop` at the loopback embedder; the same embedder for the test."""
    for name, value in embedding_server.environ.items():
        monkeypatch.setenv(name, value)
    embedder = build_embedder(EmbedConfig.from_env(embedding_server.environ))
    assert embedder is not None
    return embedder


@pytest.fixture(scope="module")
def sample_set(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample help centre as an evaluation set (FORMAT.md), with ``QUESTIONS``."""
    folder = tmp_path_factory.mktemp("sample-set")
    with (folder / "corpus.jsonl").open("w", encoding="utf-8") as out:
        for doc in load_sample_kb():
            record = {"doc_id": doc.doc_id, "text": doc.text, "title": doc.title, "version": doc.version}
            out.write(json.dumps({**record, "format": doc.format, "acl": list(doc.acl)}) + "\n")
    with (folder / "questions.jsonl").open("w", encoding="utf-8") as out:
        for qid, question, expect in QUESTIONS:
            out.write(json.dumps({"id": qid, "question": question, "expect": expect}) + "\n")
    return folder


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[str, str]:
    assert main(list(args)) == 0
    captured = capsys.readouterr()
    return captured.out, captured.err


def decided(results: Path) -> dict[str, tuple[str, list[tuple[str, int, int]]]]:
    """Each question's status and evidence spans, as a results file records them."""
    lines = [json.loads(line) for line in results.read_text(encoding="utf-8").splitlines()]
    return {
        r["id"]: (r["status"], [(e["doc_id"], e["start"], e["end"]) for e in r["evidence"]]) for r in lines
    }


def big_document(sentences: int = 400) -> DocumentInput:
    """One document with as many units as the rest of the sample help centre: deleting it shrinks the
    corpus by more than a quarter."""
    lines = [
        f"Rule {i}: parcels of class {i} are kept for {i + 3} days at the depot." for i in range(sentences)
    ]
    return DocumentInput("depot-rules-en", "\n\n".join(lines), title="Depot rules")


def test_ingest_then_batch_and_ask_decide_as_eval_does(
    tmp_path: Path, sample_set: Path, embedding_env: Embedder, capsys: pytest.CaptureFixture[str]
) -> None:
    index = str(tmp_path / "index")
    out, _ = run(capsys, "ingest", str(sample_set / "corpus.jsonl"), "--index", index)
    assert MEASURED in out
    run(capsys, "batch", str(sample_set / "questions.jsonl"), "--out", str(tmp_path / "batch.jsonl"),
        "--index", index, "--no-progress")  # fmt: skip
    eval_dir = tmp_path / "eval"
    run(capsys, "eval", str(sample_set), "--out-dir", str(eval_dir), "--no-progress",
        "--embed-cache", str(tmp_path / "cache.sqlite3"))  # fmt: skip
    evaluated = decided(eval_dir / f"{sample_set.name}-adaptive.jsonl")

    assert decided(tmp_path / "batch.jsonl") == evaluated
    for qid, question, _ in QUESTIONS[:3]:
        out, err = run(capsys, "ask", question, "--index", index, "--json", "--no-trace")
        assert json.loads(out)["status"] == evaluated[qid][0]
        assert "lexical rule" not in err


@pytest.mark.parametrize("repair", [["calibrate", "--self"], ["reindex", "--no-progress"]])
def test_a_store_without_a_scale_is_named_on_ask_and_repaired_by_the_command_named(
    tmp_path: Path, embedding_env: Embedder, capsys: pytest.CaptureFixture[str], repair: list[str]
) -> None:
    index = tmp_path / "index"
    with Store.open(index, create=True, embedder=embedding_env) as store:  # as an older evloop wrote it
        store.ingest(load_sample_kb())
        assert store.scale() is None

    _, err = run(capsys, "ask", QUESTIONS[0][1], "--index", str(index), "--no-trace")
    assert "no measured scale" in err
    assert f"`evloop calibrate --self --index {index}`" in err

    out, _ = run(capsys, *repair, "--index", str(index))
    assert "measured the" in out
    _, err = run(capsys, "ask", QUESTIONS[0][1], "--index", str(index), "--no-trace")
    assert "lexical rule" not in err


def test_reindex_with_embeddings_measures_the_scale_of_a_lexical_store(
    tmp_path: Path,
    sample_set: Path,
    embedding_server: FakeEmbeddingServer,
    capsys: pytest.CaptureFixture[str],
) -> None:
    index = tmp_path / "index"
    run(capsys, "ingest", str(sample_set / "corpus.jsonl"), "--index", str(index))  # EVLOOP_EMBEDDER=none
    with Store.open(index) as store:
        assert store.scale() is None

    with pytest.MonkeyPatch.context() as env:
        for name, value in embedding_server.environ.items():
            env.setenv(name, value)
        out, _ = run(capsys, "reindex", "--embeddings", "--index", str(index), "--no-progress")
        embedder = build_embedder(EmbedConfig.from_env(embedding_server.environ))
    assert MEASURED in out
    assert embedder is not None
    with Store.open(index) as store:
        scale = store.scale()
        assert scale is not None and scale.embedder == embedder.identity.key
        assert scale.units == store.snapshot().unit_count


def test_without_an_embedder_ask_says_the_lexical_rule_decides(
    tmp_path: Path, sample_set: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    index = str(tmp_path / "index")
    run(capsys, "ingest", str(sample_set / "corpus.jsonl"), "--index", index)

    _, err = run(capsys, "ask", QUESTIONS[0][1], "--index", index, "--no-trace")

    assert "no embedder is configured (EVLOOP_EMBEDDER=none)" in err
    assert "the lexical rule decides answer-or-refuse" in err


def test_a_cli_delete_that_shrinks_the_corpus_measures_its_scale_again(
    tmp_path: Path, embedding_env: Embedder, capsys: pytest.CaptureFixture[str]
) -> None:
    index = tmp_path / "index"
    with Service.open(index, create=True, embedder=embedding_env, tracing_on=False) as service:
        service.ingest([*load_sample_kb(), big_document()])
        before = service.store.scale()
    assert before is not None

    out, _ = run(capsys, "delete", "depot-rules-en", "--index", str(index))

    assert MEASURED in out
    with Store.open(index) as store:
        after = store.scale()
        assert after is not None and after.units == store.snapshot().unit_count < before.units


def test_documents_posted_and_deleted_over_http_leave_the_scale_measured(tmp_path: Path) -> None:
    with Service.open(tmp_path / "index", create=True, embedder=FakeEmbedder(), tracing_on=False) as service:
        client = api_client(service, local=True)
        docs = [
            {"doc_id": d.doc_id, "text": d.text, "format": d.format, "version": d.version, "acl": list(d.acl)}
            for d in load_sample_kb()
        ]
        big = big_document()
        posted = client.post(
            "/v1/documents", json={"documents": [*docs, {"doc_id": big.doc_id, "text": big.text}]}
        )
        assert posted.status_code == 200
        measured = service.store.scale()
        assert measured is not None and measured.units == service.snapshot().unit_count

        assert client.delete(f"/v1/documents/{big.doc_id}").status_code == 204

        again = service.store.scale()
        assert again is not None and again.units == service.snapshot().unit_count < measured.units


def test_the_scale_is_committed_with_the_generation_an_ingest_makes(tmp_path: Path) -> None:
    """Another process that reads the new generation reads its scale too: a worker or replica that
    looked between the commit and a later measurement would decide that generation lexically."""
    index = tmp_path / "index"
    seen: list[object] = []

    def look(stage: str) -> None:
        if stage == "commit":
            with Store.open(index) as other:
                seen.append((other.generation, other.scale()))

    store = Store.open(index, create=True, embedder=FakeEmbedder(), checkpoint=look)
    with Service(store, embedder=FakeEmbedder()) as service:
        service.ingest(load_sample_kb())

    ((generation, scale),) = seen
    assert generation == 1
    assert scale is not None and scale == service_scale(index)


def service_scale(index: Path) -> object:
    with Store.open(index) as store:
        return store.scale()


def test_a_postgresql_replica_reads_the_scale_with_the_generation(pg_url: str) -> None:
    seen: list[object] = []

    def look(stage: str) -> None:
        if stage == "commit":
            with PgStore.open(pg_url) as replica:
                seen.append((replica.generation, replica.scale()))

    store = PgStore.open(pg_url, embedder=FakeEmbedder(), checkpoint=look)
    with Service(store, embedder=FakeEmbedder()) as writer:
        writer.ingest(load_sample_kb())
        written = writer.store.scale()
    with Service.open(pg_url, embedder=FakeEmbedder(), llm=None) as replica:
        outcome = replica.ask(QUESTIONS[3][1])
        assert outcome.trace is not None
        header = replica.trace(outcome.trace.id).header

    assert written is not None
    assert seen == [(1, written)]
    assert header.judge["scale"] == written.as_dict()
