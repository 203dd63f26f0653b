"""Retention removes whole UTC days of traces before a date, and their index lines; nothing else."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from pathlib import Path

import pytest

from evidence_loop.tools.errors import InputError
from evidence_loop.traces import MANIFEST_NAME, TraceStore, prune, read_manifest

TODAY = date(2025, 3, 10)


def _three_days(write_run: Callable[..., Path]) -> dict[str, Path]:
    return {
        run_id: write_run(run_id, created_at=f"2025-{day}T08:30:00Z")
        for run_id, day in (("old-1", "01-30"), ("old-2", "02-28"), ("new-1", "03-01"))
    }


def test_prune_removes_the_days_before_the_date_and_keeps_the_rest(
    store: TraceStore, write_run: Callable[..., Path]
) -> None:
    paths = _three_days(write_run)
    report = prune(store, date(2025, 3, 1), today=TODAY)
    assert (report.days, report.runs, report.kept_days, report.dry_run) == (2, 2, 1, False)
    assert report.bytes > 0 and not paths["old-1"].exists() and not paths["old-2"].exists()
    assert [s.run_id for s in store.list()] == ["new-1"]
    assert not (store.root / "2025" / "01").exists(), "an emptied month folder goes too"
    assert store.verify("new-1").ok


def test_prune_rewrites_the_index_without_the_removed_runs(
    store: TraceStore, write_run: Callable[..., Path]
) -> None:
    _three_days(write_run)
    prune(store, date(2025, 3, 1), today=TODAY)
    index = store.index_path.read_text(encoding="utf-8")
    assert '"new-1"' in index and '"old-1"' not in index and '"old-2"' not in index


def test_a_dry_run_counts_and_removes_nothing(store: TraceStore, write_run: Callable[..., Path]) -> None:
    paths = _three_days(write_run)
    before = store.index_path.read_bytes()
    report = prune(store, date(2025, 3, 1), dry_run=True, today=TODAY)
    assert (report.days, report.runs, report.dry_run) == (2, 2, True)
    day_files = [f for run in ("old-1", "old-2") for f in paths[run].parent.iterdir()]  # traces, manifests
    assert report.bytes == sum(f.stat().st_size for f in day_files)
    assert all(p.exists() for p in paths.values()) and store.index_path.read_bytes() == before


def test_prune_removes_each_days_manifest_with_it_and_keeps_the_rest(
    store: TraceStore, write_run: Callable[..., Path]
) -> None:
    paths = _three_days(write_run)
    prune(store, date(2025, 3, 1), today=TODAY)
    assert not (paths["old-2"].parent / MANIFEST_NAME).exists()
    assert set(read_manifest(paths["new-1"].parent)) == {"new-1"}
    store.index_path.unlink()  # the kept run is still checked against its manifest, not the index
    paths["new-1"].write_bytes(b"".join(paths["new-1"].read_bytes().splitlines(keepends=True)[:-1]))
    assert store.verify("new-1").reason.startswith("truncated")


def test_a_cut_off_after_today_is_refused(store: TraceStore, write_run: Callable[..., Path]) -> None:
    paths = _three_days(write_run)
    with pytest.raises(InputError, match="after today"):
        prune(store, date(2025, 3, 11), today=TODAY)
    assert all(p.exists() for p in paths.values())


def test_a_store_without_traces_prunes_nothing(store: TraceStore) -> None:
    assert prune(store, TODAY, today=TODAY).days == 0
