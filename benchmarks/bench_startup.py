"""What `evloop` spends before it does anything: whole processes timed from outside, and where the
import time goes (``python -X importtime``).

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_startup.py [--runs 7] [--base /path/to/older/tree]
        [--top 12]

Commands timed (each a fresh interpreter, this tree first on PYTHONPATH): ``evloop --help``,
``evloop docs`` over the bundled sample help centre (ingested lexically once into a temporary
folder), ``evloop ask`` of one question there (lexical, untraced), and ``import evidence_loop``.
With ``--base`` the same commands of another tree (e.g. a checkout of an older commit) run in turn
with this one's, A B A B ..., and the table gives each side's median and the ratio per pair. Wall
time follows the machine's load; CPU time (user + system of the child, from ``os.wait4``) much
less: on a shared machine read CPU. Then, for ``--help`` and ``docs`` of this tree, the modules
whose own import took longest (``-X importtime``, cumulative microseconds, the top ``--top``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TREE = HERE.parent
QUESTION = "How long is the LM-S10 warranty?"


def commands(index: Path) -> dict[str, list[str]]:
    cli = ["-m", "evidence_loop.agent.doors.cli.app"]
    return {
        "evloop --help": [*cli, "--help"],
        "evloop docs": [*cli, "docs", "--index", str(index)],
        "evloop ask (lexical, untraced)": [*cli, "ask", QUESTION, "--index", str(index), "--no-trace"],
        "import evidence_loop": ["-c", "import evidence_loop"],
    }


def env_for(tree: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(tree), "OMP_NUM_THREADS": "1", "EVLOOP_EMBEDDER": "none"}


def timed(tree: Path, args: list[str]) -> tuple[float, float]:
    """(wall s, CPU s) of one run of ``python ARGS`` with ``tree`` on the path."""
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, *args],
        cwd=tree,
        env=env_for(tree),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed in {tree}: {process.stderr.read().decode()[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime


def ingest_sample(tree: Path, index: Path) -> None:
    code = (
        "from evidence_loop.agent.doors.cli.sample import load_sample_kb\n"
        "from evidence_loop.agent.service import Service\n"
        f"with Service.open({str(index)!r}, create=True, embedder=None, tracing_on=False) as s:\n"
        "    s.ingest(load_sample_kb())\n"
    )
    subprocess.run([sys.executable, "-c", code], cwd=tree, env=env_for(tree), check=True)


def import_profile(args: list[str], top: int) -> list[tuple[int, str]]:
    """The modules with the longest cumulative import time (microseconds) of one run."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", *args],
        cwd=TREE,
        env=env_for(TREE),
        capture_output=True,
        text=True,
        check=True,
    )
    rows = []
    for line in done.stderr.splitlines():
        if line.startswith("import time:") and "|" in line and "cumulative" not in line:
            _, cumulative, name = (part.strip() for part in line.removeprefix("import time:").split("|"))
            rows.append((int(cumulative), name))
    return sorted(rows, reverse=True)[:top]


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--base", type=Path, default=None, help="another tree to time in turn (B)")
    parser.add_argument("--top", type=int, default=12)
    args = parser.parse_args()
    trees = {"A": TREE, **({"B": args.base.resolve()} if args.base else {})}
    with tempfile.TemporaryDirectory() as work:
        indexes = {side: Path(work) / f"ix-{side}" for side in trees}
        for side, tree in trees.items():
            ingest_sample(tree, indexes[side])
        print(f"bench_startup: {' '.join(sys.argv[1:])}; load {os.getloadavg()[0]:.1f}; A = {TREE}")
        print(f"{'command':32} {'side':>4} {'wall s':>8} {'CPU s':>8} {'CPU A/B':>8}")
        for name in commands(indexes["A"]):
            samples: dict[str, list[tuple[float, float]]] = {side: [] for side in trees}
            for _ in range(args.runs + 1):  # the first round warms the caches, not counted
                for side, tree in trees.items():
                    samples[side].append(timed(tree, commands(indexes[side])[name]))
            for side in trees:
                kept = samples[side][1:]
                ratio = ""
                if side == "B":
                    pairs = zip(samples["A"][1:], kept, strict=True)
                    ratio = f"{statistics.median(a[1] / b[1] for a, b in pairs):.3f}"
                wall = statistics.median(s[0] for s in kept)
                cpu = statistics.median(s[1] for s in kept)
                print(f"{name:32} {side:>4} {wall:8.3f} {cpu:8.3f} {ratio:>8}")
        print(f"load at the end {os.getloadavg()[0]:.1f}")
        for name in ("evloop --help", "evloop docs"):
            print(f"\n-X importtime, {name} (A): cumulative ms, the top {args.top}")
            for micros, module in import_profile(commands(indexes["A"])[name], args.top):
                print(f"  {micros / 1000:9.1f}  {module}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
