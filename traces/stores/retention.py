"""Retention: remove whole days of traces older than a cut-off date, and their index lines.

Traces are kept per UTC day (``YYYY/MM/DD``), so retention removes day folders, never single runs
(an auditor reading a kept day sees every run of it): the day's journals, its manifest and any
one-file-per-run traces of the older layout go together. The cut-off may be at most today: today's
folder can hold runs still being written. The index is rewritten without the removed runs (a new
file fsynced, then renamed over the old one); an index line appended by another process during the
rewrite may be lost, which only costs speed: ``TraceStore.list`` reads any file the index lacks.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path

from evidence_loop.tools.errors import InputError
from evidence_loop.traces.journal.journal import JOURNAL_SUFFIX, frame_index
from evidence_loop.traces.stores.store import TraceStore


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
                if entry.name.endswith(JOURNAL_SUFFIX):
                    runs += len(frame_index(Path(entry.path)))
                size += entry.stat().st_size
    if not dry_run and doomed:
        for folder in doomed:
            shutil.rmtree(folder)
            _remove_empty_parents(folder.parent, store.root)
        prefixes = tuple(folder.relative_to(store.root).as_posix() + "/" for folder in doomed)
        store.rewrite_index(lambda summary: not summary.path.startswith(prefixes))
    return PruneReport(len(doomed), runs, size, len(folders) - len(doomed), dry_run)


def _remove_empty_parents(folder: Path, root: Path) -> None:
    """Remove month and year folders left empty, up to (not including) the store root."""
    while folder != root and folder.is_dir() and not any(folder.iterdir()):
        folder.rmdir()
        folder = folder.parent
