"""What `evloop serve` spends before it answers: imports, opening the index, worker start-up.

    .venv/bin/python benchmarks/bench_serve.py [SET_DIR] [--root DIR ...] [--workers 1 2] [--rounds 3]

SET_DIR's corpus.jsonl is the index served (default: the bundled sample help centre). Each
``--root`` is a source tree of the project (default: this one) and gets a column, so that two trees
(say ``git archive HEAD | tar -x -C ../before``, and the working tree) are measured in one run on
the same machine. Every figure is the median of ``--rounds`` fresh processes, the trees taking turns:

- import: a fresh interpreter importing the CLI and the HTTP app (what each worker process pays),
  in wall time and in CPU time;
- open: ``Service.open`` and ``settle`` on the index in a fresh interpreter (the index load);
- serve N: from starting ``evloop serve --workers N`` to /readyz answering, and to every worker
  having logged that its application started (at most 120 s); restarted: workers the supervisor killed.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from common import print_table

REPO = Path(__file__).resolve().parents[1]
STARTED = "Application startup complete"
BUILD = """
import sys
from pathlib import Path
from evidence_loop.agent.service import Service
from evidence_loop.agent.doors.cli.sample import load_sample_kb
from evidence_loop.tools.parse.sources import read_corpus_jsonl
docs = read_corpus_jsonl(Path(sys.argv[2])) if sys.argv[2] else load_sample_kb()
service = Service.open(Path(sys.argv[1]), create=True)
service.ingest(docs)
service.close()
"""
IMPORT = "import evidence_loop.agent.doors.cli.app, evidence_loop.agent.doors.api.app"
OPEN = """
import sys, time
from pathlib import Path
from evidence_loop.agent.service import Service
t = time.perf_counter()
Service.open(Path(sys.argv[1])).settle()
print(time.perf_counter() - t)
"""
DEADLINE_S = 120


def python(root: Path, *args: str) -> str:
    done = subprocess.run([sys.executable, *args], cwd=root, capture_output=True, text=True, check=True)
    return done.stdout


def import_seconds(root: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds): the CPU time is what a busy machine cannot inflate."""
    start, cpu = time.perf_counter(), _children_cpu()
    python(root, "-c", IMPORT)
    return time.perf_counter() - start, _children_cpu() - cpu


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def serve_seconds(root: Path, index: Path, workers: int, log: Path) -> tuple[float, float, int]:
    """(seconds to /readyz, seconds until every worker started, workers restarted)."""
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "evidence_loop.agent.doors.cli.app",
        "serve",
        "--index",
        str(index),
        "--port",
        str(port),
    ]
    with log.open("wb") as out:
        process = subprocess.Popen([*command, "--workers", str(workers)], cwd=root, stdout=out, stderr=out)
    start = time.perf_counter()
    ready: float | None = None
    started: float | None = None
    try:
        while (ready is None or started is None) and time.perf_counter() - start < DEADLINE_S:
            if ready is None and _ready(port):
                ready = time.perf_counter() - start
            if started is None and log.read_text().count(STARTED) >= workers:
                started = time.perf_counter() - start
            time.sleep(0.02)
    finally:
        process.terminate()
        process.wait()
    never = float("nan")
    return ready or never, started or never, log.read_text().count("died")


def _ready(port: int) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=2).status_code == 200
    except httpx.TransportError:
        return False


def one_round(root: Path, index: Path, workers: list[int], scratch: Path) -> dict[str, float]:
    """Every figure once, for one tree."""
    out: dict[str, float] = {"open": float(python(root, "-c", OPEN, str(index)))}
    out["import"], out["import cpu"] = import_seconds(root)
    for n in workers:
        log = scratch / f"serve-{n}.log"
        out[f"ready {n}"], out[f"all {n}"], out[f"restarts {n}"] = serve_seconds(root, index, n, log)
    return out


def measure(roots: list[Path], corpus: str, workers: list[int], rounds: int) -> dict[str, dict[str, float]]:
    """Medians per tree; the trees take turns in each round, so that they share the machine's load."""
    scratch = {root: Path(tempfile.mkdtemp(prefix="bench-serve-")) for root in roots}
    try:
        for root in roots:
            python(root, "-c", BUILD, str(scratch[root] / "index"), corpus)
        runs: dict[Path, list[dict[str, float]]] = {root: [] for root in roots}
        for _ in range(rounds):
            for root in roots:
                runs[root].append(one_round(root, scratch[root] / "index", workers, scratch[root]))
    finally:
        for folder in scratch.values():
            shutil.rmtree(folder, ignore_errors=True)
    return {str(root): _medians(runs[root]) for root in roots}


def _medians(runs: list[dict[str, float]]) -> dict[str, float]:
    out = {name: statistics.median(run[name] for run in runs) for name in runs[0]}
    out.update({name: sum(run[name] for run in runs) for name in runs[0] if name.startswith("restarts")})
    return out


def _seconds(value: float) -> str:
    return f"> {DEADLINE_S}" if value != value else f"{value:.2f}"  # NaN: never ready


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("set_dir", nargs="?", type=Path, default=None)
    parser.add_argument("--root", type=Path, action="append", default=None, help="a source tree (repeatable)")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    corpus = str((args.set_dir / "corpus.jsonl").resolve()) if args.set_dir else ""
    roots = [root.resolve() for root in args.root or [REPO]]
    results = measure(roots, corpus, args.workers, args.rounds)
    rows = [
        ("import (s)", lambda m: _seconds(m["import"]), "-"),
        ("import, CPU (s)", lambda m: _seconds(m["import cpu"]), "-"),
        ("open + settle (s)", lambda m: _seconds(m["open"]), "-"),
    ]
    for n in args.workers:
        rows += [
            (f"serve {n}: /readyz (s)", lambda m, n=n: _seconds(m[f"ready {n}"]), "-"),
            (f"serve {n}: all workers up (s)", lambda m, n=n: _seconds(m[f"all {n}"]), "-"),
            (f"serve {n}: workers restarted", lambda m, n=n: f"{m[f'restarts {n}']:.0f}", "0"),
        ]
    print(f"index: {args.set_dir or 'the sample help centre'}; median of {args.rounds} rounds")
    print_table(rows, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
