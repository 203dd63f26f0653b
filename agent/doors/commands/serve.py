"""``evloop serve``: the HTTP API (FastAPI on uvicorn) over one index folder."""

from __future__ import annotations

import argparse
import json
import math
import os
from dataclasses import asdict
from pathlib import Path

from evidence_loop.agent import logs
from evidence_loop.agent.access.keys import Keyring
from evidence_loop.agent.doors.api.app import create_app
from evidence_loop.agent.doors.api.limits import Limits
from evidence_loop.agent.doors.cli.common import (
    Subparsers,
    add_command,
    add_index_option,
    add_otel_options,
    resolve_location,
    shown,
    warn,
)
from evidence_loop.agent.doors.commands.listen import add_listen_options, listening
from evidence_loop.agent.doors.commands.session import (
    add_policy_option,
    policy_from_args,
    policy_line,
    warn_judge_gap,
)
from evidence_loop.agent.service import WHEN_TRACES_FAIL, Service
from evidence_loop.agent.settings import TRACES_OFF, ServeWorker
from evidence_loop.tools.errors import InputError
from evidence_loop.tools.store.schema import DB_NAME

# A typo such as --workers 40000 would otherwise fork processes until the machine gives out.
MAX_WORKERS = 64
# uvicorn kills a worker that does not answer its supervisor's ping within this many seconds (its
# default, 5, is shorter than a worker's imports on a busy machine: workers were killed and
# restarted until none came up). A worker answers from a thread once its imports are done.
WORKER_HEALTHCHECK_S = 60

DESCRIPTION = """\
Serve the HTTP API: POST /v1/ask, /v1/documents, /v1/traces/{run_id}, /healthz, /readyz, the
audit console at /audit, and the OpenAPI document at /openapi.json (there is no /docs page: it would
load Swagger UI from a CDN). With --keys, every request needs `Authorization: Bearer <key>` for a
key in KEYS.json (create one with `evloop keys add`); the server follows the file: keys added or
removed take effect within seconds, no restart.
Without --keys authentication is off: the server then listens on loopback only, whatever --host
says, and trusts each request with every scope and the groups it names.

Ingestion through the API runs while questions are served: a question reads the snapshot it
started with, and sees a new batch only once it is complete.

Requests must name this server in Host (127.0.0.1, localhost or [::1] and the port, the --host
address, or a name given with --allow-host), and a browser's Origin must be the server's own or
one given with --allow-origin: a web page in the user's browser cannot write or read through it."""

EPILOG = """\
examples:
  evloop serve                                   local use, no keys, http://127.0.0.1:8080
  evloop keys add chatbot --scopes ask --file keys.json
  evloop serve --keys keys.json --host 0.0.0.0 --port 8080 --workers 4 --allow-host api.example.com
  evloop serve --keys keys.json --policy-file policy.json   a policy from `evloop calibrate --out`"""


def register(subparsers: Subparsers) -> None:
    """Add the ``serve`` command."""
    parser = add_command(
        subparsers, "serve", summary="serve the HTTP API", description=DESCRIPTION, epilog=EPILOG
    )
    add_index_option(parser)
    add_otel_options(parser)
    add_listen_options(parser, port=8080)
    parser.add_argument(
        "--keys", type=Path, metavar="KEYS.json", default=None, help="API keys file (followed: no restart)"
    )
    parser.add_argument(
        "--traces", type=Path, metavar="DIR", default=None, help="trace folder (default: INDEX/traces)"
    )
    parser.add_argument("--workers", type=int, default=1, metavar="N", help="worker processes (default: 1)")
    defaults = Limits()
    parser.add_argument(
        "--timeout",
        type=float,
        default=defaults.timeout_s,
        metavar="S",
        help="seconds per question (default: %(default)s)",
    )
    parser.add_argument(
        "--max-question-chars",
        type=int,
        default=defaults.question_chars,
        metavar="N",
        help="longest question accepted, in characters; longer ones get a 422 (default: %(default)s)",
    )
    parser.add_argument(
        "--max-body-mb",
        type=float,
        default=defaults.body_bytes / 1e6,
        metavar="MB",
        help="largest request body, checked before parsing; larger ones get a 413 (default: %(default)s)",
    )
    parser.add_argument(
        "--max-batch",
        type=int,
        default=defaults.batch_documents,
        metavar="N",
        help="most documents in one ingest request; more get a 413 (default: %(default)s)",
    )
    parser.add_argument("--no-trace", action="store_true", help="write no traces (for measurements)")
    parser.add_argument(
        "--when-traces-fail",
        choices=WHEN_TRACES_FAIL,
        default="refuse",
        help="when a run's trace cannot be written (a full disk): refuse with 503 trace-store-unavailable "
        "and report not ready (default), or answer-untraced: answer, the outcome saying it was not traced",
    )
    add_policy_option(parser)
    parser.add_argument("--quiet", action="store_true", help="log warnings and errors only, no access log")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Check the settings, open the index, then serve until interrupted."""
    import uvicorn  # only the serving path pays for importing it

    index = resolve_location(args)
    limits = _limits(args)
    keys = Keyring.load(args.keys) if args.keys is not None else None
    if not 1 <= args.workers <= MAX_WORKERS:
        raise InputError(f"--workers must be from 1 to {MAX_WORKERS}, not {args.workers}")
    host, hosts = listening(args, keys)
    policy = policy_from_args(args)
    if isinstance(index, Path) and not (index / DB_NAME).is_file():
        warn(f"no index at {index} yet: created an empty one; add documents with POST /v1/documents")
    service = Service.open(
        index,
        create=True,
        policy=policy,
        traces=args.traces,
        tracing_on=not args.no_trace,
        question_chars=limits.question_chars,
        when_traces_fail=args.when_traces_fail,
    )
    if args.when_traces_fail == "answer-untraced" and not args.no_trace:
        warn("--when-traces-fail answer-untraced: runs whose trace cannot be written are answered untraced")
    warn_judge_gap(service, index)
    log_level = "warning" if args.quiet else "info"
    logs.configure(log_level)
    print(
        f"evloop: serving {shown(index)} on http://{host}:{args.port} ({_who(args.keys, keys)}); "
        f"{policy_line(policy)}",
        flush=True,
    )
    if args.workers == 1:
        service.settle()
        try:
            uvicorn.run(
                create_app(service, keys, limits, hosts), host=host, port=args.port, log_level=log_level
            )
        finally:
            service.close()
        return 0
    service.close()  # each worker process opens its own
    folder = str(args.traces.resolve()) if args.traces else ""
    worker = ServeWorker(
        index=str(index.resolve()) if isinstance(index, Path) else index,
        keys=str(args.keys.resolve()) if args.keys is not None else "",
        limits=json.dumps(asdict(limits)),
        traces=TRACES_OFF if args.no_trace else folder,
        hosts=hosts.to_json(),
        when_traces_fail=args.when_traces_fail,
        policy=json.dumps(policy.as_dict()),
        log_level=log_level,
    )
    os.environ.update(worker.environ())
    uvicorn.run(
        "evidence_loop.agent.doors.api.app:from_env",
        factory=True,
        host=host,
        port=args.port,
        workers=args.workers,
        log_level=log_level,
        timeout_worker_healthcheck=WORKER_HEALTHCHECK_S,
    )
    return 0


def _limits(args: argparse.Namespace) -> Limits:
    for flag, value in (("--timeout", args.timeout), ("--max-body-mb", args.max_body_mb)):
        if not math.isfinite(value):
            raise InputError(f"{flag} must be a finite number, not {value}")
    try:
        return Limits(
            question_chars=args.max_question_chars,
            body_bytes=int(args.max_body_mb * 1_000_000),
            batch_documents=args.max_batch,
            timeout_s=args.timeout,
        )
    except ValueError as exc:
        raise InputError(f"bad limit: {exc}") from None


def _who(path: Path | None, keys: Keyring | None) -> str:
    if keys is None:
        return "no --keys: authentication off, loopback only"
    return f"{len(keys.keys)} keys from {path}"
