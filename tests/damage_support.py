"""Shared by the index-damage tests: the same-size damage a disk or a stray write does to a file, and a
process killed at a stage of its write."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

from evidence_loop.tools.store.folder import Checkpoint

ROOT = Path(__file__).resolve().parents[1]


def kill_at(stage: str) -> Checkpoint:
    """A store's checkpoint that kills its own process (kill -9) once a write reaches ``stage``."""

    def checkpoint(reached: str) -> None:
        if reached == stage:
            os.kill(os.getpid(), signal.SIGKILL)

    return checkpoint


def killed_at(stage: str, script: str, folder: Path) -> int:
    """The exit code of ``script`` run in a child process that is killed when a write reaches
    ``stage``; the script opens ``Store.open(sys.argv[1], checkpoint=kill_at(sys.argv[2]))``."""
    prelude = "import sys\nfrom tests.damage_support import kill_at\n"
    command = [sys.executable, "-c", prelude + script, str(folder), stage]
    return subprocess.run(command, cwd=ROOT, timeout=120, check=False).returncode


def flip_byte(path: Path, offset: int | None = None) -> None:
    """Invert one byte in place (the middle one by default): the file keeps its size."""
    data = bytearray(path.read_bytes())
    at = len(data) // 2 if offset is None else offset
    data[at] ^= 0xFF
    path.write_bytes(bytes(data))


def flip_units_page(db: Path) -> None:
    """Flip the first byte (the page type) of the middle page of the units table, mid-file: every
    command that reads the corpus meets it."""
    with closing(sqlite3.connect(db)) as conn:
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        pages = [p for (p,) in conn.execute("SELECT pageno FROM dbstat WHERE name = 'units' ORDER BY pageno")]
    flip_byte(db, (pages[len(pages) // 2] - 1) * page_size)
