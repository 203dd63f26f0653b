"""PostgreSQL migrations 5 (the run chain, the feedback tail) and 6 (each document's source) apply in
order, on a fresh database and on one a release before them left at migration 4, its rows kept."""

from __future__ import annotations

import psycopg
import pytest

from evidence_loop.agent.doors.cli.app import main
from evidence_loop.tools.store.pg_schema import LATEST, MIGRATIONS
from evidence_loop.tools.store.postgres import PgStore
from evidence_loop.tools.types import DocumentInput
from tests.fake_embedder import FakeEmbedder
from tests.pg_server import PgServer

pytestmark = pytest.mark.postgres

REFUND = DocumentInput("refund", "Refunds\nA refund is paid within seven days of the return.")
SHIP = DocumentInput("ship", "Shipping\nParcels leave the warehouse within two days.")


def _at_migration_4(pg_server: PgServer) -> str:
    """A database as `evloop migrate` of a release that knew migrations 1 to 4 left it."""
    url = pg_server.new_database(migrated=False)
    with psycopg.connect(url, autocommit=True) as conn, conn.transaction():
        conn.execute(
            "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
            "applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
        )
        for migration in MIGRATIONS[:4]:
            conn.execute(migration.sql)
            conn.execute(
                "INSERT INTO schema_migrations(version, name) VALUES (%s, %s)",
                (migration.version, migration.name),
            )
        conn.execute("INSERT INTO documents(doc_id, created_gen) VALUES ('kept', 0)")
    return url


def _ledger(url: str) -> list[int]:
    with psycopg.connect(url) as conn:
        return [
            row[0]
            for row in conn.execute("SELECT version FROM schema_migrations ORDER BY applied_at, version")
        ]


def test_the_migrations_are_numbered_one_after_another_with_the_sources_and_the_compressed_runs_last() -> (
    None
):
    assert [m.version for m in MIGRATIONS] == list(range(1, LATEST + 1))
    assert (
        LATEST,
        "run chain" in MIGRATIONS[4].name,
        "source" in MIGRATIONS[5].name,
        "compressed" in MIGRATIONS[6].name,
    ) == (
        7,
        True,
        True,
        True,
    )


def test_migrate_on_a_fresh_database_applies_every_migration_in_order(
    pg_server: PgServer, capsys: pytest.CaptureFixture[str]
) -> None:
    url = pg_server.new_database(migrated=False)
    assert main(["migrate", "--store", url]) == 0
    applied = [
        line.split(":")[0] for line in capsys.readouterr().out.splitlines() if line.startswith("applied")
    ]
    assert (applied, _ledger(url)) == ([f"applied {n}" for n in range(1, 8)], [1, 2, 3, 4, 5, 6, 7])


def test_migrate_on_a_database_at_migration_4_applies_5_6_and_7_and_keeps_its_rows(
    pg_server: PgServer, capsys: pytest.CaptureFixture[str]
) -> None:
    url = _at_migration_4(pg_server)
    assert main(["migrate", "--store", url]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in out[:-1]] == ["applied 5", "applied 6", "applied 7"]
    assert _ledger(url) == [1, 2, 3, 4, 5, 6, 7]
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT doc_id FROM documents").fetchall() == [("kept",)]
        assert conn.execute("SELECT count(*) FROM trace_anchors").fetchone() == (0,)


def test_a_store_migrated_from_4_records_sources_and_prunes(pg_server: PgServer) -> None:
    url = _at_migration_4(pg_server)
    assert main(["migrate", "--store", url]) == 0
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DELETE FROM documents WHERE doc_id = 'kept'")  # a bare row, not a document
    with PgStore.open(url, embedder=FakeEmbedder()) as store:
        store.ingest([REFUND, SHIP], sources={"refund": "kb", "ship": "kb"})
        report = store.ingest([REFUND], sources={"refund": "kb"}, prune=["kb"])
        assert (report.unchanged, report.retired) == (1, 1)
        assert [d.doc_id for d in store.documents()] == ["refund"]
