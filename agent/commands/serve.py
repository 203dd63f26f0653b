"""``evloop serve``: the HTTP API (FastAPI on uvicorn) over one index folder."""

from __future__ import annotations

import argparse
import ipaddress
import json
import math
import os
from dataclasses import asdict
from pathlib import Path

from evidence_loop.agent.api.app import ENV_INDEX, ENV_KEYS, ENV_LIMITS, ENV_TRACES, TRACES_OFF, create_app
from evidence_loop.agent.api.auth import Keyring
from evidence_loop.agent.api.limits import Limits
from evidence_loop.agent.commands.common import (
    Subparsers,
    add_command,
    add_index_option,
    resolve_location,
    shown,
    warn,
)
from evidence_loop.agent.commands.session import warn_judge_gap
from evidence_loop.agent.service import Service
from evidence_loop.tools.errors import InputError
from evidence_loop.tools.schema import DB_NAME

LOOPBACK = "127.0.0.1"
MAX_PORT = 65535
# A typo such as --workers 40000 would otherwise fork processes until the machine gives out.
MAX_WORKERS = 64
# uvicorn kills a worker that does not answer its supervisor's ping within this many seconds (its
# default, 5, is shorter than a worker's imports on a busy machine: workers were killed and
# restarted until none came up). A worker answers from a thread once its imports are done.
WORKER_HEALTHCHECK_S = 60

DESCRIPTION = """\
Serve the HTTP API: POST /v1/ask, /v1/documents, /v1/traces/{run_id}, /healthz, /readyz, and the
OpenAPI document at /openapi.json (interactive at /docs). With --keys, every request needs
`Authorization: Bearer <key>` for a key in KEYS.json (create one with `evloop keys add`).
Without --keys authentication is off: the server then listens on loopback only, whatever --host
says, and trusts each request with every scope and the groups it names.

Ingestion through the API runs while questions are served: a question reads the snapshot it
started with, and sees a new batch only once it is complete."""

EPILOG = """\
examples:
  evloop serve                                   local use, no keys, http://127.0.0.1:8080
  evloop keys add chatbot --scopes ask --file keys.json
  evloop serve --keys keys.json --host 0.0.0.0 --port 8080 --workers 4"""


def register(subparsers: Subparsers) -> None:
    """Add the ``serve`` command."""
    parser = add_command(
        subparsers, "serve", summary="serve the HTTP API", description=DESCRIPTION, epilog=EPILOG
    )
    add_index_option(parser)
    parser.add_argument("--host", default=LOOPBACK, help=f"address to listen on (default: {LOOPBACK})")
    parser.add_argument("--port", type=int, default=8080, help="port to listen on (default: 8080)")
    parser.add_argument("--keys", type=Path, metavar="KEYS.json", default=None, help="API keys file")
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
    parser.add_argument("--quiet", action="store_true", help="log warnings and errors only, no access log")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Check the settings, open the index, then serve until interrupted."""
    import uvicorn  # only the serving path pays for importing it

    index = resolve_location(args)
    limits = _limits(args)
    keys = Keyring.load(args.keys) if args.keys is not None else None
    host = _host(args.host, keys)
    if not 1 <= args.workers <= MAX_WORKERS:
        raise InputError(f"--workers must be from 1 to {MAX_WORKERS}, not {args.workers}")
    if not 0 <= args.port <= MAX_PORT:
        raise InputError(f"--port must be from 0 to {MAX_PORT}, not {args.port}")
    if isinstance(index, Path) and not (index / DB_NAME).is_file():
        warn(f"no index at {index} yet: created an empty one; add documents with POST /v1/documents")
    service = Service.open(
        index,
        create=True,
        traces=args.traces,
        tracing_on=not args.no_trace,
        question_chars=limits.question_chars,
    )
    warn_judge_gap(service, index)
    log_level = "warning" if args.quiet else "info"
    print(
        f"evloop: serving {shown(index)} on http://{host}:{args.port} ({_who(args.keys, keys)})", flush=True
    )
    if args.workers == 1:
        service.settle()
        try:
            uvicorn.run(create_app(service, keys, limits), host=host, port=args.port, log_level=log_level)
        finally:
            service.close()
        return 0
    service.close()  # each worker process opens its own
    os.environ[ENV_INDEX] = str(index.resolve()) if isinstance(index, Path) else index
    os.environ[ENV_KEYS] = str(args.keys.resolve()) if args.keys is not None else ""
    folder = str(args.traces.resolve()) if args.traces else ""
    os.environ[ENV_TRACES] = TRACES_OFF if args.no_trace else folder
    os.environ[ENV_LIMITS] = json.dumps(asdict(limits))
    uvicorn.run(
        "evidence_loop.agent.api.app:from_env",
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


def _host(host: str, keys: Keyring | None) -> str:
    """Without keys, only loopback: an unauthenticated API must not be reachable from elsewhere."""
    if keys is not None or _is_loopback(host):
        return host
    warn(f"no --keys: authentication is off, so listening on {LOOPBACK} (loopback) only, not {host}")
    return LOOPBACK


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _who(path: Path | None, keys: Keyring | None) -> str:
    if keys is None:
        return "no --keys: authentication off, loopback only"
    return f"{len(keys.keys)} keys from {path}"
