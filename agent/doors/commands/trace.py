"""``evloop trace list|show|verify|export|import|prune``: read the audit trail."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime
from pathlib import Path

from evidence_loop.agent.doors.cli.common import (
    Subparsers,
    add_command,
    add_index_option,
    resolve_index,
    resolve_location,
)
from evidence_loop.agent.loop import tracing
from evidence_loop.agent.service import TRACES_SUBDIR
from evidence_loop.tools.errors import EvidenceLoopError, InputError, TraceError, UnwrittenTraceError
from evidence_loop.tools.inputs import JsonInputError, parse_json
from evidence_loop.tools.store.location import open_store
from evidence_loop.traces import (
    HEADER_SEQ,
    Trace,
    TraceStore,
    VerifyResult,
    prune,
    read_trace,
    render_list,
    render_timeline,
    verify,
)
from evidence_loop.traces.records.blobs import FAILED_VERIFICATION, carried, read_export
from evidence_loop.traces.stores.pg_store import PgTraceStore
from evidence_loop.traces.verification.chain_verify import CHAIN
from evidence_loop.traces.verification.citations import TextSource, resolve, with_citations

DESCRIPTION = """\
Read the traces that every run leaves: list runs, show one as a readable timeline (what was
recalled, how each window slid and why, what was missing, what the LLM was asked and answered,
the decision), verify hash chains (a changed byte is reported at its event), export one as JSON,
and prune: remove whole UTC days of traces older than a date (retention).

A trace cites the stored text of what it recalled and decided (by offsets and sha256) rather than
copying it: show and export read that text from the store (--index or --store), and say which
version's text the store no longer holds; verify checks each cited text's sha256 when it can.

A run names its policy, LLM settings, embedder and reranker by hash, each stored once per store;
verify checks they are there and unchanged, and an export carries them: an export made with
--as-written verifies and shows anywhere (give its .json file), and import stores it elsewhere.

show and export verify the trace first, as verify does: show prints the verdict above the timeline,
and a trace that fails under a warning, then exits 1; export refuses a trace that fails unless
--force, which marks the export (failed_verification in its header)."""

EPILOG = """\
examples:
  evloop trace list --since 2026-11-01 --status insufficient_evidence
  evloop trace show 3f2a9c0d1e2b4a5f
  evloop trace verify --all
  evloop trace export 3f2a9c0d1e2b4a5f > run.json
  evloop trace export 3f2a9c0d1e2b4a5f --as-written > run.json && evloop trace verify run.json
  evloop trace import run.json --store postgresql://...
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
        ("import", "a run exported with --as-written, with the documents it carries"),
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
            sub.add_argument("target", nargs="?", metavar="RUN", help="run id, trace file or export (.json)")
            sub.add_argument("--all", action="store_true", help="verify every stored run")
        elif name == "import":
            sub.add_argument(
                "target", type=Path, metavar="FILE", help="an export (trace export --as-written)"
            )
        else:
            sub.add_argument("target", metavar="RUN", help="run id, trace file or export (.json)")
        if name == "export":
            sub.add_argument(
                "--as-written", action="store_true", help="the records as written, cited text not read in"
            )
            sub.add_argument(
                "--force",
                action="store_true",
                help="export a trace that fails verification (refused without it); its header is marked",
            )
        sub.set_defaults(run=ACTIONS[name])


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


def _read(args: argparse.Namespace, run: str) -> tuple[Trace, VerifyResult]:
    """The trace and its chain's verdict: an export's own, a file's against the store that holds it
    (or alone), a stored run's against the end its store recorded."""
    path = Path(run)
    if path.suffix == ".json" and path.exists():
        trace = exported(path)
        return trace, verify(trace)
    if path.suffix == ".jsonl" and path.exists():
        try:
            with trace_store(args) as store:  # the documents its header names, if a store is there
                trace = store.read(path)
                return trace, store.check(trace)
        except EvidenceLoopError:
            trace = read_trace(path)
            return trace, verify(trace)
    with trace_store(args) as store:
        trace = store.read(run)
        return trace, store.check(trace)


def exported(path: Path) -> Trace:
    """The trace of an export file (``trace export --as-written``), with the documents it carries;
    ``InputError`` for a file that is not one (not UTF-8 or JSON, too deep, records that are not a
    trace's)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise TraceError(f"{path}: not an export of a trace ({exc})") from exc
    try:  # not UTF-8, not JSON, nested too deeply, a lone surrogate: not a trace, the input's fault
        records = parse_json(data)
    except JsonInputError as exc:
        raise InputError(f"{path}: not an export of a trace ({exc})") from None
    if not isinstance(records, list):
        raise InputError(f"{path}: not an export of a trace (an export is a JSON list of trace records)")
    try:
        return read_export(records)
    except TraceError as exc:
        raise InputError(f"{path}: not an export of a trace ({exc})") from None


@contextmanager
def stored_texts(args: argparse.Namespace) -> Iterator[TextSource | None]:
    """The texts of the store the command names (``--index``/``--store``), for the spans a trace
    cites; None when there is no store to open there (the spans then say so)."""
    try:
        store = open_store(resolve_location(args))
    except EvidenceLoopError:
        yield None
        return
    try:
        yield tracing.stored_texts(store)
    finally:
        store.close()


def _checked(args: argparse.Namespace, *, resolved: bool = True) -> tuple[Trace, VerifyResult]:
    """The trace ``show`` and ``export`` print, verified first as ``trace verify`` does (the chain,
    the end its run recorded, the cited texts); with ``resolved`` its cited text read in."""
    trace, verdict = _read(args, args.target)
    with stored_texts(args) as texts:
        verdict = with_citations(verdict, trace, texts)
        return (resolve(trace, texts) if resolved else trace), verdict


def _show(args: argparse.Namespace) -> int:
    """The timeline under its verdict; a trace that fails verification is shown under a warning,
    and the command ends with the failure (exit 1)."""
    trace, verdict = _checked(args)
    print(
        f"verify: ok - {verdict.reason}"
        if verdict.ok
        else f"WARNING: this trace FAILS verification - {verdict.reason}; what follows is not the record"
    )
    print(render_timeline(trace))
    if not verdict.ok:
        raise TraceError(f"run {args.target}: fails verification: {verdict.reason}")
    return 0


def _export(args: argparse.Namespace) -> int:
    """The records; the events with the text they cite read in, unless ``--as-written``. A trace that
    fails verification is refused; ``--force`` exports it with its header marked."""
    trace, verdict = _checked(args, resolved=not args.as_written)
    if not verdict.ok and not args.force:
        raise TraceError(
            f"run {args.target}: fails verification: {verdict.reason}; not exported "
            "(--force exports it, its header marked failed_verification)"
        )
    if args.as_written:
        records = list(trace.records)
    else:
        events = [event.model_dump(mode="json") for event in trace.events]
        records = [trace.records[0], *events, *trace.records[1 + len(events) :]]
    records = carried(records, trace.documents)  # the documents it names travel with it
    if not verdict.ok:
        records[0][FAILED_VERIFICATION] = verdict.reason
    print(json.dumps(records, ensure_ascii=False, indent=1))
    return 0


def _import(args: argparse.Namespace) -> int:
    """Store an exported run as it was written: its chain must verify and end where it ended."""
    trace = exported(args.target)
    verdict = verify(trace)
    if not verdict.ok:
        raise TraceError(f"{args.target}: {verdict.reason}; not imported")
    with trace_store(args) as store:
        final = tracing.import_trace(store, trace)
    print(f"{trace.header.run_id}: imported ({final})")
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
    with trace_store(args) as store, stored_texts(args) as texts:
        return _verify_rows(args, store, texts)


def _verify_rows(args: argparse.Namespace, store: TraceStore, texts: TextSource | None) -> int:
    rows = (
        store.verify_all(texts) if args.all else iter([(args.target, _verify_one(store, args.target, texts))])
    )
    total = bad = unwritten = 0
    for run, result in rows:
        total += 1
        bad += not result.ok
        unwritten += not result.written
        if not (args.all and result.ok and result.written and not result.replaced):
            print(f"{run}: {_verdict(result)} - {result.reason}")
    breaks = 0
    if args.all:
        never = f" ({unwritten} of them never written: no failure)" if unwritten else ""
        print(f"{total - bad} of {total} traces verify{never}")
        for name, result in store.verify_chain():  # no run removed whole: the breaks, then a summary
            breaks += not result.ok and name != CHAIN
            print(f"{name}: FAILED - {result.reason}" if name != CHAIN else result.reason)
    if bad or breaks:
        chain = f"; the run chain breaks in {breaks} place" + "s" * (breaks != 1) if breaks else ""
        raise TraceError(f"{bad} of {total} traces failed verification{chain}")
    return 0


def _verdict(result: VerifyResult) -> str:
    if not result.written:
        return "not written"
    return "ok" if result.ok else "FAILED"


def _verify_one(store: TraceStore, run: str, texts: TextSource | None) -> VerifyResult:
    """A run id or a trace file; a file whose header cannot be read is a failed verdict, not a crash
    (one with no header at all is a run never recorded, unless it is recorded as finished)."""
    path = Path(run)
    if path.suffix == ".json" and path.exists():
        try:
            trace = exported(path)
        except (InputError, TraceError) as exc:  # not a trace at all: a failed verdict, as for a file
            return VerifyResult(ok=False, complete=False, first_bad_seq=HEADER_SEQ, reason=str(exc))
        return with_citations(verify(trace), trace, texts)
    try:
        trace = store.read(path) if path.suffix == ".jsonl" and path.exists() else store.read(run)
    except UnwrittenTraceError as exc:
        return store.unwritten(path.name.removesuffix(".jsonl"), str(exc))
    except TraceError as exc:
        return VerifyResult(ok=False, complete=False, first_bad_seq=HEADER_SEQ, reason=str(exc))
    return with_citations(store.check(trace), trace, texts)


ACTIONS: dict[str, Callable[[argparse.Namespace], int]] = {
    "list": _list,
    "show": _show,
    "verify": _verify,
    "export": _export,
    "import": _import,
    "prune": _prune,
}
"""Each action of ``evloop trace`` and the function that runs it."""
