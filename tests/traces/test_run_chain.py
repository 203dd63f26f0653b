"""The run chain of the folder store: a run removed whole (its frame, its manifest line, its index
line) breaks verification wherever it was in its journal, first, middle or last; so do frames moved,
a journal or a day removed; what the chain does not cover yet (a day's newest runs, days written
before it) is said, never failed; interrupted writes, lost manifest lines and retention are no break.
The same for PostgreSQL: ``test_pg_run_chain``."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from evidence_loop.agent.doors.cli.app import main
from evidence_loop.traces import MANIFEST_NAME, prune
from evidence_loop.traces.journal.journal import JOURNAL_SUFFIX, Frame, scan
from evidence_loop.traces.stores.store import TraceStore
from tests.traces.conftest import SAMPLE_STEPS, HeaderFactory

DAY = "2025-03-01"


def write(
    store: TraceStore, make_header: HeaderFactory, run_id: str, day: str = DAY, finish: bool = True
) -> None:
    with store.begin(make_header(run_id=run_id, created_at=f"{day}T08:30:00Z")) as writer:
        for step in SAMPLE_STEPS:
            writer.append(step)
        if finish:
            writer.finish("answered")


def day_runs(
    root: Path, make_header: HeaderFactory, count: int = 10, day: str = DAY, prefix: str = "r"
) -> None:
    """``count`` runs of ``day`` written and the store closed (a process that stopped)."""
    store = TraceStore(root)
    for n in range(count):
        write(store, make_header, f"{prefix}-{n:02d}", day)
    store.close()


def folder(root: Path, day: str = DAY) -> Path:
    return root / day.replace("-", "/")


def journal_of(root: Path, run_id: str, day: str = DAY) -> Path:
    return next(
        j for j in folder(root, day).glob(f"*{JOURNAL_SUFFIX}") if f'"{run_id}"'.encode() in j.read_bytes()
    )


def without_lines(path: Path, run_id: str) -> None:
    """``path`` without the lines that name ``run_id`` (its manifest or link line, its index line)."""
    needle = f'"{run_id}"'.encode()
    path.write_bytes(b"".join(line for line in path.read_bytes().splitlines(True) if needle not in line))


def remove_whole(root: Path, run_id: str, day: str = DAY) -> None:
    """What a tamperer removing a run does: its frame, its manifest (or link) line, its index line."""
    journal = journal_of(root, run_id, day)
    data = journal.read_bytes()
    [frame] = [item for item in scan(data) if isinstance(item, Frame) and item.run_id == run_id]
    journal.write_bytes(data[: frame.offset] + data[frame.offset + frame.stored :])
    without_lines(folder(root, day) / MANIFEST_NAME, run_id)
    without_lines(root / "index.jsonl", run_id)


def breaks(root: Path) -> list[tuple[str, str]]:
    rows = list(TraceStore(root).verify_chain())
    assert rows[-1][0] == "run chain"
    return [(name, verdict.reason) for name, verdict in rows[:-1]]


def summary(root: Path) -> str:
    return list(TraceStore(root).verify_chain())[-1][1].reason


def test_an_untouched_day_holds_and_is_anchored_at_its_end(
    tmp_path: Path, make_header: HeaderFactory
) -> None:
    day_runs(tmp_path, make_header)

    assert breaks(tmp_path) == []
    assert (
        summary(tmp_path) == "run chain holds: 1 day; 1 journals or writers chained, 1 anchored at their end"
    )


def test_a_run_removed_whole_from_the_middle_breaks_the_chain_at_the_run_after_it(
    tmp_path: Path, make_header: HeaderFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    day_runs(tmp_path, make_header, 30)
    remove_whole(tmp_path, "r-15")

    assert main(["trace", "verify", "--all", "--traces", str(tmp_path)]) == 1

    out = capsys.readouterr().out
    assert "29 of 29 traces verify" in out and "r-16: FAILED - run chain: a run before it in runs-" in out
    assert "run chain FAILED - 1 break" in out


def test_the_first_run_removed_whole_breaks_the_chain_at_the_new_first(
    tmp_path: Path, make_header: HeaderFactory
) -> None:
    day_runs(tmp_path, make_header)
    remove_whole(tmp_path, "r-00")

    [(name, reason)] = breaks(tmp_path)
    assert name == "r-01" and reason.endswith("but it is the journal's first")


def test_the_last_run_removed_whole_fails_against_its_journals_anchor(
    tmp_path: Path, make_header: HeaderFactory
) -> None:
    day_runs(tmp_path, make_header)
    remove_whole(tmp_path, "r-09")

    [(name, reason)] = breaks(tmp_path)
    assert name.endswith(JOURNAL_SUFFIX) and "was anchored (close) at a run ending on hash" in reason
    assert reason.endswith("no run of it ends there now: runs were removed from its end")


def test_the_next_day_anchors_the_end_of_a_journal_whose_writer_never_closed_it(
    tmp_path: Path, make_header: HeaderFactory
) -> None:
    killed = TraceStore(tmp_path)  # never closed: its journal's end is not anchored by its writer
    for n in range(3):
        write(killed, make_header, f"r-{n:02d}")
    write(TraceStore(tmp_path), make_header, "next", "2025-03-02")
    remove_whole(tmp_path, "r-02")

    [(_, reason)] = breaks(tmp_path)
    assert "was anchored (next day) at a run ending on hash" in reason


def test_frames_swapped_in_their_journal_break_the_chain(tmp_path: Path, make_header: HeaderFactory) -> None:
    day_runs(tmp_path, make_header, 4)
    journal = journal_of(tmp_path, "r-01")
    frames = [item for item in scan(journal.read_bytes()) if isinstance(item, Frame)]
    data = journal.read_bytes()
    pieces = [data[f.offset : f.offset + f.stored] for f in frames]
    journal.write_bytes(b"".join([pieces[0], pieces[2], pieces[1], pieces[3]]))

    assert [name for name, _ in breaks(tmp_path)] == ["r-02", "r-01", "r-03"]


def test_an_unfinished_run_removed_whole_breaks_the_chain(tmp_path: Path, make_header: HeaderFactory) -> None:
    store = TraceStore(tmp_path)
    write(store, make_header, "r-00")
    write(store, make_header, "r-01", finish=False)  # closed unfinished: a link line of its own
    write(store, make_header, "r-02")
    store.close()
    remove_whole(tmp_path, "r-01")

    assert [name for name, _ in breaks(tmp_path)] == ["r-02"]


def test_a_journal_removed_whole_from_an_anchored_day_breaks_the_chain(
    tmp_path: Path, make_header: HeaderFactory
) -> None:
    day_runs(tmp_path, make_header, 2, prefix="a")
    day_runs(tmp_path, make_header, 2, prefix="b")
    day_runs(tmp_path, make_header, 1, "2025-03-02")
    for run_id in ("b-00", "b-01"):
        without_lines(folder(tmp_path) / MANIFEST_NAME, run_id)
        without_lines(tmp_path / "index.jsonl", run_id)
    removed = journal_of(tmp_path, "b-00")
    removed.unlink()

    [(name, reason)] = breaks(tmp_path)
    assert name == removed.name and reason.startswith(f"run chain: {removed.name} of 2025/03/01, anchored (")


def test_a_day_removed_between_kept_days_breaks_the_chain_but_retention_does_not(
    tmp_path: Path, make_header: HeaderFactory
) -> None:
    for day in ("2025-03-01", "2025-03-02", "2025-03-03"):
        day_runs(tmp_path, make_header, 2, day, prefix=day)
    shutil.rmtree(folder(tmp_path, "2025-03-02"))

    assert [name for name, _ in breaks(tmp_path)] == ["2025/03/02"]

    prune(TraceStore(tmp_path), date_of("2025-03-03"))
    assert breaks(tmp_path) == []


def test_a_lost_manifest_line_or_an_interrupted_last_frame_is_no_break(
    tmp_path: Path, make_header: HeaderFactory
) -> None:
    day_runs(tmp_path, make_header, 5)
    without_lines(folder(tmp_path) / MANIFEST_NAME, "r-02")  # a power cut took the line, not the frame
    journal = journal_of(tmp_path, "r-04")
    journal.write_bytes(journal.read_bytes() + b'{"frame":"r-05","bytes":900,"zlib":400}\neJzt')

    assert breaks(tmp_path) == []


def test_an_edited_frame_fails_its_run_and_adds_no_break(tmp_path: Path, make_header: HeaderFactory) -> None:
    from tests.trace_support import edit_run

    day_runs(tmp_path, make_header, 5)
    edit_run(
        TraceStore(tmp_path),
        "r-02",
        lambda lines: [*lines[:3], lines[3].replace(b"0.61", b"0.615"), *lines[4:]],
    )

    assert [name for name, v in TraceStore(tmp_path).verify_all() if not v.ok] == ["r-02"]
    assert breaks(tmp_path) == []


def test_runs_own_files_are_chained_and_anchored_too(tmp_path: Path, make_header: HeaderFactory) -> None:
    store = TraceStore(tmp_path, layout="files")
    for n in range(5):
        write(store, make_header, f"r-{n:02d}")
    store.close()
    for run_id in ("r-02", "r-04"):
        (folder(tmp_path) / f"{run_id}.jsonl").unlink()
        without_lines(folder(tmp_path) / MANIFEST_NAME, run_id)
        without_lines(tmp_path / "index.jsonl", run_id)

    reasons = dict(breaks(tmp_path))
    assert "the run before it among files-" in reasons["r-03"]
    assert "was anchored (close)" in next(r for n, r in reasons.items() if n.startswith("files-"))


def test_a_day_written_before_the_chain_verifies_and_says_it_is_not_chained(
    tmp_path: Path, make_header: HeaderFactory
) -> None:
    day_runs(tmp_path, make_header, 3)
    manifest = folder(tmp_path) / MANIFEST_NAME
    old = [line for line in manifest.read_bytes().splitlines(True) if not line.startswith(b'{"anchor"')]
    manifest.write_bytes(b"".join(line.replace(b',"prev":', b',"was":') for line in old))  # no links
    remove_whole(tmp_path, "r-01")

    assert breaks(tmp_path) == []
    assert "1 written before the chain (no links: a run removed whole goes unseen)" in summary(tmp_path)
    assert all(verdict.ok for _, verdict in TraceStore(tmp_path).verify_all())


def test_a_cut_last_frame_the_index_records_as_finished_is_truncated_not_interrupted(
    tmp_path: Path, make_header: HeaderFactory
) -> None:
    day_runs(tmp_path, make_header, 3)
    journal = journal_of(tmp_path, "r-02")
    without_lines(folder(tmp_path) / MANIFEST_NAME, "r-02")  # its index line is left
    journal.write_bytes(journal.read_bytes()[:-300])

    verdict = dict(TraceStore(tmp_path).verify_all())["r-02"]
    assert not verdict.ok and verdict.reason.startswith("truncated: the run finished with hash")


def test_a_run_gone_with_its_manifest_line_but_still_in_the_index_is_missing(
    tmp_path: Path, make_header: HeaderFactory
) -> None:
    day_runs(tmp_path, make_header, 3)
    index = (tmp_path / "index.jsonl").read_bytes()
    remove_whole(tmp_path, "r-01")
    (tmp_path / "index.jsonl").write_bytes(index)

    verdict = dict(TraceStore(tmp_path).verify_all())["r-01"]
    assert not verdict.ok and verdict.reason.startswith("missing: the index records it as finished with hash")


def test_a_day_copied_to_a_later_day_fails_each_run_as_misfiled(
    tmp_path: Path, make_header: HeaderFactory
) -> None:
    day_runs(tmp_path, make_header, 2)
    shutil.copytree(folder(tmp_path), folder(tmp_path, "2025-03-05"))

    failed = [(n, v.reason) for n, v in TraceStore(tmp_path).verify_all() if not v.ok]
    assert failed == [
        (run, "misfiled: the run began on 2025-03-01 but is kept under 2025-03-05 (moved or copied)")
        for run in ("r-00", "r-01")
    ]


def date_of(text: str):  # type: ignore[no-untyped-def]
    from datetime import date

    return date.fromisoformat(text)
