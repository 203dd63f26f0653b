"""The two store backends side by side, in one process: PostgreSQL as ratios to the SQLite folder.

    .venv/bin/python benchmarks/bench_backends.py [SET_DIR] [--questions 300]

Starts a PostgreSQL server of its own (tests/pg_server.py, as the tests do), then for each backend:

1. ingest ``corpus.jsonl`` (one batch, lexical: no embedder) timed around ``Store.ingest``;
2. open the store again and take its snapshot, as a new process or replica does (the folder loads
   its saved index files, PostgreSQL builds the indexes from the stored tokens);
3. ask ``--questions`` questions through the loop (``Controller.ask`` on that snapshot), untraced,
   and again through ``Service.ask``, traced (a trace file fdatasynced, or a commit in the store).

Prints one table: milliseconds or seconds per backend and PostgreSQL / SQLite.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from common import EVAL_DIR, percentile, set_questions

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/pg_server.py
os.environ.setdefault("EVLOOP_EMBEDDER", "none")

from evidence_loop.agent.loop.controller import Controller
from evidence_loop.agent.service import Service
from evidence_loop.policies.config import Policy
from evidence_loop.tools.parse.sources import collect
from evidence_loop.tools.store.location import Location, open_store
from tests.pg_server import PgServer


def _ms(call: Callable[[], object]) -> float:
    started = time.perf_counter()
    call()
    return (time.perf_counter() - started) * 1000


def measure(location: Location, set_dir: Path, questions: list[str]) -> dict[str, float]:
    docs = collect([set_dir / "corpus.jsonl"]).documents
    with open_store(location, create=True) as store:
        started = time.perf_counter()
        store.ingest(docs)
        ingest_s = time.perf_counter() - started
    started = time.perf_counter()
    store = open_store(location)
    snapshot = store.snapshot()
    open_s = time.perf_counter() - started
    controller = Controller(Policy())
    loop = [_ms(lambda q=q: controller.ask(snapshot, q)) for q in questions]
    store.close()
    service = Service.open(location, embedder=None, reranker=None)
    service.ask(questions[0])  # warm
    traced = [_ms(lambda q=q: service.ask(q)) for q in questions]
    service.close()
    return {
        "ingest s": ingest_s,
        "open + snapshot s": open_s,
        "loop p50 ms": statistics.median(loop),
        "loop p95 ms": percentile(loop, 0.95),
        "traced ask p50 ms": statistics.median(traced),
        "traced ask p95 ms": percentile(traced, 0.95),
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("set_dir", nargs="?", type=Path, default=EVAL_DIR / "tara_zh")
    parser.add_argument("--questions", type=int, default=300)
    args = parser.parse_args()
    if not (args.set_dir / "corpus.jsonl").is_file():
        print(f"no corpus.jsonl in {args.set_dir}; nothing to measure", file=sys.stderr)
        return 0
    questions = [q.text for q in set_questions(args.set_dir, args.questions)]
    server = PgServer.start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            folder = measure(Path(tmp) / "index", args.set_dir, questions)
        shared = measure(server.new_database(), args.set_dir, questions)
    finally:
        server.destroy()
    print(f"{args.set_dir.name}: {len(questions)} questions, lexical")
    print(f"{'':<20}{'sqlite':>10}{'postgresql':>12}{'ratio':>8}")
    for key, value in folder.items():
        print(f"{key:<20}{value:>10.2f}{shared[key]:>12.2f}{shared[key] / value:>8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
