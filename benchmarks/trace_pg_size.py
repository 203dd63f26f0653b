"""What a traced run takes in PostgreSQL: its records as written, and the trace tables on disk per run.

    .venv/bin/python benchmarks/trace_pg_size.py [SET_DIR] [--questions 400]

Ingests the set's ``corpus.jsonl`` into a temporary folder index, asks its first ``--questions``
questions (lexical: ``EVLOOP_EMBEDDER=none`` is set by the script) with the traces kept in a
PostgreSQL database of a server of its own (as ``tests/pg_server.py`` starts one), then prints the
runs, the records a run holds as written (mean), and ``trace_runs``, ``trace_records`` and
``trace_documents`` on disk (``pg_total_relation_size``, after ``VACUUM``) over the runs: indexes,
TOAST and the documents the headers name once included. The target is 6 KB a run or less.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/pg_server.py
os.environ["EVLOOP_EMBEDDER"] = "none"

from common import EVAL_DIR, set_questions

from evidence_loop.agent.service import Service
from evidence_loop.tools.parse.sources import collect
from evidence_loop.tools.store.folder import Store
from evidence_loop.traces.stores.pg_rows import read_records
from evidence_loop.traces.stores.pg_store import PgTraceStore
from tests.pg_server import PgServer

TABLES = ("trace_runs", "trace_records", "trace_documents")


def measure(set_dir: Path, count: int) -> dict[str, float]:
    import psycopg

    server = PgServer.start()
    try:
        url = server.new_database()  # migrated
        with tempfile.TemporaryDirectory(prefix="trace-pg-size-") as tmp:
            store = Store.open(Path(tmp) / "index", create=True)
            traces = PgTraceStore(url)
            try:
                store.ingest(collect([set_dir / "corpus.jsonl"]).documents)
                service = Service(store, traces=traces)
                run_ids = [
                    outcome.trace.id
                    for question in set_questions(set_dir, count)
                    if (outcome := service.ask(question.text, question.groups)).trace is not None
                ]
                written = sum(len(read_records(traces._query, run_id)) for run_id in run_ids)
            finally:
                traces.close()
                store.close()
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("VACUUM")
            size = " + ".join(f"pg_total_relation_size('{table}')" for table in TABLES)
            row = conn.execute(f"SELECT {size}, (SELECT count(*) FROM trace_runs)").fetchone()
        assert row is not None
        runs = int(row[1])
        return {
            "runs": runs,
            "written": written / max(1, len(run_ids)),
            "on_disk": float(row[0]) / max(1, runs),
        }
    finally:
        server.destroy()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("set_dir", nargs="?", type=Path, default=EVAL_DIR / "tara_zh")
    parser.add_argument("--questions", type=int, default=400)
    args = parser.parse_args(argv)
    print("$", *sys.argv, "  (load average", " ".join(f"{x:.2f}" for x in os.getloadavg()) + ")")
    m = measure(args.set_dir, args.questions)
    print(f"{'runs':>6}{'KB of records a run':>22}{'KB on disk a run':>19}")
    print(f"{m['runs']:>6.0f}{m['written'] / 1000:>22.2f}{m['on_disk'] / 1000:>19.2f}")
    print("target: 6 KB on disk a run or less")
    return 0


if __name__ == "__main__":
    sys.exit(main())
