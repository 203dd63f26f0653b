"""What tracing costs a served load: traced against untraced requests/s, in interleaved pairs.

    .venv/bin/python benchmarks/trace_cost.py [SET_DIR] [--seconds 15] [--pairs 3]
                                              [--backends folder,postgresql] [--recall lexical,hybrid]

For each backend (an index folder with its trace folder; a PostgreSQL database of a server of its own,
started as tests/pg_server.py starts one, fsync off as in the tests unless ``--pg-fsync``) and each
recall (lexical: ``EVLOOP_EMBEDDER=none``; hybrid: the default in-process embedder), the script runs
``benchmarks/load_api.py`` (16 clients, 2 workers, the quiet phase only) ``--pairs`` times traced and
untraced, the two runs of a pair back to back and their order swapped from one pair to the next, so
that machine noise hits both alike. Each run gets a fresh index (or database). It prints, per
configuration, the medians over the pairs: requests/s traced and untraced, their ratio (the target is
>= 0.85), the servers' CPU milliseconds per request, traced and untraced, and for PostgreSQL the
KB a traced run takes in the database (its trace tables on disk, indexes included, over its runs).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/pg_server.py

from common import EVAL_DIR

from tests.pg_server import PgServer

TARGET = 0.85
LOAD_API = Path(__file__).resolve().parent / "load_api.py"


def load(
    set_dir: Path, args: argparse.Namespace, *, traced: bool, recall: str, store: str | None, out: Path
) -> dict[str, float]:
    """One run of load_api.py: requests/s and the servers' CPU ms per request of its quiet phase."""
    command = [sys.executable, str(LOAD_API), str(set_dir), "--seconds", str(args.seconds)]
    command += ["--clients", str(args.clients), "--workers", str(args.workers), "--phases", "quiet"]
    command += ["--json", str(out), *([] if traced else ["--no-trace"])]
    command += ["--store", store] if store else []
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    if recall == "lexical":
        env["EVLOOP_EMBEDDER"] = "none"
    else:
        env.pop("EVLOOP_EMBEDDER", None)
        if args.ingest_embed_cache:
            command += ["--ingest-embed-cache", str(args.ingest_embed_cache)]
    subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL)
    [row] = json.loads(out.read_text(encoding="utf-8"))
    return {"rps": float(row["throughput_rps"]), "cpu": float(row["cpu_ms_per_request"]["server"])}


def stored_kb_per_run(url: str) -> float:
    """KB a traced run takes in the database: the trace tables on disk (indexes and TOAST included,
    the documents the headers name once) over the runs they hold."""
    import psycopg

    tables = ("trace_runs", "trace_records", "trace_documents")
    size = " + ".join(f"pg_total_relation_size('{table}')" for table in tables)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CHECKPOINT")  # nothing left only in the WAL
        row = conn.execute(f"SELECT {size}, (SELECT count(*) FROM trace_runs)").fetchone()
    assert row is not None
    return float(row[0]) / max(1, int(row[1])) / 1000


def measure(
    set_dir: Path, args: argparse.Namespace, backend: str, recall: str, work: Path
) -> dict[str, float]:
    """The medians of ``--pairs`` interleaved traced/untraced pairs of one configuration."""
    server = PgServer.start(fsync=args.pg_fsync) if backend == "postgresql" else None
    runs: dict[bool, list[dict[str, float]]] = {True: [], False: []}
    ratios = []
    try:
        for pair in range(args.pairs):
            order = (True, False) if pair % 2 == 0 else (False, True)
            got = {}
            for traced in order:
                store = server.new_database() if server is not None else None
                out = work / f"{backend}-{recall}-{pair}-{traced}.json"
                got[traced] = load(set_dir, args, traced=traced, recall=recall, store=store, out=out)
                if traced and store is not None:
                    got[traced]["kb_per_run"] = stored_kb_per_run(store)
                runs[traced].append(got[traced])
            ratios.append(got[True]["rps"] / got[False]["rps"])
    finally:
        if server is not None:
            server.destroy()
    med = statistics.median
    sizes = [r["kb_per_run"] for r in runs[True] if "kb_per_run" in r]
    return {
        "kb_per_run": med(sizes) if sizes else float("nan"),
        "traced": med(r["rps"] for r in runs[True]),
        "untraced": med(r["rps"] for r in runs[False]),
        "ratio": med(ratios),
        "cpu_traced": med(r["cpu"] for r in runs[True]),
        "cpu_untraced": med(r["cpu"] for r in runs[False]),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("set_dir", nargs="?", type=Path, default=EVAL_DIR / "tara_zh")
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--backends", default="folder,postgresql")
    parser.add_argument("--recall", default="lexical,hybrid")
    parser.add_argument("--pg-fsync", action="store_true", help="PostgreSQL with fsync on (its default)")
    parser.add_argument(
        "--ingest-embed-cache",
        type=Path,
        default=None,
        help="hybrid: a vector cache file for each run's corpus ingest (the servers embed questions)",
    )
    args = parser.parse_args(argv)
    print("$", *sys.argv, "  (load average", " ".join(f"{x:.2f}" for x in os.getloadavg()) + ")")
    rows = []
    with tempfile.TemporaryDirectory(prefix="trace-cost-") as tmp:
        for backend in args.backends.split(","):
            for recall in args.recall.split(","):
                numbers = measure(args.set_dir, args, backend, recall, Path(tmp))
                rows.append((backend, recall, numbers))
                print(f"  {backend} {recall}: {numbers}", file=sys.stderr)
    print(f"{'backend':<11}{'recall':<9}{'req/s traced':>13}{'untraced':>10}{'ratio':>8}"
          f"{'CPU ms/req traced':>19}{'untraced':>10}{'KB/run':>8}")  # fmt: skip
    for backend, recall, m in rows:
        print(
            f"{backend:<11}{recall:<9}{m['traced']:>13.1f}{m['untraced']:>10.1f}{m['ratio']:>7.2f}x"
            f"{m['cpu_traced']:>19.2f}{m['cpu_untraced']:>10.2f}{m['kb_per_run']:>8.1f}"
        )
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; target ratio >= {TARGET}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
