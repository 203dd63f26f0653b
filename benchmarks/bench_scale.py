"""A knowledge base of 10,000 to 300,000 units: what ingest, the index, `serve` and a question cost as
it grows.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_scale.py [--sizes 10000 30000 100000 300000]
        [--work /tmp/evloop-scale] [--reuse] [--questions 100] [--warmup 10] [--source SET_DIR ...]
        [--serve-workers 2] [--skip-serve] [--json OUT]

For each size, in fresh processes so that each figure is its own:

1. corpus: ``scale_corpus.build`` (the help centre of benchmarks/helpcentre repeated and perturbed,
   plus any ``--source`` evaluation sets as more templates), written to WORK/corpus-SIZE.jsonl.
2. ingest: ``Service.open(create=True, embedder=HashEmbedder())`` and one ``ingest`` of every document,
   as ``evloop ingest`` does (one transaction, the corpus's scale measured in it); units/s, the part
   of it spent measuring the scale, and the child's peak RSS (ru_maxrss); then the seconds to add
   one more short document, a write of its own (every write indexes the whole generation again).
   The hash embedder (benchmarks/hash_embedder.py, byte trigrams into 384 dimensions) costs little,
   so the figures are the project's, not a model's.
3. disk: the database, the bm25 indexes (units and passages) and vectors.npy of the generation.
4. ask: the first ``--questions`` of benchmarks/helpcentre/questions.jsonl (their answers are in the
   corpus: its templates are there as they are), untraced, asked through ``Service.ask`` lexically
   (no embedder) and hybrid (the hash embedder), alternately, after ``--warmup`` of each; p50 and
   p95. Also the seconds from ``Service.open`` to a loaded snapshot, and the RSS then.
5. serve: ``evloop serve --workers N --no-trace`` (EVLOOP_EMBEDDER=none: the hash embedder is not
   a setting; the vectors are loaded all the same): seconds to /readyz, to every worker up, and each
   worker's RSS and PSS (/proc/PID/smaps_rollup) once it has answered questions; for 1 worker
   the server process itself. ``--skip-serve`` leaves it out.

With ``--reuse`` a size whose index (and results) WORK already holds is not ingested again: the
300,000-unit corpus is heavy on a small machine, build it once. Growth is each figure over the
first size's; "exp" is the exponent of that growth (1: linear in the units, 0: flat). Times are
given as wall time and as CPU time (the process's, every thread; per question the question's own):
on a shared machine the wall time follows the load, the CPU time much less, so read growth in CPU.
MB are 10^6 bytes.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import scale_corpus
import scale_serve
from common import EVAL_DIR, percentile, set_questions

HERE = Path(__file__).resolve().parent
QUESTIONS = HERE / "helpcentre"
Result = dict[str, float]
ONE_MORE = (
    "# Gift cards\n\nA gift card never expires.\n\n- It can pay for any order.\n- It cannot be refunded.\n"
)


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e6


def current_rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024 / 1e6
    return float("nan")


class Clock:
    """Wall and CPU seconds of a block (CPU: this process's, every thread): a busy machine stretches
    the wall time, much less the CPU time."""

    def __enter__(self) -> Clock:
        self._wall, self._cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall = time.perf_counter() - self._wall
        self.cpu = time.process_time() - self._cpu


def child_ingest(index: Path, corpus: Path) -> Result:
    """Ingest the corpus into a new index, timing the scale's measurement apart (wall and CPU)."""
    from hash_embedder import HashEmbedder

    from evidence_loop.agent.loop.calibrate import ScaleKeeper
    from evidence_loop.agent.loop.controller import Controller
    from evidence_loop.agent.service import Service
    from evidence_loop.policies.config import Policy
    from evidence_loop.tools.parse.sources import read_corpus_jsonl
    from evidence_loop.tools.types import DocumentInput

    docs = read_corpus_jsonl(corpus)
    embedder = HashEmbedder()
    spent = {"scale_s": 0.0, "scale_cpu_s": 0.0}
    keeper = ScaleKeeper(Controller(Policy(), None, embedder=embedder))

    def timed(*args: Any, **kwargs: Any) -> Any:
        with Clock() as clock:
            found = keeper(*args, **kwargs)
        spent["scale_s"] += clock.wall
        spent["scale_cpu_s"] += clock.cpu
        return found

    with Service.open(index, create=True, embedder=embedder, tracing_on=False) as service:
        service.store.keep_scale_with(timed)
        with Clock() as whole:
            report = service.ingest(docs)
        peak = rss_mb()
        with Clock() as one:
            service.ingest([DocumentInput("one-more", ONE_MORE, format="markdown")])
    return {
        "documents": len(docs),
        "units": report.units,
        "ingest_s": whole.wall,
        "ingest_cpu_s": whole.cpu,
        **spent,
        "ingest_peak_mb": peak,
        "one_more_s": one.wall,
        "one_more_cpu_s": one.cpu,
    }


def child_ask(index: Path, count: int, warmup: int) -> Result:
    """Open the index, then time the questions lexically and hybrid, alternately (wall and CPU)."""
    from hash_embedder import HashEmbedder

    from evidence_loop.agent.service import Service

    with Clock() as opening:
        hybrid = Service.open(index, embedder=HashEmbedder(), tracing_on=False, reranker=None, llm=None)
        hybrid.settle()
    out: Result = {"open_s": opening.wall, "open_cpu_s": opening.cpu, "open_rss_mb": current_rss_mb()}
    lexical = Service(hybrid.store, policy=hybrid.policy, embedder=None)
    questions = [q.text for q in set_questions(QUESTIONS, warmup + count)]
    modes: dict[str, Callable[[str], object]] = {"lexical": lexical.ask, "hybrid": hybrid.ask}
    times: dict[str, list[float]] = {f"{name}{kind}": [] for name in modes for kind in ("", "_cpu")}
    for n, question in enumerate(questions):
        for name in list(modes)[n % 2 :] + list(modes)[: n % 2]:
            with Clock() as asked:
                modes[name](question)
            if n >= warmup:
                times[name].append(asked.wall * 1000)
                times[f"{name}_cpu"].append(asked.cpu * 1000)
    for name, samples in times.items():
        out[f"{name}_p50"] = percentile(samples, 0.5)
        out[f"{name}_p95"] = percentile(samples, 0.95)
    out["ask_rss_mb"] = current_rss_mb()
    hybrid.close()
    return out


def disk(index: Path) -> Result:
    """MB on disk: the database (with its WAL) and the committed generation's files."""

    def size(paths: Sequence[Path]) -> float:
        return sum(p.stat().st_size for p in paths if p.is_file()) / 1e6

    generations = sorted((index / "bm25").glob("gen-*"))
    folder = generations[-1] if generations else index
    return {
        "db_mb": size(list(index.glob("store.sqlite3*"))),
        "bm25_mb": size([p for p in folder.rglob("*") if p.name != "vectors.npy"]),
        "vectors_mb": size([folder / "vectors.npy"]),
    }


def in_child(mode: str, *args: str) -> Result:
    command = [sys.executable, __file__, "--child", mode, *args]
    done = subprocess.run(command, cwd=HERE, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{mode} failed:\n{done.stderr[-3000:]}")
    result: Result = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def measure(size: int, args: argparse.Namespace) -> Result:
    work: Path = args.work
    work.mkdir(parents=True, exist_ok=True)
    corpus, index, saved = work / f"corpus-{size}.jsonl", work / f"index-{size}", work / f"ingest-{size}.json"
    if not (args.reuse and saved.is_file() and index.is_dir()):
        started = time.perf_counter()
        docs = scale_corpus.build(size, args.source)
        write_corpus(corpus, docs)
        print(
            f"{size}: corpus of {len(docs)} documents in {time.perf_counter() - started:.0f} s",
            file=sys.stderr,
        )
        subprocess.run(["rm", "-rf", str(index)], check=True)
        saved.write_text(json.dumps(in_child("ingest", str(index), str(corpus))))
    out: Result = json.loads(saved.read_text())
    out["units_per_s"] = out["units"] / out["ingest_s"]
    if "ingest_cpu_s" in out:  # not in results saved before CPU time was measured
        out["units_per_cpu_s"] = out["units"] / out["ingest_cpu_s"]
    out.update(disk(index))
    print(f"{size}: ingested {out['units']:.0f} units at {out['units_per_s']:.0f}/s", file=sys.stderr)
    out.update(in_child("ask", str(index), str(args.questions), str(args.warmup)))
    if not args.skip_serve:
        questions = [q.text for q in set_questions(QUESTIONS, 8)]
        out.update(scale_serve.measure(index, 1, questions))
        out.update(scale_serve.measure(index, args.serve_workers, questions))
    out["load"] = os.getloadavg()[0]
    return out


def write_corpus(path: Path, docs: Sequence[Any]) -> None:
    with path.open("w", encoding="utf-8") as out:
        for doc in docs:
            record = {"doc_id": doc.doc_id, "text": doc.text, "title": doc.title, "format": doc.format}
            out.write(json.dumps(record, ensure_ascii=False) + "\n")


ROWS: tuple[tuple[str, str, str], ...] = (
    ("units", "units", "{:,.0f}"),
    ("documents", "documents", "{:,.0f}"),
    ("ingest units/s", "units_per_s", "{:,.0f}"),
    ("ingest units/CPU s", "units_per_cpu_s", "{:,.0f}"),
    ("ingest s", "ingest_s", "{:.1f}"),
    ("  of which measuring the scale s", "scale_s", "{:.1f}"),
    ("ingest CPU s", "ingest_cpu_s", "{:.1f}"),
    ("  of which measuring the scale CPU s", "scale_cpu_s", "{:.1f}"),
    ("ingest peak RSS MB", "ingest_peak_mb", "{:,.0f}"),
    ("one more document s", "one_more_s", "{:.2f}"),
    ("one more document CPU s", "one_more_cpu_s", "{:.2f}"),
    ("database MB", "db_mb", "{:,.1f}"),
    ("bm25 indexes MB", "bm25_mb", "{:,.1f}"),
    ("vectors.npy MB", "vectors_mb", "{:,.1f}"),
    ("open to loaded snapshot s", "open_s", "{:.2f}"),
    ("open to loaded snapshot CPU s", "open_cpu_s", "{:.2f}"),
    ("RSS loaded MB", "open_rss_mb", "{:,.0f}"),
    ("ask lexical p50 ms", "lexical_p50", "{:.1f}"),
    ("ask lexical p95 ms", "lexical_p95", "{:.1f}"),
    ("ask lexical p50 CPU ms", "lexical_cpu_p50", "{:.1f}"),
    ("ask lexical p95 CPU ms", "lexical_cpu_p95", "{:.1f}"),
    ("ask hybrid p50 ms", "hybrid_p50", "{:.1f}"),
    ("ask hybrid p95 ms", "hybrid_p95", "{:.1f}"),
    ("ask hybrid p50 CPU ms", "hybrid_cpu_p50", "{:.1f}"),
    ("ask hybrid p95 CPU ms", "hybrid_cpu_p95", "{:.1f}"),
    ("RSS after asking MB", "ask_rss_mb", "{:,.0f}"),
    *scale_serve.ROWS,
    ("load average (1 min)", "load", "{:.1f}"),
)


def print_table(results: dict[int, Result]) -> None:
    sizes = list(results)
    first = sizes[0]
    header = [
        "metric",
        *(f"{s:,}" for s in sizes),
        *(f"x ({s // 1000}k/{first // 1000}k)" for s in sizes[1:]),
    ]
    rows = [header]
    for label, key, shape in ROWS:
        if not all(key in results[s] for s in sizes):
            continue
        values = [shape.format(results[s][key]) for s in sizes]
        growth = [_growth(results[s], results[first], key) for s in sizes[1:]]
        rows.append([label, *values, *growth])
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    for n, row in enumerate(rows):
        print(
            "  ".join(
                cell.rjust(w) if i else cell.ljust(w)
                for i, (cell, w) in enumerate(zip(row, widths, strict=True))
            )
        )
        if n == 0:
            print("  ".join("-" * w for w in widths))


def _growth(now: Result, first: Result, key: str) -> str:
    if key in ("units", "load") or not first.get(key) or not now.get(key):
        return ""
    ratio = now[key] / first[key]
    exponent = math.log(ratio) / math.log(now["units"] / first["units"])
    return f"{ratio:.2f} (exp {exponent:.2f})"


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 30_000, 100_000, 300_000])
    parser.add_argument("--work", type=Path, default=Path("/tmp/evloop-scale"))
    parser.add_argument("--reuse", action="store_true", help="keep an index WORK already holds")
    parser.add_argument("--questions", type=int, default=100)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument(
        "--source", type=Path, nargs="*", default=[], help=f"more templates (e.g. {EVAL_DIR}/tara_zh)"
    )
    parser.add_argument("--serve-workers", type=int, default=2)
    parser.add_argument("--skip-serve", action="store_true")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args()
    if args.child:
        mode, *rest = args.child
        result = child_ingest(Path(rest[0]), Path(rest[1])) if mode == "ingest" else None
        if mode == "ask":
            result = child_ask(Path(rest[0]), int(rest[1]), int(rest[2]))
        print(json.dumps(result))
        return 0
    results: dict[int, Result] = {}
    for size in args.sizes:
        results[size] = measure(size, args)
        if args.json:  # after each size: a long run stopped half way keeps what it measured
            args.json.write_text(json.dumps(results, indent=1))
    print(f"bench_scale: {' '.join(sys.argv[1:])}; cores {len(os.sched_getaffinity(0))}")
    print_table(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
