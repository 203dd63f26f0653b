"""This tree's lexical loop and ingest against another checkout's, in one run (bench_hybrid.py --base).

    against(set_dir, base, ...)   the lexical loop of both trees, the same questions alternately, then
                                  each tree's ``bench_ingest.py --child`` run alternately

The loop of each tree runs in a worker, this file run as a script with that tree first on the path:

    PYTHONPATH=TREE .venv/bin/python benchmarks/compare_trees.py SET_DIR TREE

It ingests ``SET_DIR/corpus.jsonl`` into a temporary store without an embedder, freezes the heap as
the server does, prints one JSON line (``docs``, and ``agent``: where the package was imported
from, checked by the parent), then answers each JSON line on stdin (``{"question": ...,
"groups": [...]}``) with the milliseconds ``Controller(Policy()).ask`` took, timed in the worker so
that the pipe is not counted. It uses only names that this tree and the tree before the vectors
(f3ae445) both have, so one worker times both alike; a tree before the ``evidence_loop`` name
(no ``TREE/evidence_loop``) is imported by its bare package names.
"""

from __future__ import annotations

import importlib
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import Ask, Question, summaries, time_interleaved

ROOT = Path(__file__).resolve().parents[1]


class Worker:
    """This file running as a worker on one tree's code, asked one question at a time."""

    def __init__(self, tree: Path, set_dir: Path, commands: list[str]) -> None:
        command = [sys.executable, __file__, str(set_dir), str(tree)]
        commands.append(f"PYTHONPATH={tree} {shlex.join(command)}")
        self._process = subprocess.Popen(
            command, env=_env(tree), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert self._process.stdin is not None and self._process.stdout is not None
        self._in, self._out = self._process.stdin, self._process.stdout
        ready = json.loads(self._out.readline())
        if Path(ready["agent"]).resolve() != (tree / "agent").resolve():
            raise SystemExit(f"the worker for {tree} imported agent from {ready['agent']}")

    def ask(self, question: str, groups: list[str]) -> float:
        self._in.write(json.dumps({"question": question, "groups": groups}) + "\n")
        self._in.flush()
        return float(self._out.readline())

    def close(self) -> None:
        self._in.close()
        self._process.wait()


def _env(tree: Path) -> dict[str, str]:
    # the tree's packages come before the editable install of this one
    return {**os.environ, "PYTHONPATH": str(tree)}


def _bench_ingest(tree: Path, set_dir: Path, commands: list[str]) -> dict[str, float]:
    """One run of the tree's own ingest benchmark (its child: one set, one JSON line)."""
    script = str(tree / "benchmarks" / "bench_ingest.py")
    command = [sys.executable, script, "--child", str(set_dir), "--k", "10"]
    line = f"PYTHONPATH={tree} {shlex.join(command)}"
    if line not in commands:
        commands.append(line)
    done = subprocess.run(command, env=_env(tree), capture_output=True, text=True, check=True)
    result: dict[str, float] = json.loads(done.stdout)
    return result


def against(
    set_dir: Path,
    base: Path,
    questions: list[Question],
    rounds: tuple[int, int, int],
    commands: list[str],
) -> dict[str, float]:
    """``tree_{this,base}_p50`` and co. of the loop, ``ingest_*_s`` and ``query_*_p50`` of bench_ingest
    (medians over its runs); ``rounds`` is (warm-up questions, loop rounds, bench_ingest runs per tree)."""
    warmup, loop_rounds, ingest_runs = rounds
    trees = {"this": ROOT, "base": base.resolve()}
    workers: dict[str, Worker] = {}
    try:
        for name, tree in trees.items():
            workers[name] = Worker(tree, set_dir, commands)
        asks: dict[str, Ask] = {name: w.ask for name, w in workers.items()}
        time_interleaved(asks, questions[:warmup], 1)
        timed = summaries(time_interleaved(asks, questions, loop_rounds))
    finally:
        for worker in workers.values():
            worker.close()
    out = {f"tree_{key}": value for key, value in timed.items()}
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    for r in range(ingest_runs):
        for name in list(trees)[r % 2 :] + list(trees)[: r % 2]:
            runs[name].append(_bench_ingest(trees[name], set_dir, commands))
    for name, found in runs.items():
        out[f"ingest_{name}_s"] = statistics.median(m["ingest_s"] for m in found)
        out[f"query_{name}_p50"] = statistics.median(m["p50"] for m in found)
    out.update(base_questions=len(questions), base_ingest_runs=ingest_runs)
    return out


def _module(tree: Path, name: str, before_wings: str = "") -> object:
    """``agent.loop.controller`` of the tree's layout: under ``evidence_loop`` or, before it, bare; in a
    tree before the wings of policies/ and tools/ (no ``tools/store/``), ``before_wings``; in a tree
    before the sub-packages of agent/ (no ``agent/loop/``), the module by its old flat name."""
    prefix = "evidence_loop." if (tree / "evidence_loop").is_dir() else ""
    if before_wings and not (tree / "tools" / "store").is_dir():
        name = before_wings
    if name.startswith("agent.loop.") and not (tree / "agent" / "loop").is_dir():
        name = "agent." + name.removeprefix("agent.loop.")
    return importlib.import_module(prefix + name)


def serve(set_dir: Path, tree: Path) -> int:
    """The worker: a lexical store of the set, then one timed question per line of stdin."""
    Controller = _module(tree, "agent.loop.controller").Controller  # type: ignore[attr-defined]
    freeze_heap = _module(tree, "agent.loop.runtime").freeze_heap  # type: ignore[attr-defined]
    Policy = _module(tree, "policies.config").Policy  # type: ignore[attr-defined]
    collect = _module(tree, "tools.parse.sources", before_wings="tools.sources").collect  # type: ignore[attr-defined]
    Store = _module(tree, "tools.store.folder", before_wings="tools.store").Store  # type: ignore[attr-defined]
    docs = collect([set_dir / "corpus.jsonl"]).documents
    with tempfile.TemporaryDirectory(prefix="compare-trees-") as tmp:
        store = Store.open(Path(tmp) / "index", create=True)
        try:
            store.ingest(docs, max_bytes=1 << 30)
            snapshot = store.snapshot()
            controller = Controller(Policy())
            freeze_heap()
            ready = {
                "docs": len(snapshot.current_versions()),
                "agent": str(Path(sys.modules[Controller.__module__].__file__ or "").parent),
            }
            print(json.dumps(ready), flush=True)
            for line in sys.stdin:
                request = json.loads(line)
                started = time.perf_counter()
                controller.ask(snapshot, request["question"], request["groups"])
                print((time.perf_counter() - started) * 1000, flush=True)
        finally:
            store.close()
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1].startswith("-"):
        print(__doc__.strip(), file=sys.stderr)
        sys.exit(2)
    sys.exit(serve(Path(sys.argv[1]), Path(sys.argv[2])))
