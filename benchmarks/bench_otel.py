"""What exporting runs as OpenTelemetry spans costs: off (against another tree, "today") and on.

    .venv/bin/python benchmarks/bench_otel.py --base TREE [SET_DIR] [--rounds 2] [--warmup 30]
        [--max-questions N]

TREE is a checkout of the tree to compare with (e.g. ``git archive main | tar -x -C /tmp/main``).
Three workers, each this file run as a script with a tree first on the path, each ingesting the
set's ``corpus.jsonl`` into its own temporary folder store without an embedder (lexical: the model
does not matter here) and timing ``Service.ask`` with tracing on (a trace folder beside the index):

    base  TREE's Service, as it was
    off   this tree's Service, export off (the default: ``spans`` from the settings, none set)
    on    this tree's Service with an SDK tracer provider, a batch processor and an exporter that
          drops every span (the cost of making the spans, not of a collector's network)

Each question goes to the three in turn, the order rotating per question (``common.time_interleaved``),
timed in the worker so that the pipe is not counted. Prints p50, p95 and mean per worker and the
ratios off/base and on/off (target: off/base within 1.02x).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from common import EVAL_DIR, Ask, ratio, set_questions, summaries, time_interleaved

ROOT = Path(__file__).resolve().parents[1]
MODES = ("base", "off", "on")


class Worker:
    def __init__(self, tree: Path, mode: str, set_dir: Path, commands: list[str]) -> None:
        command = [sys.executable, __file__, "--worker", mode, str(set_dir)]
        commands.append(f"PYTHONPATH={tree} {shlex.join(command)}")
        env = {**os.environ, "PYTHONPATH": str(tree), "EVLOOP_EMBEDDER": "none", "OMP_NUM_THREADS": "1"}
        self._process = subprocess.Popen(
            command, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert self._process.stdin is not None and self._process.stdout is not None
        self._in, self._out = self._process.stdin, self._process.stdout
        ready = json.loads(self._out.readline())
        if Path(ready["agent"]).parent != tree / "evidence_loop":
            raise SystemExit(f"the {mode} worker imported evidence_loop from {ready['agent']}")

    def ask(self, question: str, groups: list[str]) -> float:
        self._in.write(json.dumps({"question": question, "groups": groups}) + "\n")
        self._in.flush()
        return float(self._out.readline())

    def close(self) -> None:
        self._in.close()
        self._process.wait()


def serve(mode: str, set_dir: Path) -> int:
    """The worker: a lexical traced service over the set, one timed ``ask`` per line of stdin."""
    from evidence_loop.agent import service as service_module
    from evidence_loop.tools.parse.sources import collect

    spans: Any = "configured"
    if mode == "on":
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

        class Dropped(SpanExporter):
            def export(self, spans: Any) -> SpanExportResult:
                return SpanExportResult.SUCCESS

        spans = TracerProvider()
        spans.add_span_processor(BatchSpanProcessor(Dropped()))
    docs = collect([set_dir / "corpus.jsonl"]).documents
    with tempfile.TemporaryDirectory(prefix="bench-otel-") as tmp:
        options = {} if mode == "base" else {"spans": spans}
        with service_module.Service.open(
            Path(tmp) / "index", create=True, embedder=None, **options
        ) as service:
            service.ingest(docs)
            ready = {"agent": str(Path(service_module.__file__).parent)}
            print(json.dumps(ready), flush=True)
            for line in sys.stdin:
                request = json.loads(line)
                started = time.perf_counter()
                service.ask(request["question"], request["groups"])
                print((time.perf_counter() - started) * 1000, flush=True)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("set_dir", nargs="?", type=Path, default=EVAL_DIR / "emanual_en_reject")
    parser.add_argument("--base", type=Path, required=True, help="a checkout of the tree to compare with")
    parser.add_argument("--rounds", type=int, default=2, help="times through the questions (default: 2)")
    parser.add_argument("--warmup", type=int, default=30, help="untimed questions first (default: 30)")
    parser.add_argument("--max-questions", type=int, default=None, help="time only the first N questions")
    args = parser.parse_args(argv)
    questions = set_questions(args.set_dir, args.max_questions)
    commands: list[str] = []
    trees = {"base": args.base, "off": ROOT, "on": ROOT}
    workers: dict[str, Worker] = {}
    try:
        for mode in MODES:
            workers[mode] = Worker(trees[mode], mode, args.set_dir, commands)
        asks: dict[str, Ask] = {mode: w.ask for mode, w in workers.items()}
        time_interleaved(asks, questions[: args.warmup], 1)
        timed = summaries(time_interleaved(asks, questions, args.rounds))
    finally:
        for worker in workers.values():
            worker.close()
    print(
        f"{args.set_dir.name}: {len(questions)} questions x {args.rounds} rounds, Service.ask traced, lexical"
    )
    print(f"{'worker':<8}{'p50 ms':>10}{'p95 ms':>10}{'mean ms':>10}")
    for mode in MODES:
        print(
            f"{mode:<8}{timed[f'{mode}_p50']:>10.2f}{timed[f'{mode}_p95']:>10.2f}{timed[f'{mode}_mean']:>10.2f}"
        )
    print(f"off/base p50 {ratio(timed['off_p50'], timed['base_p50'])} (target <= 1.02x), "
          f"mean {ratio(timed['off_mean'], timed['base_mean'])}")  # fmt: skip
    on_off = ratio(timed["on_p50"], timed["off_p50"]), ratio(timed["on_mean"], timed["off_mean"])
    print(f"on/off p50 {on_off[0]}, mean {on_off[1]}")
    print("workers:\n" + "\n".join(commands))
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--worker":
        sys.exit(serve(sys.argv[2], Path(sys.argv[3])))
    sys.exit(main())
