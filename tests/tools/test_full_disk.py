"""A full disk under the index folder is a full disk: said so, with the folder, never called damage
and never answered with "delete it and ingest again" (that would destroy the versions replay needs).

On a real small filesystem (a tmpfs, mounted as root) the reading commands keep working while the
disk is full; where none can be mounted, the writes fail through the injected ENOSPC instead
(tests/disk_support.py) and the reading test is skipped.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from evidence_loop.agent.doors.api.app import create_app
from evidence_loop.agent.doors.cli.app import main
from evidence_loop.agent.doors.cli.sample import load_sample_kb
from evidence_loop.agent.service import Service
from evidence_loop.tools.store.folder import Store
from evidence_loop.tools.store.generation import BM25_DIR
from tests.disk_support import SmallDisk, small_disk

Capture = pytest.CaptureFixture[str]
QUESTION = "LM-S10 的整机保修期是多久？"
DELETE_HINTS = ("delete", "ingest again", "damaged", "not a readable")


@pytest.fixture
def disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[SmallDisk]:
    with small_disk(tmp_path, monkeypatch) as made:
        yield made


@pytest.fixture
def index(disk: SmallDisk) -> Path:
    folder = disk.folder / "index"
    with Store.open(folder, create=True) as store:
        store.ingest(load_sample_kb())
    return folder


def _run(capsys: Capture, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_reading_commands_keep_working_on_a_full_disk(disk: SmallDisk, index: Path, capsys: Capture) -> None:
    if not disk.mounted:
        pytest.skip("SQLite on a full disk needs a real small filesystem (mounting a tmpfs needs root)")
    disk.fill()
    where = ("--index", str(index))

    code, out, err = _run(capsys, "docs", *where)
    assert (code, err) == (0, "") and "warranty-zh" in out
    code, out, err = _run(capsys, "search", "保修", *where)
    assert (code, err) == (0, "") and "warranty-zh@" in out
    code, out, err = _run(capsys, "check", *where)
    assert code == 0 and out.startswith("ok:"), err
    code, out, err = _run(capsys, "ask", QUESTION, "--no-trace", *where)
    assert code == 0 and "answered" in out, err


def test_ask_on_a_full_disk_names_the_trace_path_and_leaves_no_trace_file(
    disk: SmallDisk, index: Path, capsys: Capture
) -> None:
    disk.fill()
    code, out, err = _run(capsys, "ask", QUESTION, "--index", str(index))
    disk.free()

    assert (code, out) == (1, "")
    assert f"could not be written at {index / 'traces'}" in err and "no space left on the disk" in err
    assert not any(hint in err for hint in DELETE_HINTS), err
    assert [path for path in (index / "traces").rglob("*.jsonl")] == []
    code, out, err = _run(capsys, "trace", "verify", "--all", "--index", str(index))
    assert code == 0, out + err


def test_an_ingest_on_a_full_disk_says_so_and_writes_nothing(
    disk: SmallDisk, index: Path, capsys: Capture, tmp_path: Path
) -> None:
    big = tmp_path / "big.md"  # on the usual disk: only the index is on the full one
    big.write_text("# Big\n\n" + "".join(f"LM-X{i} covers part {i} of the warranty.\n" for i in range(15000)))
    before = _run(capsys, "docs", "--index", str(index))
    committed = sorted(path.name for path in (index / BM25_DIR).iterdir())

    disk.fill(leave_bytes=200_000)
    code, out, err = _run(capsys, "ingest", str(big), "--index", str(index))
    disk.free()

    assert code == 1, out
    assert f"no space left on the disk at {index}" in err and "nothing was written" in err
    assert "requested and" not in err and not any(hint in err for hint in DELETE_HINTS), err
    assert _run(capsys, "docs", "--index", str(index)) == before
    assert sorted(path.name for path in (index / BM25_DIR).iterdir()) == committed
    assert _run(capsys, "check", "--index", str(index))[0] == 0


def test_an_io_error_under_the_traces_is_reported_as_one(
    disk: SmallDisk, index: Path, capsys: Capture
) -> None:
    disk.control.write_text(f"EIO {index / 'traces'}", encoding="utf-8")
    code, _, err = _run(capsys, "ask", QUESTION, "--index", str(index))
    disk.free()

    assert code == 1
    assert "an I/O error on the disk" in err and str(index / "traces") in err, err
    assert [path for path in (index / "traces").rglob("*.jsonl")] == []


def test_a_document_posted_on_a_full_disk_is_a_503_and_writes_nothing(disk: SmallDisk, index: Path) -> None:
    text = "# Gift cards\n\n" + "".join(f"Card {i} stays valid for {i} months.\n" for i in range(15000))
    document = {"doc_id": "gift-cards", "title": "Gift cards", "text": text, "format": "markdown"}
    with Service.open(index) as service, TestClient(create_app(service, None)) as client:
        before = client.get("/v1/documents").json()
        disk.fill(leave_bytes=200_000)
        refused = client.post("/v1/documents", json=document)
        disk.free()
        after = client.get("/v1/documents").json()

    assert refused.status_code == 503, refused.text
    assert refused.json()["type"] == "urn:evloop:problem:storage-unavailable"
    assert str(index) not in refused.text, "server paths go to the log, not to the caller"
    assert after == before
