"""The feedback log: append-only, one hash chain whatever appends to it, torn lines left alone."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from evidence_loop.traces.feedback import FeedbackEntry, FolderFeedback, check_chain, latest

ROOT = Path(__file__).resolve().parents[2]
APPEND = """
import sys
from evidence_loop.traces.feedback import FeedbackEntry, FolderFeedback
log = FolderFeedback(sys.argv[1])
for n in range(int(sys.argv[2])):
    log.append(FeedbackEntry(f"run-{sys.argv[3]}-{n}", "h" * 64, "correct", "2026-03-01T08:00:00Z"))
"""


def entry(run_id: str, verdict: str = "correct", day: str = "2026-03-01") -> FeedbackEntry:
    return FeedbackEntry(run_id, "f" * 64, verdict, f"{day}T08:00:00Z", "reviewer")  # type: ignore[arg-type]


def test_verdicts_of_several_days_form_one_chain(tmp_path: Path) -> None:
    log = FolderFeedback(tmp_path / "feedback")
    log.append(entry("r1", day="2026-03-01"))
    log.append(entry("r1", "should_have_refused", day="2026-03-02"))

    records = log.records()
    assert [r.seq for r in records] == [1, 2] and records[1].prev == records[0].hash
    assert check_chain(records).ok and latest(records)["r1"].verdict == "should_have_refused"
    assert sorted(p.name for p in (tmp_path / "feedback").glob("*.journal")) == [
        "2026-03-01.journal",
        "2026-03-02.journal",
    ]


def test_processes_appending_at_once_keep_one_chain(tmp_path: Path) -> None:
    folder = str(tmp_path / "feedback")
    writers = [
        subprocess.Popen([sys.executable, "-c", APPEND, folder, "15", str(n)], cwd=ROOT) for n in range(3)
    ]
    assert [w.wait(timeout=300) for w in writers] == [0, 0, 0]

    records = FolderFeedback(tmp_path / "feedback").records()
    assert len(records) == 45 and check_chain(records).ok


def test_a_torn_last_line_is_skipped_and_the_next_record_starts_on_its_own_line(tmp_path: Path) -> None:
    log = FolderFeedback(tmp_path / "feedback")
    log.append(entry("r1"))
    journal = tmp_path / "feedback" / "2026-03-01.journal"
    journal.write_bytes(journal.read_bytes() + b'{"type":"feedback","seq":2,"ru')

    log.append(entry("r2"))

    assert [r.run_id for r in log.records()] == ["r1", "r2"] and check_chain(log.records()).ok


def test_a_changed_or_dropped_record_breaks_the_chain(tmp_path: Path) -> None:
    log = FolderFeedback(tmp_path / "feedback")
    for n in range(3):
        log.append(entry(f"r{n}"))
    records = log.records()

    changed = [records[0], records[1].model_copy(update={"verdict": "wrong_evidence"}), records[2]]
    assert check_chain(changed).first_bad_seq == 2
    assert check_chain([records[0], records[2]]).first_bad_seq == 2
