"""Retention: remove whole days of traces older than a cut-off date, and their index lines.

Traces are kept per UTC day (``YYYY/MM/DD``), so retention removes day folders, never single runs
(an auditor reading a kept day sees every run of it). The cut-off may be at most today: today's
folder can hold runs still being written. The index is rewritten without the removed runs (a new
file fsynced, then renamed over the old one); an index line appended by another process during the
rewrite may be lost, which only costs speed: ``TraceStore.list`` reads any file the index lacks.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path

from tools.errors import InputError
from traces.store import TraceStore


@dataclass(frozen=True, slots=True)
class PruneReport:
    """What a prune removed (or, for a dry run, would remove)."""

    days: int
    runs: int
    bytes: int
    kept_days: int
    dry_run: bool


def prune(
    store: TraceStore, before: date, *, dry_run: bool = False, today: date | None = None
) -> PruneReport:
    """Remove the day folders dated before ``before``; ``dry_run`` only counts them."""
    today = today or datetime.now(UTC).date()
    if before > today:
        raise InputError(
            f"--before {before.isoformat()} is after today ({today.isoformat()}, UTC): "
            "today's runs may still be being written"
        )
    folders = store.day_folders()
    doomed = [folder for day, folder in folders if day < before]
    runs = size = 0
    for folder in doomed:
        for entry in os.scandir(folder):
            if entry.is_file():
                runs += entry.name.endswith(".jsonl")
                size += entry.stat().st_size
    if not dry_run and doomed:
        for folder in doomed:
            shutil.rmtree(folder)
            _remove_empty_parents(folder.parent, store.root)
        _rewrite_index(store, [folder.relative_to(store.root).as_posix() + "/" for folder in doomed])
    return PruneReport(len(doomed), runs, size, len(folders) - len(doomed), dry_run)


def _remove_empty_parents(folder: Path, root: Path) -> None:
    """Remove month and year folders left empty, up to (not including) the store root."""
    while folder != root and folder.is_dir() and not any(folder.iterdir()):
        folder.rmdir()
        folder = folder.parent


def _keeps(line: bytes, prefixes: tuple[str, ...]) -> bool:
    """A whole, readable index line about a run outside the removed days (a torn line goes too)."""
    try:
        entry = json.loads(line)
    except ValueError:
        return False
    return isinstance(entry, dict) and not str(entry.get("path", "")).startswith(prefixes)


def _rewrite_index(store: TraceStore, prefixes: list[str]) -> None:
    """The index without the lines of runs under ``prefixes`` (relative day paths ending in ``/``)."""
    try:
        lines = store.index_path.read_bytes().splitlines(keepends=True)
    except FileNotFoundError:
        return
    kept = [line for line in lines if _keeps(line, tuple(prefixes))]
    temporary = store.index_path.with_suffix(".jsonl.tmp")
    with temporary.open("wb") as out:
        out.writelines(kept)
        out.flush()
        os.fsync(out.fileno())
    os.replace(temporary, store.index_path)
