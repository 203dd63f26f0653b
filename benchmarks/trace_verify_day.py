"""``evloop trace verify --all`` over one UTC day of many runs: this tree against another checkout's.

    .venv/bin/python benchmarks/trace_verify_day.py [SET_DIR] --base TREE [--runs 10000] [--docs 200]
                                                    [--repeats 3] [--days DIR] [--json OUT.json]

Each tree writes its own day of ``--runs`` runs, in its own layout (a file per run before the day
journal, frames of a journal after it): a child process, this file run with ``PYTHONPATH=TREE``,
ingests the first ``--docs`` documents of SET_DIR/corpus.jsonl into an index (lexical, no embedder)
and asks the set's questions in turn through ``Service(store, traces=TraceStore(...))``, the clock
fixed on one day and the trace syncs skipped (durability is not what is measured; the records are
those a server writes). Then ``evloop trace verify --all --index INDEX --traces TRACES`` of each
tree is timed on its own day, the trees alternately, ``--repeats`` times each, and so is this
tree on the base's day (the older layout read by this code: what the layout gains apart from the
code), in turned-round order every other time; the table gives the median wall time, the child's
CPU time (user + system), the trace bytes on disk, and the verdict line. The runs' ids differ
between the trees (random), their content does not. ``--days DIR`` keeps the days written (and
reuses those already there).
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
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EVAL_DIR = Path(os.environ.get("EVLOOP_EVAL_DIR") or ROOT.parent / "shared" / "eval")
DAY = datetime(2026, 11, 30, 8, 0, tzinfo=UTC)


def make_day(folder: Path, set_dir: Path, runs: int, docs: int) -> None:
    """The child: an index of ``docs`` documents and ``runs`` traced runs on one day, under ``folder``."""
    from evidence_loop.agent.service import Service
    from evidence_loop.traces import TraceStore

    try:
        from evidence_loop.agent.loop.runtime import Deps
        from evidence_loop.agent.tuning.evaluate import read_questions
    except ModuleNotFoundError:  # a tree from before the sub-packages of agent/ (issue 36)
        from evidence_loop.agent.evaluate import read_questions  # type: ignore[no-redef]
        from evidence_loop.agent.runtime import Deps  # type: ignore[no-redef]

    try:
        from evidence_loop.tools.parse.sources import read_corpus_jsonl
        from evidence_loop.tools.store.folder import Store
    except ModuleNotFoundError:  # a tree from before the wings (issue 26)
        from evidence_loop.tools.sources import read_corpus_jsonl  # type: ignore[no-redef]

        from evidence_loop.tools.store import Store  # type: ignore[no-redef,attr-defined]

    store = Store.open(folder / "index", create=True)
    store.ingest(list(read_corpus_jsonl(set_dir / "corpus.jsonl"))[:docs])
    traces = TraceStore(folder / "traces", fsync=lambda _fd: None)
    service = Service(store, traces=traces, deps=Deps(now=lambda: DAY))
    asked = [str(q["question"]) for q in read_questions(set_dir / "questions.jsonl")]
    for n in range(runs):
        service.ask(asked[n % len(asked)])
    traces.close()
    store.close()


def _env(tree: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(tree), "OMP_NUM_THREADS": "1", "EVLOOP_EMBEDDER": "none"}


def verify_all(tree: Path, folder: Path, commands: list[str]) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds, the verdict line) of one ``trace verify --all`` of ``tree``."""
    cli = (
        "evidence_loop.agent.doors.cli.app"
        if (tree / "agent" / "doors").is_dir()
        else "evidence_loop.agent.cli"
    )
    command = [sys.executable, "-m", cli, "trace", "verify", "--all"]
    command += ["--index", str(folder / "index"), "--traces", str(folder / "traces")]
    line = f"PYTHONPATH={tree} {shlex.join(command)}"
    if line not in commands:
        commands.append(line)
    with tempfile.TemporaryFile("w+") as out:
        began = time.perf_counter()
        # from the tree itself: ``-m`` puts the working folder first on the path, before PYTHONPATH
        child = subprocess.Popen(command, env=_env(tree), cwd=tree, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(child.pid, 0)  # the child's own CPU, as it is reaped
        wall = time.perf_counter() - began
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        lines = out.read().strip().splitlines() or [""]
    cpu = usage.ru_utime + usage.ru_stime
    verdict = lines[-1] if child.returncode == 0 else " / ".join(lines[-2:])
    return wall, cpu, verdict


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("set_dir", nargs="?", type=Path, default=EVAL_DIR / "tara_zh")
    parser.add_argument("--base", type=Path, help="the other checkout (e.g. a worktree of main)")
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--docs", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--days", type=Path, default=None, help="keep (and reuse) the days here")
    parser.add_argument("--make", type=Path, help=argparse.SUPPRESS)  # the child
    args = parser.parse_args(argv)
    if args.make is not None:
        make_day(args.make, args.set_dir, args.runs, args.docs)
        return 0
    if args.base is None:
        parser.error("--base TREE is needed")
    trees = {"base": args.base.resolve(), "this": ROOT}
    commands: list[str] = []
    with tempfile.TemporaryDirectory(prefix="verify-day-") as tmp:
        days = args.days or Path(tmp)
        folders = {name: days / name for name in trees}
        for name, tree in trees.items():
            if (folders[name] / "traces").is_dir():
                continue
            make = [sys.executable, __file__, str(args.set_dir), "--make", str(folders[name])]
            make += ["--runs", str(args.runs), "--docs", str(args.docs)]
            commands.append(f"PYTHONPATH={tree} {shlex.join(make)}")
            began = time.perf_counter()
            subprocess.run(make, env=_env(tree), check=True)
            print(f"{name}: {args.runs} runs written in {time.perf_counter() - began:.0f} s", file=sys.stderr)
        load = [os.getloadavg()[0]]
        runs = {"base": (trees["base"], folders["base"]), "this": (ROOT, folders["this"])}
        runs["this on base's day"] = (ROOT, folders["base"])
        times: dict[str, list[tuple[float, float, str]]] = {name: [] for name in runs}
        for repeat in range(args.repeats):  # the order turned round every other time
            for name, (tree, folder) in list(runs.items())[:: -1 if repeat % 2 else 1]:
                times[name].append(verify_all(tree, folder, commands))
        load.append(os.getloadavg()[0])
        rows = {
            name: {
                "tree": str(runs[name][0]),
                "wall_s": round(statistics.median(t[0] for t in timed), 2),
                "cpu_s": round(statistics.median(t[1] for t in timed), 2),
                "all_wall_s": [round(t[0], 2) for t in timed],
                "trace_bytes": sum(
                    p.stat().st_size for p in (runs[name][1] / "traces").rglob("*") if p.is_file()
                ),
                "files": sum(1 for p in (runs[name][1] / "traces").rglob("*") if p.is_file()),
                "verdict": timed[-1][2],
            }
            for name, timed in times.items()
        }
    for name, row in rows.items():
        print(f"{name:<18} " + "  ".join(f"{key}={value}" for key, value in row.items()))
    print(f"load average (1 min) before, after the timings: {load[0]:.2f}, {load[1]:.2f}")
    print("commands:", *commands, sep="\n  ")
    if args.json is not None:
        args.json.write_text(json.dumps({"rows": rows, "load": load, "commands": commands}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
