"""The PostgreSQL schema of the shared store: versioned migrations, applied by ``evloop migrate`` only.

The tables hold what the SQLite store holds (tools/store/schema.py: meta, documents, versions, spans,
sections, units, acl, unit_vectors), with the same columns and rules, so that one set of
statements (tools/store/ingest.py, tools/store/views.py) serves both. Two differences:

- every key column is ``COLLATE "C"``: rows come back in code-point order, as SQLite orders them,
  whatever the database's locale (corpus order decides ties, and so outcomes);
- ``versions.rowid`` is an identity column standing in for SQLite's implicit rowid.

``schema_migrations`` records each applied migration. Reading or writing a store whose schema is
behind (or ahead of) this code is refused with the command that fixes it; nothing is migrated on
the way. Migrations run in one transaction under the ingest's advisory lock, so two replicas
migrating at once apply each step once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from evidence_loop.tools.errors import StoreStateError
from evidence_loop.tools.store.pg import PgConnection, redact
from evidence_loop.tools.store.sql import Db

if TYPE_CHECKING:
    import psycopg

# One advisory lock key for every write of the store (ingest, delete, calibration, migrations).
WRITE_LOCK = 0x65766C6F6F70  # "evloop"
# The channel a committed generation is announced on (payload: the generation number).
CHANNEL = "evloop_generation"


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    sql: str


_K = 'TEXT COLLATE "C" NOT NULL'

MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "documents, versions, spans, sections, units, acl, unit vectors",
        f"""
CREATE TABLE meta (key {_K} PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO meta(key, value) VALUES ('schema_version', '2'), ('generation', '0');
CREATE TABLE documents (doc_id {_K} PRIMARY KEY, created_gen BIGINT NOT NULL);
CREATE TABLE versions (
    rowid BIGINT GENERATED ALWAYS AS IDENTITY,
    doc_id {_K} REFERENCES documents(doc_id),
    version {_K},
    title TEXT NOT NULL,
    format TEXT NOT NULL,
    text TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    acl TEXT NOT NULL,
    metadata TEXT NOT NULL,
    added_gen BIGINT NOT NULL,
    removed_gen BIGINT,
    is_current INTEGER NOT NULL,
    UNIQUE (doc_id, version)
);
CREATE UNIQUE INDEX versions_one_current ON versions(doc_id) WHERE is_current = 1;
CREATE TABLE spans (
    doc_id {_K},
    version {_K},
    added_gen BIGINT NOT NULL,
    removed_gen BIGINT,
    PRIMARY KEY (doc_id, version, added_gen),
    FOREIGN KEY (doc_id, version) REFERENCES versions(doc_id, version)
);
CREATE TABLE sections (
    doc_id {_K},
    version {_K},
    section_id INTEGER NOT NULL,
    parent_id INTEGER,
    level INTEGER NOT NULL,
    title TEXT NOT NULL,
    start INTEGER NOT NULL,
    "end" INTEGER NOT NULL,
    path TEXT NOT NULL,
    PRIMARY KEY (doc_id, version, section_id),
    FOREIGN KEY (doc_id, version) REFERENCES versions(doc_id, version)
);
CREATE TABLE units (
    doc_id {_K},
    version {_K},
    ordinal INTEGER NOT NULL,
    kind TEXT NOT NULL,
    section_id INTEGER NOT NULL,
    start INTEGER NOT NULL,
    "end" INTEGER NOT NULL,
    link INTEGER,
    tokens TEXT NOT NULL,
    PRIMARY KEY (doc_id, version, ordinal),
    FOREIGN KEY (doc_id, version, section_id) REFERENCES sections(doc_id, version, section_id)
);
CREATE TABLE acl (
    doc_id {_K},
    version {_K},
    grp {_K},
    PRIMARY KEY (doc_id, version, grp),
    FOREIGN KEY (doc_id, version) REFERENCES versions(doc_id, version)
);
CREATE INDEX acl_by_group ON acl(grp);
CREATE TABLE unit_vectors (
    doc_id {_K},
    version {_K},
    embedder {_K},
    rows INTEGER NOT NULL,
    data BYTEA NOT NULL,
    PRIMARY KEY (doc_id, version, embedder),
    FOREIGN KEY (doc_id, version) REFERENCES versions(doc_id, version)
);
""",
    ),
    Migration(
        2,
        "traces: one row per record, append-only, and one per run",
        f"""
CREATE TABLE trace_runs (
    run_id {_K} PRIMARY KEY,
    created_at TIMESTAMPTZ NOT NULL,
    question TEXT NOT NULL,
    status TEXT NOT NULL,
    outcome_status TEXT,
    final_hash TEXT,
    events INTEGER NOT NULL,
    bytes BIGINT NOT NULL
);
CREATE INDEX trace_runs_by_time ON trace_runs(created_at);
CREATE TABLE trace_records (
    run_id {_K} REFERENCES trace_runs(run_id),
    n INTEGER NOT NULL,
    line TEXT NOT NULL,
    PRIMARY KEY (run_id, n)
);
CREATE FUNCTION evloop_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' AND current_setting('evloop.prune', true) = 'on' THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'trace records are append-only (% refused)', TG_OP;
END $$;
CREATE TRIGGER trace_records_append_only BEFORE UPDATE OR DELETE ON trace_records
    FOR EACH ROW EXECUTE FUNCTION evloop_append_only();
CREATE TRIGGER trace_runs_append_only BEFORE UPDATE OR DELETE ON trace_runs
    FOR EACH ROW EXECUTE FUNCTION evloop_append_only();
""",
    ),
    Migration(
        3,
        "reviewers' feedback on runs: one row per record, append-only",
        f"""
CREATE TABLE feedback_records (
    seq BIGINT PRIMARY KEY,
    run_id {_K},
    created_at TIMESTAMPTZ NOT NULL,
    line TEXT NOT NULL
);
CREATE INDEX feedback_records_by_run ON feedback_records(run_id);
CREATE TRIGGER feedback_records_append_only BEFORE UPDATE OR DELETE ON feedback_records
    FOR EACH ROW EXECUTE FUNCTION evloop_append_only();
""",
    ),
    Migration(
        4,
        "the documents schema 3 traces name by hash (policy, LLM settings, embedder, reranker), once each",
        f"""
CREATE TABLE trace_documents (hash {_K} PRIMARY KEY, body TEXT NOT NULL);
CREATE TRIGGER trace_documents_append_only BEFORE UPDATE OR DELETE ON trace_documents
    FOR EACH ROW EXECUTE FUNCTION evloop_append_only();
""",
    ),
    Migration(
        5,
        "the run chain (each writer's runs of a day numbered, their ends anchored); the feedback tail",
        f"""
ALTER TABLE trace_runs ADD COLUMN writer TEXT COLLATE "C", ADD COLUMN wseq INTEGER;
CREATE TABLE trace_anchors (
    writer {_K},
    day DATE NOT NULL,
    wseq INTEGER NOT NULL,
    run_id {_K},
    by TEXT NOT NULL,
    at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX trace_anchors_by_day ON trace_anchors(day);
CREATE TRIGGER trace_anchors_append_only BEFORE UPDATE OR DELETE ON trace_anchors
    FOR EACH ROW EXECUTE FUNCTION evloop_append_only();
CREATE TABLE feedback_tail (
    one BOOLEAN PRIMARY KEY DEFAULT true CHECK (one),
    seq BIGINT NOT NULL,
    hash TEXT NOT NULL
);
""",
    ),
)
LATEST = MIGRATIONS[-1].version

_LEDGER = """CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
)"""


def migrate_hint(url: str) -> str:
    return f"run `evloop migrate --store {redact(url)}`"


def applied(conn: Db) -> int:
    """The highest migration applied to the database (0: none, not even the ledger)."""
    exists = conn.execute("SELECT to_regclass('schema_migrations')").fetchone()[0]
    if exists is None:
        return 0
    row = conn.execute("SELECT max(version) FROM schema_migrations").fetchone()
    return int(row[0] or 0)


def migrate(conn: psycopg.Connection[Any]) -> list[Migration]:
    """Apply every migration the database lacks, in order, in one transaction; those applied."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
        conn.execute(_LEDGER)
        done = applied(PgConnection(conn))
        if done > LATEST:
            raise StoreStateError(_ahead(done))
        pending = [m for m in MIGRATIONS if m.version > done]
        for migration in pending:
            conn.execute(migration.sql)
            conn.execute(
                "INSERT INTO schema_migrations(version, name) VALUES (%s, %s)",
                (migration.version, migration.name),
            )
    return pending


def check_schema(conn: Db, url: str) -> None:
    """StoreStateError unless every migration of this code, and no later one, has been applied."""
    done = applied(conn)
    if done == LATEST:
        return
    if done > LATEST:
        raise StoreStateError(f"the store at {redact(url)}: {_ahead(done)}")
    found = "no evloop schema" if done == 0 else f"schema version {done}"
    raise StoreStateError(
        f"the store at {redact(url)} has {found}; this evloop needs schema version {LATEST}: "
        f"{migrate_hint(url)}"
    )


def _ahead(done: int) -> str:
    return f"the schema is at version {done}, newer than this evloop knows ({LATEST}); upgrade evloop"
