"""`evloop serve` with a gate on its writes: how test_write_races holds one write open (inside its
transaction) while another key's write comes in through another worker process or replica.

    python -m tests.agent.gated_server --port N [--quiet | --workers N] --gate DIR
        (--index DIR | --store URL) --keys FILE

The real app and store, traces off, with two marks in the gate folder DIR:
- ``entered-<pid>-<n>`` when a request hands its documents to ``Service.ingest`` (the route's own
  work is done; the write's transaction is next);
- ``held-<pid>-<n>`` when a write reaches the store's stage "rows" (its transaction open, its first
  document written); it then waits there until the test creates ``DIR/open``.
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import uvicorn
from fastapi import FastAPI

from evidence_loop.agent.access.keys import Keyring
from evidence_loop.agent.doors.api import Limits, create_app
from evidence_loop.agent.service import Service
from evidence_loop.tools.store.folder import Checkpoint, IngestReport, Store
from evidence_loop.tools.store.pg import is_url
from evidence_loop.tools.types import DocumentInput

ENV_GATE, ENV_LOCATION, ENV_KEYS = "GATED_SERVER_GATE", "GATED_SERVER_LOCATION", "GATED_SERVER_KEYS"
# A bound, not a pause: a gate the test never opens lets the write through after this long.
HOLD_BOUND_S = 120.0
_marks = itertools.count()


def mark(gate: Path, kind: str) -> None:
    (gate / f"{kind}-{os.getpid()}-{next(_marks)}").touch()


def gate_at_rows(gate: Path) -> Checkpoint:
    """The store's checkpoint: at "rows", mark ``held`` and wait for ``gate/open``."""

    def checkpoint(stage: str) -> None:
        if stage != "rows":
            return
        mark(gate, "held")
        pause = threading.Event()
        for _ in range(int(HOLD_BOUND_S / 0.05)):
            if (gate / "open").exists():
                return
            pause.wait(0.05)

    return checkpoint


class MarkingService(Service):
    """The real service; it marks ``entered`` when an ingest reaches it."""

    gate: Path

    def ingest(self, docs: Iterable[DocumentInput], **options: Any) -> IngestReport:
        mark(self.gate, "entered")
        return super().ingest(docs, **options)


def app_from_env() -> FastAPI:
    """The app of one worker process, from the environment ``main`` sets."""
    gate, location = Path(os.environ[ENV_GATE]), os.environ[ENV_LOCATION]
    if is_url(location):
        from evidence_loop.tools.store.postgres import PgStore

        store: Store = PgStore.open(location, checkpoint=gate_at_rows(gate))
    else:
        store = Store.open(location, checkpoint=gate_at_rows(gate))
    service = MarkingService(store)
    service.gate = gate
    service.settle()
    return create_app(service, Keyring.load(Path(os.environ[ENV_KEYS])), Limits())


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--gate", type=Path, required=True)
    parser.add_argument("--index")
    parser.add_argument("--store")
    parser.add_argument("--keys", type=Path, required=True)
    args = parser.parse_args(argv)
    os.environ[ENV_GATE] = str(args.gate.resolve())
    os.environ[ENV_LOCATION] = args.store or str(Path(args.index).resolve())
    os.environ[ENV_KEYS] = str(args.keys.resolve())
    uvicorn.run(
        "tests.agent.gated_server:app_from_env",
        factory=True,
        host="127.0.0.1",
        port=args.port,
        workers=args.workers,
        log_level="warning" if args.quiet else "info",
        timeout_worker_healthcheck=60,
    )


if __name__ == "__main__":
    main(sys.argv[1:])
