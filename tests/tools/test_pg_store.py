"""The PostgreSQL store: migrations only by `evloop migrate`, the embedded store's corpus to the bit,
vectors shared by replicas, writes serialised by the advisory lock, new generations followed.

The ingest rules themselves run on both backends in tests/tools/test_store_ingest.py.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np
import psycopg
import pytest

from evidence_loop.agent.doors.cli.app import main
from evidence_loop.agent.doors.cli.sample import load_sample_kb
from evidence_loop.tools.errors import EmbedderError, IndexStateError
from evidence_loop.tools.store.folder import Store
from evidence_loop.tools.store.pg import redact
from evidence_loop.tools.store.pg_schema import LATEST, WRITE_LOCK, applied, migrate
from evidence_loop.tools.store.postgres import PgStore
from evidence_loop.tools.types import DocumentInput
from tests.fake_embedder import FakeEmbedder
from tests.pg_server import PgServer

WIFI = DocumentInput("wifi", "Connecting\nOpen Settings and choose the wifi network.\nEnter the password.")
REFUND = DocumentInput("refund", "Refunds\nA refund is paid within seven days of the return.")
QUESTIONS = ("LM-S10 整机保修多久", "退款 优惠券", "reset the device password", "课程 改期")
# Bound on waiting for another connection to reach a state: a busy 2-core machine meets it.
WAIT_S = 60.0


def _hits(store: Store) -> list[list[tuple[str, str, int, float]]]:
    snapshot = store.snapshot()
    return [
        [(h.unit.doc_id, h.unit.version, h.unit.ordinal, h.score) for h in snapshot.search(q, 8)]
        for q in QUESTIONS
    ]


def test_a_database_that_was_not_migrated_is_refused_with_the_command_that_fixes_it(
    pg_server: PgServer,
) -> None:
    url = pg_server.new_database(migrated=False)
    with pytest.raises(IndexStateError, match=r"no evloop schema.*run `evloop migrate --store "):
        PgStore.open(url)
    with psycopg.connect(url) as conn:
        assert applied(conn) == 0  # nothing was created on the way


def test_migrate_applies_each_migration_once(pg_server: PgServer, capsys: pytest.CaptureFixture[str]) -> None:
    url = pg_server.new_database(migrated=False)
    assert main(["migrate", "--store", url]) == 0
    assert main(["migrate", "--store", url]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("applied 1: ")
    assert out[-1] == f"schema version {LATEST} at {redact(url)} (0 applied)"
    with psycopg.connect(url, autocommit=True) as conn:
        assert migrate(conn) == []


def test_a_command_on_a_database_that_was_not_migrated_exits_1_naming_migrate(
    pg_server: PgServer, capsys: pytest.CaptureFixture[str]
) -> None:
    url = pg_server.new_database(migrated=False)
    assert main(["docs", "--store", url]) == 1
    assert "evloop migrate --store" in capsys.readouterr().err


def test_reindex_on_a_database_says_it_keeps_no_index_files_and_wrote_nothing(
    pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with PgStore.open(pg_url) as store:
        store.ingest([WIFI, REFUND])
        units = store.snapshot().unit_count
    assert main(["reindex", "--store", pg_url]) == 0

    out = capsys.readouterr().out
    assert out.startswith(f"nothing to rebuild: the store at {redact(pg_url)} keeps no index files")
    assert f"generation 1's index in memory; built it here from the database ({units} units)" in out
    with PgStore.open(pg_url) as store:
        assert store.generation == 1


def test_the_password_of_a_url_is_never_shown() -> None:
    assert (
        redact("postgresql://evloop:s3cret@db.internal:5432/kb")
        == "postgresql://evloop:***@db.internal:5432/kb"
    )


def test_the_same_corpus_gives_the_same_snapshot_on_either_backend(pg_url: str, tmp_path: Path) -> None:
    docs = load_sample_kb(include_optional=True)
    with Store.open(tmp_path / "ix", create=True) as folder, PgStore.open(pg_url) as shared:
        reports = folder.ingest(docs), shared.ingest(docs)
        assert replace(reports[0], seconds=0) == replace(reports[1], seconds=0)
        a, b = folder.snapshot(), shared.snapshot()
        assert (a.fingerprint, a.unit_count, a.generation) == (b.fingerprint, b.unit_count, b.generation)
        assert _hits(folder) == _hits(shared)
        assert folder.documents() == shared.documents()
        assert a.parsed("warranty-zh", "1") == b.parsed("warranty-zh", "1")


def test_a_replica_reads_the_vectors_another_one_embedded(pg_url: str) -> None:
    with PgStore.open(pg_url, embedder=FakeEmbedder("a")) as writer:
        writer.ingest([WIFI, REFUND])
        written = writer.snapshot().dense_index
    again = FakeEmbedder("a")
    with PgStore.open(pg_url, embedder=again) as replica:
        loaded = replica.snapshot().dense_index
    assert written is not None and loaded is not None
    assert np.array_equal(written.matrix, loaded.matrix) and again.embedded == []
    with pytest.raises(EmbedderError, match=r"made by fake:a.*configured embedder is fake:b"):
        PgStore.open(pg_url, embedder=FakeEmbedder("b"))


def test_an_ingest_waits_for_the_write_lock_and_lands_in_the_next_generation(pg_url: str) -> None:
    with PgStore.open(pg_url) as store, psycopg.connect(pg_url) as holder:
        holder.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))  # another writer's transaction
        done: list[int] = []
        worker = threading.Thread(target=lambda: done.append(store.ingest([WIFI]).generation))
        worker.start()
        _wait_for_lock_waiter(pg_url)
        assert done == [] and store.generation == 0  # it waits; nothing interleaves
        holder.commit()
        worker.join(WAIT_S)
        assert done == [1] and [d.doc_id for d in store.documents()] == ["wifi"]


def test_two_stores_ingesting_at_once_each_commit_a_whole_batch(pg_url: str) -> None:
    batches = [[DocumentInput(f"a{i}", f"Alpha {i}\nLine {i}.") for i in range(20)],
               [DocumentInput(f"b{i}", f"Beta {i}\nLine {i}.") for i in range(20)]]  # fmt: skip
    stores = [PgStore.open(pg_url), PgStore.open(pg_url)]
    generations: list[int] = []
    workers = [
        threading.Thread(target=lambda s=s, b=b: generations.append(s.ingest(b).generation))
        for s, b in zip(stores, batches, strict=True)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(WAIT_S)
    with PgStore.open(pg_url) as reader:
        assert sorted(generations) == [1, 2] and reader.generation == 2
        first = reader.snapshot(1).current_versions()
        assert sorted(first) in (sorted(d.doc_id for d in batch) for batch in batches)
        assert len(reader.documents()) == 40
    for store in stores:
        store.close()


def test_a_store_follows_generations_committed_by_another(pg_url: str) -> None:
    with PgStore.open(pg_url) as writer, PgStore.open(pg_url) as replica:
        replica.snapshot()
        writer.ingest([WIFI])
        assert replica.refresh() and replica.snapshot().current_versions() == {"wifi": "1"}


def test_a_watching_store_learns_of_a_new_generation_without_being_asked(pg_url: str) -> None:
    with PgStore.open(pg_url) as writer, PgStore.open(pg_url) as replica:
        replica.watch(poll_s=30.0)  # longer than the wait: the notification must bring it
        writer.ingest([WIFI])
        _wait_until(lambda: replica.generation >= 1)
        assert replica.snapshot().current_versions() == {"wifi": "1"} and replica.reachable


def _wait_until(condition: Callable[[], bool]) -> None:
    """Until ``condition()`` holds, checked every 50 ms, for at most WAIT_S (then the test fails)."""
    pause = threading.Event()
    for _ in range(int(WAIT_S / 0.05)):
        if condition():
            return
        pause.wait(0.05)
    raise AssertionError(f"not within {WAIT_S:g} s")


def _wait_for_lock_waiter(url: str) -> None:
    """Until some connection waits on an advisory lock."""
    sql = "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
    with psycopg.connect(url, autocommit=True) as conn:
        _wait_until(lambda: conn.execute(sql).fetchone() != (0,))
