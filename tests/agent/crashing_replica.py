"""A replica whose store kills its process when a write reaches STAGE: how test_replicas crashes a
server mid-ingest. It serves as `evloop serve --store URL --keys FILE` does with one worker, traces off.

    python -m tests.agent.crashing_replica STAGE --port N [--quiet] --store URL --keys FILE
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import uvicorn

from evidence_loop.agent.access.keys import Keyring
from evidence_loop.agent.doors.api import Limits, create_app
from evidence_loop.agent.service import Service
from evidence_loop.tools.store.postgres import PgStore
from tests.damage_support import kill_at


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("stage")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument("--store", required=True)
    parser.add_argument("--keys", type=Path, required=True)
    args = parser.parse_args(argv)
    service = Service(PgStore.open(args.store, checkpoint=kill_at(args.stage)))
    service.settle()
    app = create_app(service, Keyring.load(args.keys), Limits())
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main(sys.argv[1:])
