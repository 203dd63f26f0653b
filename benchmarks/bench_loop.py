"""What the evidence loop costs on top of its seed recall, and what tracing costs on top of the loop.

    .venv/bin/python benchmarks/bench_loop.py [SET_DIR ...] [--rounds 2] [--warmup 50] [--max-questions N]

For each evaluation set (default: tara_zh in ../shared/eval beside the clone, or in EVLOOP_EVAL_DIR;
absent sets are skipped) the script ingests ``corpus.jsonl`` once into a temporary store, then times
every question of ``questions.jsonl`` (each with its own ``groups``) seven ways, on the same store object:

a. seed recall alone: ``snapshot.search(question, policy.seed_k, groups=...)``;
b. the full loop: ``Controller(Policy()).ask(snapshot, question, groups)``, no tracing;
c. the full loop through ``Service.ask`` with a ``TraceStore`` in the temporary folder as
   ``Service.open`` makes it (tracing on: the run's frame written to its day journal when it ends,
   synced by the journal's thread within ``trace_sync_ms`` of the outcome: 10 ms, or
   ``EVLOOP_TRACE_SYNC_MS``);
d. the full loop through ``Service.ask`` with tracing off, so that c/d isolates the cost of tracing;
e. (diagnostic) as c, but the ``TraceStore`` is given a no-op ``fsync``: e/d is what writing,
   hashing and serialising the trace costs, c/e what making it durable costs.
f. (diagnostic) a floor for any durable trace: the full loop with a bare recorder that encodes each
   step once (canonical JSON) and chains a sha256, then one ``write`` of the run's lines to a file
   kept open for appending and one ``fdatasync``; no header, no file per run, no index. f/b is
   what durability plus the least serialisation costs on this disk.
g. (diagnostic) as c, each run waiting for the sync that covers its frame (``trace_sync_ms`` 0, the
   default before it): g/d is what tracing costs with the sync on the request path.

The seven are interleaved per question, and their order rotates from one question to the next, so
machine noise and cache warmth hit them alike; ``--warmup`` questions go through all seven untimed
first, and ``--rounds`` repeats the whole set. Wall time is ``time.perf_counter`` around each call.
Trace bytes and events per run are taken from the timed traced runs: the bytes each takes on disk
(its journal frame, compressed), its records as written (``TraceStore.raw``: what a run's own file
holds), and the trace folder's size over every run it holds (the documents a header names, once). The heap is
frozen once the index is loaded (``agent.loop.runtime.freeze_heap``), as the server and batch do.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from common import (
    EVAL_DIR,
    Ask,
    Row,
    print_table,
    ratio,
    set_questions,
    summaries,
    time_interleaved,
    usable_sets,
)

from evidence_loop.agent import settings
from evidence_loop.agent.loop.controller import Controller
from evidence_loop.agent.loop.runtime import PlainRecorder, freeze_heap
from evidence_loop.agent.service import Service, trace_sync_within
from evidence_loop.policies.config import Policy
from evidence_loop.tools.parse.sources import collect
from evidence_loop.tools.search.snapshot import Snapshot
from evidence_loop.tools.store.folder import Store
from evidence_loop.traces import TraceStore
from evidence_loop.traces.records.hashing import event_hash_of_text, plain_canonical_json
from evidence_loop.traces.records.steps import AnyStep

DEFAULT_SETS = (EVAL_DIR / "tara_zh",)
LOOP_OVER_SEED_TARGET = 3.0  # full loop p95 / seed recall p95
LOOP_P50_TARGET_MS = 30.0  # full loop p50
TRACING_TARGET = 1.15  # traced p50 / untraced p50, both through Service
VARIANTS = ("seed", "loop", "traced", "untraced", "nofsync", "floor", "waited")


def _no_fsync(fd: int) -> None:
    """Stands in for ``os.fsync`` in the diagnostic variant: the data stays in the page cache."""


class _FloorRecorder(PlainRecorder):
    """Each step encoded once and hash-chained, kept in memory until the run ends."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.last = "0" * 64

    def record(self, step: AnyStep) -> None:
        text = plain_canonical_json(step.trace_data(), "data")  # the primitives the trace writer uses
        self.last = event_hash_of_text(self.last, len(self.lines), step.step, text)
        self.lines.append(f'{{"step":"{step.step}","data":{text},"hash":"{self.last}"}}\n')


def _variants(
    snapshot: Snapshot, services: dict[str, Service], run_ids: list[str], floor_fd: int
) -> dict[str, Ask]:
    """The seven ways of asking, by name; the traced one collects the run ids it wrote."""
    policy = Policy()
    controller = Controller(policy)

    def seed(question: str, groups: list[str]) -> None:
        snapshot.search(question, policy.seed_k, groups=groups)

    def loop(question: str, groups: list[str]) -> None:
        controller.ask(snapshot, question, groups)

    def traced(question: str, groups: list[str]) -> None:
        outcome = services["traced"].ask(question, groups)
        if outcome.trace is not None:
            run_ids.append(outcome.trace.id)

    def untraced(question: str, groups: list[str]) -> None:
        services["untraced"].ask(question, groups)

    def nofsync(question: str, groups: list[str]) -> None:
        services["nofsync"].ask(question, groups)

    def waited(question: str, groups: list[str]) -> None:
        services["waited"].ask(question, groups)

    def floor(question: str, groups: list[str]) -> None:
        recorder = _FloorRecorder()
        controller.ask(snapshot, question, groups, recorder=recorder)
        os.write(floor_fd, "".join(recorder.lines).encode("utf-8"))
        os.fdatasync(floor_fd)

    return {
        "seed": seed,
        "loop": loop,
        "traced": traced,
        "untraced": untraced,
        "nofsync": nofsync,
        "floor": floor,
        "waited": waited,
    }


def _trace_sizes(traces: TraceStore, run_ids: Sequence[str]) -> dict[str, float]:
    """Bytes and events per traced run: its records as written (what a run's own file holds, and what
    its journal frame reads back to), the bytes it takes on disk (its frame, compressed), and the whole
    store's files (journals, manifests, index, the documents kept once) over every run it holds."""
    total_bytes = sum(len(traces.raw(run_id)) for run_id in run_ids)
    stored_bytes = sum(traces.stored_size(run_id) for run_id in run_ids)
    total_events = sum(len(traces.read(run_id).events) for run_id in run_ids)
    folder = sum(path.stat().st_size for path in traces.root.rglob("*") if path.is_file())
    runs = max(1, len(run_ids))
    return {
        "traced_runs": len(run_ids),
        "bytes_per_run": total_bytes / runs,
        "stored_per_run": stored_bytes / runs,
        "store_per_run": folder / max(1, len(traces.list())),
        "events_per_run": total_events / runs,
    }


def measure(set_dir: Path, rounds: int, warmup: int, max_questions: int | None) -> dict[str, float]:
    """Every number of one set's column."""
    docs = collect([set_dir / "corpus.jsonl"]).documents
    questions = set_questions(set_dir, max_questions)
    with tempfile.TemporaryDirectory(prefix="bench-loop-") as tmp:
        store = Store.open(Path(tmp) / "index", create=True)
        try:
            store.ingest(docs)
            # as Service.open does: synced by the journal's thread within trace_sync_ms of the outcome
            within = trace_sync_within(settings.current().get("trace_sync_ms"))
            trace_store = TraceStore(Path(tmp) / "traces", fsync=os.fdatasync, sync_within=within)
            services = {
                "traced": Service(store, traces=trace_store),
                "untraced": Service(store),
                "nofsync": Service(store, traces=TraceStore(Path(tmp) / "traces-nofsync", fsync=_no_fsync)),
                "waited": Service(store, traces=TraceStore(Path(tmp) / "traces-waited", fsync=os.fdatasync)),
            }
            run_ids: list[str] = []
            snapshot = store.snapshot()
            freeze_heap()  # as `evloop serve` and `evloop batch` do once the index is loaded
            floor_fd = os.open(Path(tmp) / "floor.jsonl", os.O_CREAT | os.O_WRONLY | os.O_APPEND, 0o644)
            asks = _variants(snapshot, services, run_ids, floor_fd)
            time_interleaved(asks, questions[:warmup], 1)
            run_ids.clear()  # the warm-up runs are not counted in the trace sizes
            numbers = summaries(time_interleaved(asks, questions, rounds))
            numbers.update(_trace_sizes(trace_store, run_ids))
            os.close(floor_fd)
            for service in services.values():
                if service.traces is not None:
                    service.traces.close()  # the journals' threads sync what they hold and end
        finally:
            store.close()
    numbers.update(docs=len(docs), questions=len(questions), rounds=rounds)
    return numbers


def _spread(name: str) -> Callable[[dict[str, float]], str]:
    def cell(m: dict[str, float]) -> str:
        return " / ".join(f"{m[f'{name}_{stat}']:.2f}" for stat in ("p50", "p95", "p99", "mean"))

    return cell


ROWS: tuple[Row, ...] = (
    ("documents / questions", lambda m: f"{m['docs']:.0f} / {m['questions']:.0f}", ""),
    (
        "rounds / timed calls per variant",
        lambda m: f"{m['rounds']:.0f} / {m['rounds'] * m['questions']:.0f}",
        "",
    ),
    ("latency, ms: p50 / p95 / p99 / mean", lambda m: "", ""),
    ("(a) seed recall (search, seed_k)", _spread("seed"), ""),
    ("(b) full loop (Controller.ask)", _spread("loop"), ""),
    ("(c) Service.ask, tracing on", _spread("traced"), ""),
    ("(d) Service.ask, tracing off", _spread("untraced"), ""),
    ("(e) as (c), fsync a no-op", _spread("nofsync"), ""),
    ("(f) floor: loop + 1 encode/step, 1 append + fdatasync", _spread("floor"), ""),
    ("(g) as (c), each run waits for its sync (trace_sync_ms 0)", _spread("waited"), ""),
    (
        "full loop p95 / seed p95",
        lambda m: ratio(m["loop_p95"], m["seed_p95"]),
        f"<= {LOOP_OVER_SEED_TARGET:g}x",
    ),
    ("full loop p50, ms", lambda m: f"{m['loop_p50']:.2f}", f"< {LOOP_P50_TARGET_MS:g} ms"),
    (
        "tracing on / off, p50 (c/d)",
        lambda m: ratio(m["traced_p50"], m["untraced_p50"]),
        f"<= {TRACING_TARGET:g}x",
    ),
    ("tracing on / off, p95 (c/d)", lambda m: ratio(m["traced_p95"], m["untraced_p95"]), ""),
    ("tracing, no fsync / off, p50 (e/d)", lambda m: ratio(m["nofsync_p50"], m["untraced_p50"]), ""),
    ("floor / loop, p50 (f/b)", lambda m: ratio(m["floor_p50"], m["loop_p50"]), ""),
    (
        "tracing, waiting for its sync / off, p50 (g/d)",
        lambda m: ratio(m["waited_p50"], m["untraced_p50"]),
        "",
    ),
    ("Service off / Controller, p50 (d/b)", lambda m: ratio(m["untraced_p50"], m["loop_p50"]), ""),
    ("trace bytes per run, stored (its frame)", lambda m: f"{m['stored_per_run']:.0f}", "<= 6 KB"),
    ("trace bytes per run, records as written", lambda m: f"{m['bytes_per_run']:.0f}", ""),
    ("trace store bytes / runs (all its files)", lambda m: f"{m['store_per_run']:.0f}", ""),
    ("trace events per run (mean)", lambda m: f"{m['events_per_run']:.1f}", ""),
    ("traced runs counted", lambda m: f"{m['traced_runs']:.0f}", ""),
)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("sets", nargs="*", type=Path, default=list(DEFAULT_SETS), metavar="SET_DIR")
    parser.add_argument("--rounds", type=int, default=2, help="times through the set (default: 2)")
    parser.add_argument("--warmup", type=int, default=50, help="untimed questions first (default: 50)")
    parser.add_argument("--max-questions", type=int, default=None, help="time only the first N questions")
    args = parser.parse_args(argv)
    print("$ " + shlex.join(sys.orig_argv))
    results: dict[str, dict[str, float]] = {}
    for set_dir in usable_sets(args.sets):
        results[set_dir.name] = measure(set_dir, args.rounds, args.warmup, args.max_questions)
    if results:
        print_table(ROWS, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
