"""A real PostgreSQL server in a temporary folder, for the tests and the benchmarks (never a mock).

    server = PgServer.start()      initdb + pg_ctl start (waits until it accepts connections)
    url = server.new_database()    a fresh, migrated database: postgresql:///NAME?host=SOCKDIR...
    server.stop() / server.start_again() / server.destroy()

The server listens on a unix socket in its own folder only (no TCP port to collide with). initdb
refuses to run as root, so as root the folder is handed to the ``postgres`` user and the server
binaries run as that user (``runuser``); the tests, as root, connect through the socket.
The binaries come from Debian's ``postgresql`` package (``.ci/run`` installs it when missing).
"""

from __future__ import annotations

import contextlib
import glob
import itertools
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

# pg_ctl's own wait for the server to accept connections: a busy 2-core machine meets it.
START_TIMEOUT_S = 120
SUPERUSER = "evloop"


def find_bindir() -> Path | None:
    """The folder with initdb and pg_ctl: PATH first, then Debian's /usr/lib/postgresql/N/bin."""
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(found).resolve().parent
    for candidate in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if (Path(candidate) / "initdb").is_file():
            return Path(candidate)
    return None


def missing_reason() -> str | None:
    """Why PostgreSQL tests cannot run here (None: they can)."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed (pip install -e '.[dev]')"
    if find_bindir() is None:
        return "no PostgreSQL server binaries (initdb, pg_ctl): apt-get install postgresql"
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        return "running as root without runuser to start PostgreSQL as another user"
    return None


@dataclass
class PgServer:
    root: Path
    bindir: Path
    _names: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    fsync: bool = False

    @property
    def socket_dir(self) -> Path:
        return self.root / "sock"

    def url(self, database: str = "postgres") -> str:
        return f"postgresql:///{database}?host={self.socket_dir}&user={SUPERUSER}"

    @classmethod
    def start(cls, *, fsync: bool = False) -> PgServer:
        bindir = find_bindir()
        if bindir is None:
            raise RuntimeError(missing_reason() or "no PostgreSQL")
        # Short and outside pytest's root-only folders: the postgres user must reach the socket.
        root = Path(tempfile.mkdtemp(prefix="evloop-pg-"))
        (root / "sock").mkdir()
        if os.geteuid() == 0:
            shutil.chown(root, "postgres")
            shutil.chown(root / "sock", "postgres")
        server = cls(root, bindir)
        server.fsync = fsync
        server._run("initdb", "-D", str(root / "data"), "-U", SUPERUSER, "-A", "trust", "-E", "UTF8",
                    "--locale=C", "--no-sync")  # fmt: skip
        server.start_again()
        return server

    def start_again(self) -> None:
        """Start (or restart after :meth:`stop`) on the same data; returns once it accepts connections."""
        fsync = "on" if self.fsync else "off"  # off for tests; a benchmark may ask for a durable server
        options = f"-k {self.socket_dir} -c listen_addresses='' -c fsync={fsync} -c max_connections=200"
        self._run("pg_ctl", "-D", str(self.root / "data"), "-l", str(self.root / "server.log"),
                  "-o", options, "-w", "-t", str(START_TIMEOUT_S), "start")  # fmt: skip

    def stop(self) -> None:
        """A fast shutdown: connections are closed, as when the server is stopped for maintenance."""
        self._run("pg_ctl", "-D", str(self.root / "data"), "-m", "fast", "-w", "stop")

    def destroy(self) -> None:
        """Stop the server if it runs, and remove its folder."""
        with contextlib.suppress(RuntimeError):  # already stopped
            self.stop()
        shutil.rmtree(self.root, ignore_errors=True)

    def new_database(self, *, migrated: bool = True) -> str:
        """A fresh database's URL (``migrated``: with every migration applied, as `evloop migrate` does)."""
        import psycopg

        from evidence_loop.tools.store.pg_schema import migrate

        name = f"t{next(self._names)}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        url = self.url(name)
        if migrated:
            with psycopg.connect(url, autocommit=True) as conn:
                migrate(conn)
        return url

    def _run(self, tool: str, *args: str) -> None:
        command = [str(self.bindir / tool), *args]
        if os.geteuid() == 0:
            command = ["runuser", "-u", "postgres", "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, timeout=START_TIMEOUT_S + 30)
        if done.returncode != 0:
            log = self.root / "server.log"
            tail = log.read_text(errors="replace")[-2000:] if log.is_file() else ""
            raise RuntimeError(f"{tool} failed ({done.returncode}): {done.stderr.strip()}\n{tail}")
