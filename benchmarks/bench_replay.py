"""Does every traced run replay identically, and what do replay, verify and the traces themselves cost?

    .venv/bin/python benchmarks/bench_replay.py [SET_DIR ...] [--max-questions N] [--show 5]

For each evaluation set (default: tara_zh and rgb_fact_zh in ../shared/eval beside the clone, or in
EVLOOP_EVAL_DIR; absent sets are skipped) the script, in one process:

1. opens a ``Service`` on a temporary index with tracing on (traces in ``INDEX/traces``) and ingests
   ``corpus.jsonl`` through it;
2. answers every question with its own ``groups``, as ``evloop batch`` does (``answer_all`` over
   ``Service.ask``, results written to a temporary results.jsonl); each outcome's ``latency_ms`` is the
   original run's latency;
3. lists the complete runs in the trace store and, for each, times ``read`` + pinned
   ``agent.loop.replay.replay(trace, store)`` + the step diff (wall), keeping the report's own ``seconds``
   (the controller run alone, the like-for-like figure against ``latency_ms``);
4. times ``TraceStore.verify(run_id)`` for each run (read + hash chain + index lookup);
5. measures the trace files and the whole trace folder on disk.

It prints one table, one column per set, then up to ``--show`` divergences per set
(``ReplayReport.describe()``). It exits 1 if any run did not replay identically or failed verify.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from common import EVAL_DIR, Row, percentile, print_table, ratio, usable_sets

from evidence_loop.agent.loop.replay import replay
from evidence_loop.agent.service import Service
from evidence_loop.agent.tuning.evaluate import answer_all, read_questions, write_jsonl
from evidence_loop.tools.parse.sources import collect
from evidence_loop.traces import TraceStore

DEFAULT_SETS = (EVAL_DIR / "tara_zh", EVAL_DIR / "rgb_fact_zh")


def _folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def _spread(prefix: str, ms: Sequence[float]) -> dict[str, float]:
    return {f"{prefix}_p50": percentile(ms, 0.5), f"{prefix}_p95": percentile(ms, 0.95)}


def _answer(service: Service, set_dir: Path, results: Path, limit: int | None) -> dict[str, float]:
    """The batch: every question asked and written; the original latencies and the wall time."""
    questions = read_questions(set_dir / "questions.jsonl")
    questions = questions[:limit] if limit else questions
    latencies: list[float] = []
    started = time.perf_counter()

    def rows() -> Iterator[dict[str, object]]:
        for row in answer_all(service.ask, questions):
            latencies.append(float(str(row["latency_ms"])))
            yield row

    count = write_jsonl(results, rows())
    batch_s = time.perf_counter() - started
    return {"questions": count, "batch_s": batch_s, **_spread("run", latencies)}


def _replay_all(service: Service, traces: TraceStore, show: int) -> tuple[dict[str, float], list[str]]:
    """Replay and verify every complete run; the figures and the first ``show`` divergences."""
    replay_ms: list[float] = []
    wall_ms: list[float] = []
    verify_ms: list[float] = []
    divergences: list[str] = []
    identical = verified = trace_bytes = 0
    run_ids = [s.run_id for s in traces.list() if s.status == "complete"]
    for run_id in run_ids:
        started = time.perf_counter()
        report = replay(traces.read(run_id), service.store)
        wall_ms.append((time.perf_counter() - started) * 1000)
        replay_ms.append(report.seconds * 1000)
        identical += report.identical
        if not report.identical and len(divergences) < show:
            divergences.append(report.describe())
    for run_id in run_ids:
        started = time.perf_counter()
        verified += traces.verify(run_id).ok
        verify_ms.append((time.perf_counter() - started) * 1000)
        trace_bytes += len(traces.raw(run_id))
    numbers = {
        "runs": len(run_ids),
        "identical": identical,
        "verified": verified,
        "bytes_per_run": trace_bytes / max(1, len(run_ids)),
        "folder_mb": _folder_bytes(traces.root) / 1e6,
        **_spread("replay", replay_ms),
        **_spread("wall", wall_ms),
        **_spread("verify", verify_ms),
    }
    return numbers, divergences


def measure(set_dir: Path, limit: int | None, show: int) -> tuple[dict[str, float], list[str]]:
    """Every number of one set's column, and its first divergences."""
    docs = collect([set_dir / "corpus.jsonl"]).documents
    with tempfile.TemporaryDirectory(prefix="bench-replay-") as tmp:
        service = Service.open(Path(tmp) / "index", create=True, tracing_on=True)
        try:
            service.ingest(docs)
            assert service.traces is not None  # tracing_on=True
            numbers = _answer(service, set_dir, Path(tmp) / "results.jsonl", limit)
            replayed, divergences = _replay_all(service, service.traces, show)
        finally:
            service.close()
    return {"docs": len(docs), **numbers, **replayed}, divergences


def _pair(a: str, b: str) -> Callable[[dict[str, float]], str]:
    def cell(m: dict[str, float]) -> str:
        return f"{m[a]:.2f} / {m[b]:.2f}"

    return cell


ROWS: tuple[Row, ...] = (
    ("documents / questions", lambda m: f"{m['docs']:.0f} / {m['questions']:.0f}", ""),
    ("batch wall time, s", lambda m: f"{m['batch_s']:.1f}", ""),
    ("runs replayed (complete traces)", lambda m: f"{m['runs']:.0f}", ""),
    ("identical", lambda m: f"{m['identical']:.0f}", "all"),
    ("original run ms p50 / p95 (latency_ms)", _pair("run_p50", "run_p95"), ""),
    ("replay ms p50 / p95 (report.seconds)", _pair("replay_p50", "replay_p95"), ""),
    ("replay / original, p50", lambda m: ratio(m["replay_p50"], m["run_p50"]), ""),
    ("replay / original, p95", lambda m: ratio(m["replay_p95"], m["run_p95"]), ""),
    ("read+replay+diff wall ms p50 / p95", _pair("wall_p50", "wall_p95"), ""),
    ("verify ms p50 / p95 per run", _pair("verify_p50", "verify_p95"), ""),
    ("verify ok", lambda m: f"{m['verified']:.0f}", "all"),
    ("trace bytes per run", lambda m: f"{m['bytes_per_run']:.0f}", ""),
    ("trace folder on disk, MB", lambda m: f"{m['folder_mb']:.2f}", ""),
)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("sets", nargs="*", type=Path, default=list(DEFAULT_SETS), metavar="SET_DIR")
    parser.add_argument("--max-questions", type=int, default=None, help="answer only the first N questions")
    parser.add_argument("--show", type=int, default=5, help="divergences to print per set (default: 5)")
    args = parser.parse_args(argv)
    print("$ " + shlex.join(sys.orig_argv))
    results: dict[str, dict[str, float]] = {}
    divergences: dict[str, list[str]] = {}
    for set_dir in usable_sets(args.sets):
        results[set_dir.name], divergences[set_dir.name] = measure(set_dir, args.max_questions, args.show)
    if results:
        print_table(ROWS, results)
    for name, lines in divergences.items():
        if lines:
            print(f"\nfirst divergences in {name}:")
            print("\n".join(f"  {line}" for line in lines))
    failed = any(m["identical"] < m["runs"] or m["verified"] < m["runs"] for m in results.values())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
