"""What compressing a run's journal frame saves on disk and costs in CPU, by zlib level.

    .venv/bin/python benchmarks/trace_zlib.py [SET_DIR] [--max-questions 400] [--repeats 20]

Asks the set's questions (default: tara_zh in ../shared/eval beside the clone, or in EVLOOP_EVAL_DIR)
through ``Service.ask`` with a folder trace store writing plain frames (no sync), keeps each run's records
as written (``TraceStore.raw``), then builds each run's frame (``traces.journal.journal.pack``) plain and at
zlib
levels 1, 6 and 9, and reads it back (``traces.journal.journal.scan``: base64, inflate, the checks), the
variants
interleaved run by run, ``--repeats`` times each. It prints the bytes a frame takes on disk and the
microseconds of building and of reading one (median over the repeats, then p50 / mean over the runs),
and checks that every frame reads back to its records.
"""

from __future__ import annotations

import argparse
import shlex
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from common import EVAL_DIR, print_table, set_questions

from evidence_loop.agent.service import Service
from evidence_loop.tools.parse.sources import collect
from evidence_loop.tools.store.folder import Store
from evidence_loop.traces import TraceStore
from evidence_loop.traces.journal.journal import Frame, pack, scan

LEVELS: dict[str, int | None] = {"plain": None, "zlib 1": 1, "zlib 6": 6, "zlib 9": 9}


def _no_fsync(fd: int) -> None:
    """Syncs are not what this measures."""


def run_records(set_dir: Path, max_questions: int) -> list[tuple[str, bytes]]:
    """(run id, records as written) of each question of the set, asked through a traced Service."""
    docs = collect([set_dir / "corpus.jsonl"]).documents
    with tempfile.TemporaryDirectory(prefix="trace-zlib-") as tmp:
        store = Store.open(Path(tmp) / "index", create=True)
        try:
            store.ingest(docs)
            traces = TraceStore(Path(tmp) / "traces", fsync=_no_fsync, compress=None)
            service = Service(store, traces=traces)
            runs = []
            for question in set_questions(set_dir, max_questions):
                outcome = service.ask(question.text, question.groups)
                if outcome.trace is not None:
                    runs.append((outcome.trace.id, traces.raw(outcome.trace.id)))
            return runs
        finally:
            store.close()


def _micros(call: Callable[..., object], *args: object) -> float:
    started = time.perf_counter_ns()
    call(*args)
    return (time.perf_counter_ns() - started) / 1000


def measure(runs: Sequence[tuple[str, bytes]], repeats: int) -> dict[str, dict[str, float]]:
    """Per variant: bytes on disk and records per run, and microseconds to build and to read a frame."""
    build: dict[str, list[float]] = {name: [] for name in LEVELS}
    read: dict[str, list[float]] = {name: [] for name in LEVELS}
    stored: dict[str, int] = dict.fromkeys(LEVELS, 0)
    names = list(LEVELS)
    for n, (run_id, records) in enumerate(runs):
        shift = n % len(names)
        for name in names[shift:] + names[:shift]:
            frame = pack(run_id, records, LEVELS[name])
            [read_back] = scan(frame)
            assert isinstance(read_back, Frame) and read_back.records == records and read_back.error is None
            stored[name] += len(frame)
            build[name].append(
                statistics.median(_micros(pack, run_id, records, LEVELS[name]) for _ in range(repeats))
            )
            read[name].append(
                statistics.median(_micros(lambda f: list(scan(f)), frame) for _ in range(repeats))
            )
    count = max(1, len(runs))
    return {
        name: {
            "records": sum(len(records) for _, records in runs) / count,
            "stored": stored[name] / count,
            "build_p50": statistics.median(build[name]),
            "build_mean": statistics.fmean(build[name]),
            "read_p50": statistics.median(read[name]),
            "read_mean": statistics.fmean(read[name]),
            "runs": len(runs),
        }
        for name in LEVELS
    }


ROWS = (
    ("runs", lambda m: f"{m['runs']:.0f}", ""),
    ("records per run, bytes (mean)", lambda m: f"{m['records']:.0f}", ""),
    ("frame on disk per run, bytes (mean)", lambda m: f"{m['stored']:.0f}", "<= 6144"),
    ("build a frame, us: p50 / mean", lambda m: f"{m['build_p50']:.1f} / {m['build_mean']:.1f}", ""),
    ("read a frame back, us: p50 / mean", lambda m: f"{m['read_p50']:.1f} / {m['read_mean']:.1f}", ""),
)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("set", nargs="?", type=Path, default=EVAL_DIR / "tara_zh", metavar="SET_DIR")
    parser.add_argument("--max-questions", type=int, default=400, help="questions asked (default: 400)")
    parser.add_argument("--repeats", type=int, default=20, help="timings per frame and variant (default: 20)")
    args = parser.parse_args(argv)
    print("$ " + shlex.join(sys.orig_argv))
    runs = run_records(args.set, args.max_questions)
    print_table(ROWS, measure(runs, args.repeats))
    return 0


if __name__ == "__main__":
    sys.exit(main())
