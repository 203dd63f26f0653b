"""``evloop replay RUN_ID|FILE``: re-run a traced question and report the first step that differs."""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

from evidence_loop.agent.doors.cli.common import (
    Subparsers,
    add_command,
    add_index_option,
    configured_embedder,
    open_location,
)
from evidence_loop.agent.doors.commands.trace import trace_store
from evidence_loop.agent.loop.replay import ReplayReport, replay
from evidence_loop.tools.errors import CitedVersionReplacedError, InputError, TraceError
from evidence_loop.tools.models.embedding import Embedder
from evidence_loop.tools.store.folder import Store
from evidence_loop.traces import TraceStore

DESCRIPTION = """\
Re-run the controller from a trace: with the trace's policy, pinned to the corpus generation it read
(older document versions stay in the store), with recorded LLM replies standing in for the model (no
network). Prints `identical`, or the first divergent step with the field, the recorded value and the
new value. --current replays against today's corpus instead ("would it still say this?"). A trace that
does not verify (a changed record, or a file cut short of the end its run recorded) is not replayed:
it is reported as tampered at its first bad event, and the exit code is 1."""

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


def _targets(args: argparse.Namespace, traces: TraceStore) -> list[str | Path]:
    if args.all == bool(args.target):
        raise InputError("give a run id or trace file, or --all")
    if args.all:
        return [s.run_id for s in traces.list() if s.status == "complete"]
    path = Path(args.target)
    return [path if path.suffix == ".jsonl" and path.exists() else args.target]


def _replay_one(
    target: str | Path, traces: TraceStore, store: Store, current: bool, embedder: Embedder | None
) -> ReplayReport:
    """Verify the trace (against its store's record of how the run ended), then re-run it."""
    trace = traces.read(target)
    return replay(trace, store, current=current, verdict=traces.check(trace), embedder=embedder)


def run(args: argparse.Namespace) -> int:
    with trace_store(args) as traces:
        return _replay_all(args, traces)


def _replay_all(args: argparse.Namespace, traces: TraceStore) -> int:
    targets = _targets(args, traces)
    differing = refused = replaced = 0
    times: list[float] = []
    embedder = configured_embedder()  # used only when a run must be embedded anew (another embedder)
    with open_location(args) as store:
        for target in targets:
            try:
                report = _replay_one(target, traces, store, args.current, embedder)
            except CitedVersionReplacedError as exc:  # no tampering: a later write replaced its text
                if not args.all:
                    raise
                replaced += 1
                print(" ".join(str(exc).split()))
                continue
            except TraceError as exc:  # tampered or unreadable: one line each under --all
                if not args.all:
                    raise
                refused += 1
                print(" ".join(str(exc).split()))
                continue
            times.append(report.seconds * 1000)
            differing += not report.identical
            if not args.all or not report.identical:
                print(report.describe())
    if args.all:
        p50 = statistics.median(times) if times else 0.0
        not_replayed = f", {refused} tampered or unreadable (not replayed)" if refused else ""
        if replaced:
            not_replayed += f", {replaced} cite a version replaced since (not replayed)"
        print(
            f"replayed {len(times)} runs: {len(times) - differing} identical, {differing} differ"
            f"{not_replayed}; replay p50 {p50:.1f} ms"
        )
    return 1 if differing or refused else 0
