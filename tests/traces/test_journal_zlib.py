"""Compressed journal frames: a run's records are stored compressed (zlib, one base64 line) and read
back byte for byte; a changed byte of the compressed line fails that run alone, as damage, and the
runs after it still verify; a compressed frame torn at the journal's end is an interrupted write; frames
written before compression, in the same journal, read and verify as before; ``show`` seeks a compressed
frame."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from evidence_loop.tools.errors import TraceError
from evidence_loop.traces import MANIFEST_NAME, read_manifest
from evidence_loop.traces.journal.journal import JOURNAL_SUFFIX
from evidence_loop.traces.stores.store import TraceStore
from tests.traces.conftest import SAMPLE_STEPS, HeaderFactory
from tests.traces.test_journal import _bytes_read

DAY = "2025/03/01"
FRAME_LINE = re.compile(rb'\{"frame":"([^"]+)","bytes":(\d+),"zlib":(\d+)\}\n')


def write(store: TraceStore, make_header: HeaderFactory, run_id: str) -> str:
    with store.begin(make_header(run_id=run_id)) as writer:
        for step in SAMPLE_STEPS:
            writer.append(step)
        return writer.finish("answered")


def journal_of(store: TraceStore) -> Path:
    [journal] = sorted(store.root.rglob(f"*{JOURNAL_SUFFIX}"))
    return journal


def payload_span(journal: Path, run_id: str) -> tuple[int, int]:
    """Where the compressed line of ``run_id``'s frame lies in its journal (newline excluded)."""
    offset = read_manifest(journal.parent)[run_id].offset
    assert offset is not None
    match = FRAME_LINE.match(journal.read_bytes(), offset)
    assert match is not None and match.group(1) == run_id.encode()
    return match.end(), match.end() + int(match.group(3)) - 1


def test_a_runs_frame_is_compressed_on_disk_and_reads_back_the_records_written_uncompressed(
    tmp_path: Path, make_header: HeaderFactory
) -> None:
    packed, plain = TraceStore(tmp_path / "packed"), TraceStore(tmp_path / "plain", compress=None)
    finals = [write(packed, make_header, f"r-{n}") for n in range(3)]
    assert [write(plain, make_header, f"r-{n}") for n in range(3)] == finals
    content = journal_of(packed).read_bytes()
    assert b'"type":"header"' not in content and b"refund-faq" not in content, "records are compressed"
    frames = FRAME_LINE.findall(content)
    assert [run for run, _, _ in frames] == [b"r-0", b"r-1", b"r-2"]
    for n, (_, size, zipped) in enumerate(frames):
        records = plain.raw(f"r-{n}")
        assert packed.raw(f"r-{n}") == records and int(size) == len(records)
        assert int(zipped) < packed.stored_size(f"r-{n}") < len(records) * 3 // 5
        assert packed.read(f"r-{n}").final_hash == finals[n] and packed.verify(f"r-{n}").complete
    assert all(verdict.complete for _, verdict in packed.verify_all())


@pytest.mark.parametrize("where", ["first", "middle", "last", "newline"])
def test_a_changed_byte_of_a_compressed_frame_fails_that_run_and_the_next_runs_still_verify(
    tmp_path: Path, make_header: HeaderFactory, where: str
) -> None:
    store = TraceStore(tmp_path / "traces")
    for run in ("r-1", "r-2", "r-3"):
        write(store, make_header, run)
    journal = journal_of(store)
    start, end = payload_span(journal, "r-2")
    at = {"first": start, "middle": (start + end) // 2, "last": end - 1, "newline": end}[where]
    content = bytearray(journal.read_bytes())
    while content[at] == ord("="):  # padding: the last base64 character that carries data
        at -= 1
    content[at] = ord("B") if content[at] == ord("A") else ord("A")  # still base64
    journal.write_bytes(bytes(content))

    verdicts = dict(store.verify_all())
    damaged = verdicts["r-2"]
    assert (damaged.ok, damaged.complete, damaged.written) == (False, False, True)
    assert damaged.reason.startswith("damaged: the compressed records of its frame do not read back")
    assert verdicts["r-1"].complete and verdicts["r-3"].complete and len(verdicts) == 3
    with pytest.raises(TraceError, match=r"trace of run r-2 in runs-.*\.journal@\d+: damaged"):
        store.read("r-2")
    assert store.verify("r-3").complete


def test_bytes_that_are_no_base64_in_a_compressed_frame_fail_that_run_alone(
    tmp_path: Path, make_header: HeaderFactory
) -> None:
    store = TraceStore(tmp_path / "traces")
    for run in ("r-1", "r-2", "r-3"):
        write(store, make_header, run)
    journal = journal_of(store)
    start, end = payload_span(journal, "r-2")
    content = journal.read_bytes()
    middle = (start + end) // 2
    journal.write_bytes(content[:middle] + b"*" + content[middle + 1 :])  # base64 reading skips it

    verdicts = dict(store.verify_all())
    assert not verdicts["r-2"].ok and verdicts["r-2"].reason.startswith("damaged: the compressed records")
    assert verdicts["r-1"].complete and verdicts["r-3"].complete


@pytest.mark.parametrize("keep", [0.1, 0.5, 0.99])
def test_a_compressed_frame_torn_at_the_end_of_the_journal_is_interrupted_not_tampered(
    tmp_path: Path, make_header: HeaderFactory, keep: float
) -> None:
    store = TraceStore(tmp_path / "traces")
    write(store, make_header, "r-done")
    write(store, make_header, "r-killed")
    journal = journal_of(store)
    start, end = payload_span(journal, "r-killed")
    manifest = journal.parent / MANIFEST_NAME  # a kill mid-write: the run recorded nothing more
    manifest.write_bytes(
        b"".join(line for line in manifest.read_bytes().splitlines(True) if b"r-killed" not in line)
    )
    store.index_path.unlink()
    with journal.open("r+b") as file:
        file.truncate(start + int((end - start) * keep))

    verdicts = dict(store.verify_all())
    assert verdicts["r-done"].complete
    killed = verdicts["r-killed"]
    assert (killed.ok, killed.complete, killed.written) == (True, False, False)
    assert killed.reason.startswith("interrupted: the journal ends inside this run's frame")


def test_frames_written_before_compression_read_and_verify_beside_compressed_ones_in_one_journal(
    tmp_path: Path, make_header: HeaderFactory
) -> None:
    """An older process wrote plain frames; this one appended compressed frames to the same journal."""
    root = tmp_path / "traces"
    older = TraceStore(root, compress=None)
    finals = {run: write(older, make_header, run) for run in ("r-old-1", "r-old-2")}
    newer = TraceStore(tmp_path / "newer")
    finals |= {run: write(newer, make_header, run) for run in ("r-new-1", "r-new-2")}
    journal, appended = journal_of(older), journal_of(newer)
    shift = journal.stat().st_size
    journal.write_bytes(journal.read_bytes() + appended.read_bytes())
    lines = [json.loads(line) for line in (appended.parent / MANIFEST_NAME).read_text().splitlines()]
    with (journal.parent / MANIFEST_NAME).open("a") as manifest:
        for line in lines:
            line |= {"journal": journal.name, "offset": line["offset"] + shift}
            manifest.write(json.dumps(line) + "\n")

    store = TraceStore(root)
    content = journal.read_bytes()
    assert b'"type":"header"' in content[:shift] and b'"type":"header"' not in content[shift:]
    assert {run: store.read(run).final_hash for run in finals} == finals
    verdicts = dict(store.verify_all())
    assert sorted(verdicts) == sorted(finals) and all(v.complete for v in verdicts.values())
    write(store, make_header, "r-next")  # and this store appends compressed frames as it goes
    assert store.verify("r-next").complete and store.verify("r-old-2").complete


@pytest.mark.skipif(not Path("/proc/self/io").exists(), reason="counts bytes read through /proc/self/io")
def test_show_seeks_a_compressed_frame_and_reads_only_it(tmp_path: Path, make_header: HeaderFactory) -> None:
    store = TraceStore(tmp_path / "traces")
    finals = {f"r-{n:03d}": write(store, make_header, f"r-{n:03d}") for n in range(200)}
    journal = journal_of(store)
    before = _bytes_read()
    trace = store.read("r-100")
    read = _bytes_read() - before
    manifest = (journal.parent / MANIFEST_NAME).stat().st_size
    assert trace.final_hash == finals["r-100"] and trace.complete
    assert read < manifest + 3 * store.stored_size("r-100") < journal.stat().st_size // 5
