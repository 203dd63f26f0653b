"""``evloop trace list|show|verify|export``: read the audit trail."""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime
from pathlib import Path

from evidence_loop.agent.commands.common import (
    Subparsers,
    add_command,
    add_index_option,
    resolve_index,
    resolve_location,
)
from evidence_loop.agent.service import TRACES_SUBDIR
from evidence_loop.tools.errors import InputError, TraceError
from evidence_loop.traces import (
    HEADER_SEQ,
    TraceStore,
    VerifyResult,
    prune,
    read_trace,
    render_list,
    render_timeline,
)
from evidence_loop.traces.pg_store import PgTraceStore

DESCRIPTION = """\
Read the traces that every run leaves: list runs, show one as a readable timeline (what was
recalled, how each window slid and why, what was missing, what the LLM was asked and answered,
the decision), verify hash chains (a changed byte is reported at its event), export one as JSON,
and prune: remove whole UTC days of traces older than a date (retention)."""

EPILOG = """\
examples:
  evloop trace list --since 2026-11-01 --status insufficient_evidence
  evloop trace show 3f2a9c0d1e2b4a5f
  evloop trace verify --all
  evloop trace export 3f2a9c0d1e2b4a5f > run.json
  evloop trace prune --before 2026-09-01 --dry-run"""


def register(subparsers: Subparsers) -> None:
    parser = add_command(
        subparsers,
        "trace",
        summary="list, show, verify, export traces",
        description=DESCRIPTION,
        epilog=EPILOG,
    )
    actions = parser.add_subparsers(title="actions", metavar="ACTION", required=True)
    for name, helptext in (
        ("list", "list runs"),
        ("show", "a run's timeline"),
        ("verify", "check hash chains"),
        ("export", "a run as JSON"),
        ("prune", "remove whole days of traces before a date"),
    ):
        sub = actions.add_parser(name, help=helptext, description=helptext)
        add_index_option(sub)
        sub.add_argument(
            "--traces", type=Path, metavar="DIR", default=None, help="trace folder (default INDEX/traces)"
        )
        if name == "list":
            sub.add_argument("--since", help="only runs at or after this ISO date/time (UTC)")
            sub.add_argument(
                "--status", help="answered, insufficient_evidence, conflicting_evidence, incomplete..."
            )
        elif name == "prune":
            sub.add_argument(
                "--before",
                required=True,
                metavar="DATE",
                help="remove the days before this UTC date (YYYY-MM-DD)",
            )
            sub.add_argument("--dry-run", action="store_true", help="only count what would be removed")
        elif name == "verify":
            sub.add_argument("target", nargs="?", metavar="RUN", help="run id or trace file")
            sub.add_argument("--all", action="store_true", help="verify every stored run")
        else:
            sub.add_argument("target", metavar="RUN", help="run id or trace file")
        sub.set_defaults(run=globals()[f"_{name}"])


@contextmanager
def trace_store(args: argparse.Namespace) -> Iterator[TraceStore]:
    """``--traces DIR``, else those beside the store: ``INDEX/traces``, or a PostgreSQL store's tables."""
    location = resolve_location(args) if args.traces is None else None
    if isinstance(location, str):
        store: TraceStore = PgTraceStore(location)
    else:
        store = TraceStore(args.traces or (location or resolve_index(args.index)) / TRACES_SUBDIR)
    try:
        yield store
    finally:
        store.close()


def _since(text: str | None) -> datetime | None:
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise InputError(
            f"--since {text!r} is not an ISO date or time (e.g. 2026-11-01 or 2026-11-01T08:00)"
        ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _list(args: argparse.Namespace) -> int:
    with trace_store(args) as store:
        print(render_list(store.list(since=_since(args.since), status=args.status)))
    return 0


def _read(args: argparse.Namespace, run: str) -> object:
    path = Path(run)
    if path.suffix == ".jsonl" and path.exists():
        return read_trace(path)
    with trace_store(args) as store:
        return store.read(run)


def _show(args: argparse.Namespace) -> int:
    print(render_timeline(_read(args, args.target)))  # type: ignore[arg-type]
    return 0


def _export(args: argparse.Namespace) -> int:
    trace = _read(args, args.target)
    print(json.dumps(list(trace.records), ensure_ascii=False, indent=1))  # type: ignore[attr-defined]
    return 0


def _prune(args: argparse.Namespace) -> int:
    try:
        before = date.fromisoformat(args.before)
    except ValueError:
        raise InputError(f"--before {args.before!r} is not a date (YYYY-MM-DD)") from None
    with trace_store(args) as store:
        if isinstance(store, PgTraceStore):
            report = store.prune(before, dry_run=args.dry_run)
        else:
            report = prune(store, before, dry_run=args.dry_run)
    verb = "would remove" if report.dry_run else "removed"
    print(
        f"{verb} {report.runs} runs in {report.days} days before {before.isoformat()} "
        f"({report.bytes / 1_000_000:.1f} MB); {report.kept_days} days kept"
    )
    return 0


def _verify(args: argparse.Namespace) -> int:
    """One line per trace (with --all: per failing trace), then the count; non-zero if any failed."""
    if args.all == bool(args.target):
        raise InputError("give a run id or --all")
    with trace_store(args) as store:
        return _verify_rows(args, store)


def _verify_rows(args: argparse.Namespace, store: TraceStore) -> int:
    rows = store.verify_all() if args.all else iter([(args.target, _verify_one(store, args.target))])
    total = bad = 0
    for run, result in rows:
        total += 1
        bad += not result.ok
        if not (args.all and result.ok):
            print(f"{run}: {'ok' if result.ok else 'FAILED'} - {result.reason}")
    if args.all:
        print(f"{total - bad} of {total} traces verify")
    if bad:
        raise TraceError(f"{bad} of {total} traces failed verification")
    return 0


def _verify_one(store: TraceStore, run: str) -> VerifyResult:
    """A run id or a trace file; a file whose header cannot be read is a failed verdict, not a crash."""
    path = Path(run)
    try:
        trace = read_trace(path) if path.suffix == ".jsonl" and path.exists() else store.read(run)
    except TraceError as exc:
        return VerifyResult(ok=False, complete=False, first_bad_seq=HEADER_SEQ, reason=str(exc))
    return store.check(trace)
