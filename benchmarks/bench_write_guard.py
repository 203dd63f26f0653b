"""What the write rule costs an ingest: the same corpus through ``Service.ingest`` with and without a
writer whose groups are checked inside the write's transaction (agent/access/write_access.py).

    .venv/bin/python benchmarks/bench_write_guard.py [SET_DIR] [--batch 100] [--rounds 3]

The corpus (default: tara_zh in ../shared/eval) goes in batches of ``--batch`` documents, as POST
/v1/documents sends them, into a fresh index folder: once as the operator (no writer: no check, no
extra read) and once as a key holding every group with ``publish`` (one indexed read of the
doc_id's versions per document, inside the transaction), ``--rounds`` times, alternating, operator
first. Both wall and CPU seconds of this process are shown (medians): on a shared, loaded machine
the wall time swings by more than the check costs. Last, the check alone: the read and the rule
for every document of the corpus against the filled store, in one transaction (best of rounds).
Lexical (no embedder), so the store's own work is what is timed.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from common import EVAL_DIR, Row, print_table

from evidence_loop.agent.access.write_access import Writer, check
from evidence_loop.agent.service import Service
from evidence_loop.tools.parse.sources import collect
from evidence_loop.tools.store.guard import target_of
from evidence_loop.tools.store.schema import DB_NAME, connect
from evidence_loop.tools.types import DocumentInput

KEY = Writer("bench", frozenset({"staff"}), publish=True, creates=True)


def ingested(
    docs: list[DocumentInput], batch: int, writer: Writer | None, folder: Path
) -> tuple[float, float]:
    """Wall and CPU seconds of ingesting ``docs`` into a new index in ``folder``."""
    service = Service.open(folder, create=True, tracing_on=False, embedder=None, llm=None)
    try:
        wall, cpu = time.perf_counter(), time.process_time()
        for at in range(0, len(docs), batch):
            service.ingest(docs[at : at + batch], writer=writer)
        return time.perf_counter() - wall, time.process_time() - cpu
    finally:
        service.close()


def check_alone(docs: list[DocumentInput], folder: Path) -> float:
    """Seconds to read and check every document's target in one transaction of the filled store."""
    conn = connect(folder / DB_NAME)
    try:
        conn.execute("BEGIN IMMEDIATE")
        started = time.perf_counter()
        for doc in docs:
            check(KEY, target_of(conn, doc))
        spent = time.perf_counter() - started
        conn.execute("ROLLBACK")
        return spent
    finally:
        conn.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("set_dir", nargs="?", type=Path, default=EVAL_DIR / "tara_zh")
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    docs = list(collect([args.set_dir / "corpus.jsonl"]).documents)
    runs: dict[str, list[tuple[float, float]]] = {"operator": [], "key": []}
    alone: list[float] = []
    for _ in range(args.rounds):
        with tempfile.TemporaryDirectory() as tmp:
            runs["operator"].append(ingested(docs, args.batch, None, Path(tmp) / "op"))
            runs["key"].append(ingested(docs, args.batch, KEY, Path(tmp) / "key"))
            alone.append(check_alone(docs, Path(tmp) / "key"))
    m = {
        f"{side} {what}": statistics.median(r[i] for r in rs)
        for side, rs in runs.items()
        for i, what in enumerate(("wall", "cpu"))
    }
    m["alone"] = min(alone)
    m["documents"] = float(len(docs))
    rows: list[Row] = [
        ("documents", lambda m: f"{m['documents']:.0f}", f"batches of {args.batch}, {args.rounds} rounds"),
        (
            "operator: wall / CPU (s)",
            lambda m: f"{m['operator wall']:.2f} / {m['operator cpu']:.2f}",
            "no check",
        ),
        (
            "key: wall / CPU (s)",
            lambda m: f"{m['key wall']:.2f} / {m['key cpu']:.2f}",
            "checked in the write",
        ),
        ("key / operator, CPU", lambda m: f"{m['key cpu'] / m['operator cpu']:.3f}", "1.0 = no cost"),
        ("the check alone (ms)", lambda m: f"{m['alone'] * 1000:.1f}", "read + rule, every document"),
        ("  share of the key's CPU", lambda m: f"{m['alone'] / m['key cpu']:.2%}", ""),
    ]
    print_table(rows, {args.set_dir.name: m})
    shown = {side: ", ".join(f"{w:.1f}/{c:.1f}" for w, c in rs) for side, rs in runs.items()}
    print("runs, wall/CPU s: " + "; ".join(f"{side} {text}" for side, text in shown.items()))


if __name__ == "__main__":
    main()
