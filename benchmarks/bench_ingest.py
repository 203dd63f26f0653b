"""Ingest and seed-query cost of the store, against bare bm25s on the same units and tokens.

    .venv/bin/python benchmarks/bench_ingest.py [SET_DIR ...] [--k 10] [--max-questions N]

For each evaluation set (default: tara_zh and rgb_zh_reject in ../shared/eval beside the clone, or
in EVLOOP_EVAL_DIR; absent sets are skipped) a fresh child process:

1. ingests ``corpus.jsonl`` into a temporary index with ``Store.ingest`` (parse + segment +
   tokenise + SQLite + bm25s index files), timed around the call;
2. takes the unit texts of the live versions from the store and indexes them with bare bm25s:
   ``tools.tokenize.recall_tokens`` (rjieba + Snowball + CJK bigrams, the same tokens the store
   indexes) and ``bm25s.BM25().index``;
3. times every question of ``questions.jsonl`` through ``snapshot.search(q, k)`` (unit and passage
   scores, fused) and through bare ``BM25.retrieve`` over the units on the same tokens (tokenising
   included on both sides);
4. measures the index folder on disk and the child's peak resident set size
   (``resource.getrusage(RUSAGE_SELF).ru_maxrss``: the whole process, interpreter and libraries included).

The parent prints one table: one column per set, the targets beside them.
"""

from __future__ import annotations

import argparse
import json
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import bm25s
from common import EVAL_DIR, Row, percentile, print_table, ratio, usable_sets

from evidence_loop.agent.tuning.evaluate import read_questions
from evidence_loop.tools.parse.sources import collect
from evidence_loop.tools.search.snapshot import Snapshot
from evidence_loop.tools.store.folder import Store
from evidence_loop.tools.tokenize import recall_tokens

DEFAULT_SETS = (EVAL_DIR / "tara_zh", EVAL_DIR / "rgb_zh_reject")
INGEST_TARGET = 3.0  # our ingest time / bare bm25s tokenise + index time
QUERY_TARGET = 1.5  # our p95 query latency / bare bm25s p95
MAX_BYTES = 1 << 30  # the benchmark measures speed, not the size limit


def _folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def _questions(set_dir: Path, limit: int | None) -> list[str]:
    questions = [str(record["question"]) for record in read_questions(set_dir / "questions.jsonl")]
    return questions[:limit] if limit else questions


def measure(set_dir: Path, k: int, max_questions: int | None) -> dict[str, float]:
    """Every number of one set's column (runs in the child process)."""
    docs = collect([set_dir / "corpus.jsonl"]).documents
    questions = _questions(set_dir, max_questions)
    with tempfile.TemporaryDirectory() as tmp:
        folder, bare_folder = Path(tmp) / "index", Path(tmp) / "bare"
        with Store.open(folder, create=True) as store:
            started = time.perf_counter()
            store.ingest(docs, max_bytes=MAX_BYTES)
            ingest_s = time.perf_counter() - started
            snapshot = store.snapshot()
            texts = [
                unit.text
                for doc_id, version in sorted(snapshot.current_versions().items())
                for unit in snapshot.parsed(doc_id, version).units
            ]
            bare, bare_s = _bare_index(texts)
            bare.save(bare_folder, show_progress=False)
            numbers = _query_latencies(snapshot, bare, questions, min(k, len(texts)))
        numbers["index_mb"] = _folder_bytes(folder) / 1e6
        numbers["bare_mb"] = _folder_bytes(bare_folder) / 1e6
    numbers.update(
        docs=len(docs), units=len(texts), ingest_s=ingest_s, bare_s=bare_s, questions=len(questions)
    )
    numbers["maxrss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    return numbers


def _bare_index(texts: Sequence[str]) -> tuple[bm25s.BM25, float]:
    """The reference: the same unit texts, the same tokens, straight into bm25s; and the seconds it took."""
    started = time.perf_counter()
    bare = bm25s.BM25()
    # bm25s needs a token per row; the store pads empty rows the same way.
    bare.index([recall_tokens(t) or [""] for t in texts], show_progress=False)
    return bare, time.perf_counter() - started


def _query_latencies(
    snapshot: Snapshot, bare: bm25s.BM25, questions: Sequence[str], k: int
) -> dict[str, float]:
    """p50/p95 in ms of ``snapshot.search`` and of bare ``retrieve``, tokenising included on both sides."""

    def ours(question: str) -> None:
        snapshot.search(question, k)

    def reference(question: str) -> None:
        tokens = [t for t in recall_tokens(question) if t in bare.vocab_dict]
        if tokens:  # the store also answers a query with no known token without scoring
            bare.retrieve([tokens], k=k, show_progress=False)

    our_ms, bare_ms = _latencies(questions, ours), _latencies(questions, reference)
    return {
        "p50": statistics.median(our_ms),
        "p95": percentile(our_ms, 0.95),
        "bare_p50": statistics.median(bare_ms),
        "bare_p95": percentile(bare_ms, 0.95),
    }


def _latencies(questions: Sequence[str], call: Callable[[str], None]) -> list[float]:
    """Milliseconds per question, after one untimed warm-up call."""
    call(questions[0])
    samples: list[float] = []
    for question in questions:
        started = time.perf_counter()
        call(question)
        samples.append((time.perf_counter() - started) * 1000)
    return samples


ROWS: tuple[Row, ...] = (
    ("documents / units", lambda m: f"{m['docs']:.0f} / {m['units']:.0f}", ""),
    ("ingest: ours, s", lambda m: f"{m['ingest_s']:.2f}", ""),
    ("ingest: ours, docs/s", lambda m: f"{m['docs'] / m['ingest_s']:.0f}", ""),
    ("ingest: ours, units/s", lambda m: f"{m['units'] / m['ingest_s']:.0f}", ""),
    ("ingest: bare bm25s, s", lambda m: f"{m['bare_s']:.2f}", ""),
    ("ingest: bare bm25s, units/s", lambda m: f"{m['units'] / m['bare_s']:.0f}", ""),
    ("ingest ratio ours/bare", lambda m: ratio(m["ingest_s"], m["bare_s"]), f"<= {INGEST_TARGET:g}x"),
    ("questions timed", lambda m: f"{m['questions']:.0f}", ""),
    ("query p50 ms: ours / bare", lambda m: f"{m['p50']:.2f} / {m['bare_p50']:.2f}", ""),
    ("query p95 ms: ours / bare", lambda m: f"{m['p95']:.2f} / {m['bare_p95']:.2f}", ""),
    ("query p95 ratio ours/bare", lambda m: ratio(m["p95"], m["bare_p95"]), f"<= {QUERY_TARGET:g}x"),
    ("on disk MB: index / bare bm25s", lambda m: f"{m['index_mb']:.1f} / {m['bare_mb']:.1f}", ""),
    ("peak RSS MB (ru_maxrss, child)", lambda m: f"{m['maxrss_mb']:.0f}", ""),
)


def _child(set_dir: Path, args: argparse.Namespace) -> dict[str, float]:
    """Run one set in a fresh interpreter so that its peak memory is its own."""
    command = [sys.executable, __file__, "--child", str(set_dir), "--k", str(args.k)]
    if args.max_questions:
        command += ["--max-questions", str(args.max_questions)]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    result: dict[str, float] = json.loads(done.stdout)
    return result


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("sets", nargs="*", type=Path, default=list(DEFAULT_SETS), metavar="SET_DIR")
    parser.add_argument("--k", type=int, default=10, help="hits per query (default: 10)")
    parser.add_argument("--max-questions", type=int, default=None, help="time only the first N questions")
    parser.add_argument("--child", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:
        print(json.dumps(measure(args.child, args.k, args.max_questions)))
        return 0
    print("$ " + shlex.join(sys.orig_argv))
    results: dict[str, dict[str, float]] = {}
    for set_dir in usable_sets(args.sets):
        results[set_dir.name] = _child(set_dir, args)
    if results:
        print_table(ROWS, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
