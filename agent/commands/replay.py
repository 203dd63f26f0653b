"""``evloop replay RUN_ID|FILE``: re-run a traced question and report the first step that differs."""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

from agent.commands.common import Subparsers, add_command, add_index_option, resolve_index
from agent.commands.trace import trace_store
from agent.replay import replay
from tools.errors import InputError
from tools.store import Store
from traces import Trace, read_trace

DESCRIPTION = """\
Re-run the controller from a trace: with the trace's policy, pinned to the corpus generation it read
(older document versions stay in the store), with recorded LLM replies standing in for the model (no
network). Prints `identical`, or the first divergent step with the field, the recorded value and the
new value. --current replays against today's corpus instead ("would it still say this?")."""

EPILOG = """\
examples:
  evloop replay 3f2a9c0d1e2b4a5f
  evloop replay 3f2a9c0d1e2b4a5f --current
  evloop replay --all"""


def register(subparsers: Subparsers) -> None:
    parser = add_command(
        subparsers, "replay", summary="replay traced runs", description=DESCRIPTION, epilog=EPILOG
    )
    parser.add_argument("target", nargs="?", metavar="RUN", help="run id or trace file")
    add_index_option(parser)
    parser.add_argument(
        "--traces", type=Path, metavar="DIR", default=None, help="trace folder (default INDEX/traces)"
    )
    parser.add_argument("--current", action="store_true", help="replay against the current corpus")
    parser.add_argument("--all", action="store_true", help="replay every stored run and print a summary")
    parser.set_defaults(run=run)


def _traces(args: argparse.Namespace) -> list[Trace]:
    if args.all == bool(args.target):
        raise InputError("give a run id or trace file, or --all")
    store = trace_store(args)
    if args.all:
        return [store.read(s.run_id) for s in store.list() if s.status == "complete"]
    path = Path(args.target)
    return [read_trace(path) if path.suffix == ".jsonl" and path.exists() else store.read(args.target)]


def run(args: argparse.Namespace) -> int:
    traces = _traces(args)
    differing = 0
    times: list[float] = []
    with Store.open(resolve_index(args.index)) as store:
        for trace in traces:
            report = replay(trace, store, current=args.current)
            times.append(report.seconds * 1000)
            differing += not report.identical
            if not args.all or not report.identical:
                print(report.describe())
    if args.all:
        p50 = statistics.median(times) if times else 0.0
        print(
            f"replayed {len(traces)} runs: {len(traces) - differing} identical, {differing} differ; "
            f"replay p50 {p50:.1f} ms"
        )
    return 1 if differing else 0
