"""``evloop migrate``: create or upgrade the schema of a PostgreSQL store."""

from __future__ import annotations

import argparse

from evidence_loop.agent import settings
from evidence_loop.agent.doors.cli.common import STORE_ENV, Subparsers, add_command, shown
from evidence_loop.tools.errors import InputError
from evidence_loop.tools.store.pg import connect, is_url, unavailable
from evidence_loop.tools.store.pg_schema import LATEST, migrate

DESCRIPTION = f"""\
Apply the schema migrations a PostgreSQL store lacks, in order, in one transaction, and print
them. A store is never migrated on the way: every other command refuses a database whose schema
is behind this evloop's (version {LATEST}) and names this command. Running it again changes
nothing; two replicas running it at once apply each migration once. An index folder (SQLite)
needs no migration: `evloop ingest` creates it."""

EPILOG = """\
examples:
  evloop migrate --store postgresql://evloop@db.internal/evloop
  EVLOOP_STORE_URL=postgresql://evloop@db.internal/evloop evloop migrate"""


def register(subparsers: Subparsers) -> None:
    """Add the ``migrate`` command."""
    parser = add_command(
        subparsers, "migrate", summary="create or upgrade a PostgreSQL store", description=DESCRIPTION,
        epilog=EPILOG,
    )  # fmt: skip
    parser.add_argument(
        "--store", metavar="URL", default=None, help=f"postgresql://... (default: ${STORE_ENV})"
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    url = args.store or settings.current().get("store_url")
    if not is_url(url):
        raise InputError(f"migrate needs a postgresql:// URL (--store or ${STORE_ENV}), not {url!r}")
    with connect(url) as conn, unavailable(url):
        applied = migrate(conn)
    for migration in applied:
        print(f"applied {migration.version}: {migration.name}")
    print(f"schema version {LATEST} at {shown(url)} ({len(applied)} applied)")
    return 0
