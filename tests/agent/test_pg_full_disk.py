"""The PostgreSQL trace store out of space: its tables in a tablespace on a small tmpfs that fills.

The database refuses the run's records (SQLSTATE 53100, "could not extend file"): the run gives no
answer (fail closed), the trace store reports itself unwritable until the tables take a run again,
and nothing of the refused run is stored. Needs root (to mount the tmpfs) and PostgreSQL's binaries.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from evidence_loop.agent.doors.cli.sample import load_sample_kb
from evidence_loop.agent.service import Service
from evidence_loop.tools.errors import TraceStoreUnavailableError
from tests.pg_server import PgServer, missing_reason

pytestmark = pytest.mark.postgres  # a PostgreSQL server of its own

QUESTION = "LM-S10 的整机保修期是多久？"
# Runs asked once the disk is full before one must need a new page (each run's records take kilobytes).
MAX_RUNS = 40


@pytest.fixture
def small_tablespace() -> Iterator[tuple[str, str, Path]]:
    """A server of its own (its files outlive nothing else's), a tablespace on a 1 MiB tmpfs owned by
    the server's user, and a migrated database: its URL, the tablespace's name and folder. Dropped
    before the tmpfs goes, so that the server never meets a missing folder."""
    reason = missing_reason()
    if reason is not None:
        pytest.skip(reason)
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("a tablespace on a small filesystem needs root to mount it")
    folder = Path(tempfile.mkdtemp(prefix="evloop-ts-"))
    uid = pwd.getpwnam("postgres").pw_uid
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size=1024k,uid={uid},mode=0700", "tmpfs", str(folder)],
        capture_output=True,
        check=False,
    )
    if mounted.returncode != 0:
        folder.rmdir()
        pytest.skip(f"cannot mount a tmpfs: {mounted.stderr.decode(errors='replace').strip()}")
    server = PgServer.start()
    name = f"small_{uuid.uuid4().hex[:8]}"
    try:
        with psycopg.connect(server.url(), autocommit=True) as admin:
            admin.execute(f"CREATE TABLESPACE {name} LOCATION '{folder}'")
        url = server.new_database()
        yield url, name, folder
        with psycopg.connect(server.url(), autocommit=True) as admin:
            admin.execute(f"DROP DATABASE {psycopg.conninfo.conninfo_to_dict(url)['dbname']} WITH (FORCE)")
            admin.execute(f"DROP TABLESPACE {name}")
    finally:
        server.destroy()
        subprocess.run(["umount", "-l", str(folder)], check=False)
        shutil.rmtree(folder, ignore_errors=True)


def _fill(folder: Path) -> Path:
    filler = folder / "filler.bin"
    with filler.open("ab") as out:
        while True:
            try:
                out.write(bytes(64 * 1024))
                out.flush()
            except OSError:
                return filler


def test_a_postgresql_trace_store_out_of_space_refuses_answers_until_it_takes_runs_again(
    small_tablespace: tuple[str, str, Path],
) -> None:
    pg_url, name, folder = small_tablespace
    with psycopg.connect(pg_url, autocommit=True) as conn:
        for table in ("trace_runs", "trace_records"):
            conn.execute(f"ALTER TABLE {table} SET TABLESPACE {name}")
            conn.execute(f"ALTER INDEX {table}_pkey SET TABLESPACE {name}")
    with Service.open(pg_url) as service:
        service.ingest(load_sample_kb())
        assert service.ask(QUESTION).trace is not None
        filler = _fill(folder)

        with pytest.raises(TraceStoreUnavailableError) as refused:
            for _ in range(MAX_RUNS):
                service.ask(QUESTION)
        assert "no space left on the disk" in str(refused.value), refused.value
        assert service.traces_writable() is not None, "not writable while the tablespace is full"

        filler.unlink()
        assert service.traces_writable() is None
        outcome = service.ask(QUESTION)
        assert outcome.trace is not None and service.verify(outcome.run_id).ok
        assert service.traces is not None
        assert all(verdict.ok and verdict.complete for _, verdict in service.traces.verify_all())
