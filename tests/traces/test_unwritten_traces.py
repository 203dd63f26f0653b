"""A run whose trace could not even begin (its header did not fit on the disk) was never recorded: it
leaves no file behind, and a header-less file (left by an older version, or a kill as the run began)
verifies as "not written" instead of failing the whole day, unless the run is recorded as finished.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import date
from pathlib import Path

import pytest

from evidence_loop.agent.doors.cli.app import main
from evidence_loop.tools.errors import TraceStoreUnavailableError
from evidence_loop.traces import TraceStore
from evidence_loop.traces.records.schema import TraceHeader
from evidence_loop.traces.stores.retention import prune
from tests.disk_support import SmallDisk, small_disk

HeaderFactory = Callable[..., TraceHeader]


@pytest.fixture
def disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[SmallDisk]:
    with small_disk(tmp_path, monkeypatch, size_kb=512) as made:
        yield made


def test_a_run_whose_header_cannot_be_written_leaves_no_file_and_names_where(
    disk: SmallDisk, make_header: HeaderFactory
) -> None:
    store = TraceStore(disk.folder / "traces", layout="files")
    store.begin(make_header(run_id="before")).finish("answered")
    disk.fill()

    with pytest.raises(TraceStoreUnavailableError) as raised:
        store.begin(make_header(run_id="r-full"))
    assert str(store.root) in str(raised.value) and "no space left on the disk" in str(raised.value)
    assert sorted(path.name for path in store.root.rglob("*.jsonl")) == ["before.jsonl", "index.jsonl"]
    assert store.probe(failed=True) is not None, "not writable while the disk is full"
    assert all(verdict.ok for _, verdict in store.verify_all())

    disk.free()
    assert store.probe(failed=True) is None
    store.begin(make_header(run_id="r-after")).finish("answered")
    assert [run for run, verdict in store.verify_all() if verdict.ok] == ["before", "r-after"]


def test_a_header_less_file_verifies_as_not_written_and_its_day_prunes(
    store: TraceStore, write_run: Callable[..., Path], capsys: pytest.CaptureFixture[str]
) -> None:
    finished = write_run("r-done")
    day = finished.parent
    (day / "r-empty.jsonl").write_bytes(b"")
    (day / "r-torn.jsonl").write_bytes(b'{"type":"header","schema_version":2,"run_id":"r-to')

    verdicts = dict(store.verify_all())
    assert [verdicts[run].ok for run in ("r-done", "r-empty", "r-torn")] == [True, True, True]
    assert [verdicts[run].written for run in ("r-done", "r-empty", "r-torn")] == [True, False, False]
    assert verdicts["r-empty"].reason.startswith(f"{day / 'r-empty.jsonl'}: not written")

    code = main(["trace", "verify", "--all", "--traces", str(store.root), "--index", str(store.root / "no")])
    out = capsys.readouterr().out
    assert code == 0 and "r-empty: not written" in out and "3 of 3 traces verify" in out

    finished.write_bytes(b"")  # a finished run cut to nothing is no unwritten run
    verdict = dict(store.verify_all())["r-done"]
    assert not verdict.ok and verdict.reason.startswith("truncated")

    report = prune(store, date(2025, 3, 2), today=date(2025, 3, 10))
    assert (report.days, report.runs) == (1, 3) and not day.exists()
