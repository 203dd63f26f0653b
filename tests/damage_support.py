"""Shared by the index-damage tests: the same-size damage a disk or a stray write does to a file."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path


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
