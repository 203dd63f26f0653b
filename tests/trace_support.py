"""Editing a stored run's records in place, as a tamperer or a cut would: the lines of its own file,
or of its frame in its day's journal (the frame line left as written); a compressed frame is read,
edited and compressed again, its frame line saying the new lengths (a tamperer with zlib at hand).
In PostgreSQL, the run's compressed row is edited so, behind the append-only trigger (as the
superuser can switch it off)."""

from __future__ import annotations

import os
import subprocess
import sys
import zlib
from collections.abc import Callable
from pathlib import Path

from evidence_loop.traces import TraceStore
from evidence_loop.traces.journal.journal import Frame, pack, scan

Lines = list[bytes]


def edit_run(store: TraceStore, run_id: str, edit: Callable[[Lines], Lines]) -> None:
    """Replace the records of ``run_id`` (header first, one line each, newlines kept) by ``edit``'s."""
    from evidence_loop.traces.stores.pg_store import PgTraceStore

    if isinstance(store, PgTraceStore):
        edit_row(store.url, run_id, edit)
        return
    path, records = store.path(run_id), store.raw(run_id)
    edited = b"".join(edit(records.splitlines(keepends=True)))
    content = path.read_bytes()
    if records in content:
        at = content.index(records)
        path.write_bytes(content[:at] + edited + content[at + len(records) :])
        return
    [frame] = [item for item in scan(content) if isinstance(item, Frame) and item.run_id == run_id]
    end = frame.offset + frame.stored
    path.write_bytes(content[: frame.offset] + pack(run_id, edited) + content[end:])


def edit_row(url: str, run_id: str, edit: Callable[[Lines], Lines]) -> None:
    """Replace the records in the PostgreSQL row of ``run_id`` by ``edit``'s, behind the trigger."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("ALTER TABLE trace_runs DISABLE TRIGGER trace_runs_append_only")
        row = conn.execute("SELECT body FROM trace_runs WHERE run_id = %s", (run_id,)).fetchone()
        assert row is not None and row[0] is not None, f"run {run_id} has no compressed row"
        lines = zlib.decompress(row[0]).splitlines(keepends=True)
        body = zlib.compress(b"".join(edit(lines)))
        conn.execute("UPDATE trace_runs SET body = %s WHERE run_id = %s", (body, run_id))
        conn.execute("ALTER TABLE trace_runs ENABLE TRIGGER trace_runs_append_only")


def keep_lines(store: TraceStore, run_id: str, count: int) -> None:
    """Cut the run's records after their first ``count`` lines."""
    edit_run(store, run_id, lambda lines: lines[:count])


def run_killed_writer(
    script: str, root: Path, kill_at: int, timeout: float
) -> subprocess.CompletedProcess[str]:
    """Run a writer ``script`` (Python source taking the trace root and where to kill itself) in a
    child process from the repository's root, as the crash tests do; its output as text."""
    repo = Path(__file__).resolve().parents[1]
    return subprocess.run(
        [sys.executable, "-c", script, str(root), str(kill_at)],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=repo,
        env={**os.environ, "PYTHONPATH": str(repo)},
    )
