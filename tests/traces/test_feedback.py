"""The feedback log: append-only, one hash chain whatever appends to it, its tail anchored, every
line it cannot read reported; the same on both backends, whatever is done to its records."""

from __future__ import annotations

import logging
import subprocess
import sys
from collections.abc import Callable, Iterator
from datetime import UTC
from pathlib import Path

import pytest

from evidence_loop.traces.feedback.feedback import FeedbackEntry, FeedbackLog, latest
from evidence_loop.traces.feedback.feedback_chain import check_chain, check_log
from evidence_loop.traces.feedback.feedback_folder import FolderFeedback
from evidence_loop.traces.feedback.feedback_pg import PgFeedback

ROOT = Path(__file__).resolve().parents[2]
APPEND = """
import sys
from evidence_loop.traces.feedback.feedback import FeedbackEntry
from evidence_loop.traces.feedback.feedback_folder import FolderFeedback
log = FolderFeedback(sys.argv[1])
for n in range(int(sys.argv[2])):
    log.append(FeedbackEntry(f"run-{sys.argv[3]}-{n}", "h" * 64, "correct", "2026-03-01T08:00:00Z"))
"""
Row = tuple[str, str]  # (the UTC day a record is filed under, its line)


def entry(run_id: str, verdict: str = "correct", day: str = "2026-03-01") -> FeedbackEntry:
    return FeedbackEntry(run_id, "f" * 64, verdict, f"{day}T08:00:00Z", "reviewer")  # type: ignore[arg-type]


class Backend:
    """A feedback log, and its records as a tamperer sees them: lines filed under days."""

    def __init__(self, log: FeedbackLog, rows: Callable[[], list[Row]], put: Callable[[list[Row]], None]):
        self.log, self.rows, self.put = log, rows, put


def folder_backend(root: Path) -> Backend:
    def rows() -> list[Row]:
        return [
            (journal.stem, line)
            for journal in sorted(root.glob("*.journal"))
            for line in journal.read_text(encoding="utf-8").splitlines()
        ]

    def put(kept: list[Row]) -> None:
        for journal in root.glob("*.journal"):
            journal.unlink()
        for day, line in kept:
            with (root / f"{day}.journal").open("a", encoding="utf-8") as out:
                out.write(line + "\n")

    return Backend(FolderFeedback(root), rows, put)


def pg_backend(url: str) -> Backend:
    import psycopg

    def rows() -> list[Row]:
        with psycopg.connect(url) as conn:
            found = conn.execute("SELECT created_at, line FROM feedback_records ORDER BY seq").fetchall()
        return [(created.astimezone(UTC).date().isoformat(), line) for created, line in found]

    def put(kept: list[Row]) -> None:  # behind the append-only trigger, as a superuser could
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("ALTER TABLE feedback_records DISABLE TRIGGER feedback_records_append_only")
            conn.execute("DELETE FROM feedback_records")
            for seq, (day, line) in enumerate(kept, 1):
                conn.execute(
                    "INSERT INTO feedback_records (seq, run_id, created_at, line) VALUES (%s, 'r', %s, %s)",
                    (seq, f"{day}T08:00:00Z", line),
                )

    return Backend(PgFeedback(url), rows, put)


@pytest.fixture(params=["folder", pytest.param("postgresql", marks=pytest.mark.postgres)])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    if request.param == "folder":
        yield folder_backend(tmp_path / "feedback")
    else:
        yield pg_backend(request.getfixturevalue("pg_url"))


def five(log: FeedbackLog) -> None:
    for n in range(5):
        log.append(entry(f"r{n}", "correct" if n % 2 else "should_have_refused"))


TAMPERINGS: dict[str, tuple[Callable[[list[Row]], list[Row]], int, str]] = {
    "edit": (
        lambda rows: [rows[0], (rows[1][0], rows[1][1].replace('"correct"', '"wrong_evidence"')), *rows[2:]],
        2,
        "record 2 was changed after it was written",
    ),
    "drop first": (lambda rows: rows[1:], 1, "record 1 is missing"),
    "drop middle": (lambda rows: rows[:2] + rows[3:], 3, "record 3 is missing"),
    "drop last": (lambda rows: rows[:-1], 5, "record 5, the last one the log's tail anchor names, is gone"),
    "reorder": (lambda rows: [rows[0], rows[2], rows[1], *rows[3:]], 2, "record 2 is missing"),
    "forge a later day": (
        lambda rows: [*rows[:-1], ("2026-03-09", rows[-1][1])],
        5,
        "record 5 was posted on 2026-03-01 but is filed under 2026-03-09",
    ),
}


def test_an_untouched_log_verifies_with_its_tail_anchored(backend: Backend) -> None:
    five(backend.log)

    chain = check_log(backend.log.read_log())

    assert (chain.ok, chain.records, chain.anchored, chain.unanchored) == (True, 5, 5, 0)
    assert chain.summary().endswith("its tail is anchored at record 5")


@pytest.mark.parametrize("tampering", TAMPERINGS)
def test_every_kind_of_tampering_fails_the_chain_at_its_record(backend: Backend, tampering: str) -> None:
    five(backend.log)
    change, seq, reason = TAMPERINGS[tampering]
    backend.put(change(backend.rows()))

    chain = check_log(backend.log.read_log())

    assert (chain.ok, chain.first_bad_seq) == (False, seq) and reason in str(chain.reason)


def test_an_append_after_a_dropped_last_record_keeps_its_gap(backend: Backend) -> None:
    five(backend.log)
    backend.put(backend.rows()[:-1])

    backend.log.append(entry("r5"))

    chain = check_log(backend.log.read_log())
    assert (chain.ok, chain.first_bad_seq) == (False, 5) and "record 5 is missing" in str(chain.reason)


def test_a_record_that_no_longer_reads_is_reported_not_skipped_in_silence(
    backend: Backend, evloop_caplog: pytest.LogCaptureFixture
) -> None:
    five(backend.log)
    rows = backend.rows()
    unreadable = rows[1][1].replace('"verdict":"correct"', '"verdict":"lgtm"')
    backend.put([rows[0], (rows[1][0], unreadable), *rows[2:]])

    with evloop_caplog.at_level(logging.WARNING, logger="evidence_loop.traces.feedback.feedback"):
        records = backend.log.records()
    chain = check_log(backend.log.read_log())

    assert [r.seq for r in records] == [1, 3, 4, 5] and "holds no record" in evloop_caplog.text
    assert (chain.ok, chain.first_bad_seq) == (False, 2) and "holds no record" in str(chain.reason)


def test_a_log_written_before_the_anchor_verifies_and_says_its_tail_is_not_anchored(tmp_path: Path) -> None:
    log = FolderFeedback(tmp_path / "feedback")
    five(log)
    (tmp_path / "feedback" / "anchor").unlink()  # what the tree before the anchor left

    chain = check_log(log.read_log())

    assert (chain.ok, chain.records, chain.anchored) == (True, 5, None)
    assert "its tail is not anchored" in chain.summary()


def test_an_old_log_is_anchored_by_its_next_append(tmp_path: Path) -> None:
    log = FolderFeedback(tmp_path / "feedback")
    five(log)
    (tmp_path / "feedback" / "anchor").unlink()

    log.append(entry("r5"))

    chain = check_log(log.read_log())
    assert (chain.ok, chain.records, chain.anchored) == (True, 6, 6)


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

    chain = check_log(FolderFeedback(tmp_path / "feedback").read_log())
    assert (chain.ok, chain.records, chain.anchored) == (True, 45, 45)


def test_a_torn_last_line_is_reported_and_the_next_record_starts_on_its_own_line(tmp_path: Path) -> None:
    log = FolderFeedback(tmp_path / "feedback")
    log.append(entry("r1"))
    journal = tmp_path / "feedback" / "2026-03-01.journal"
    journal.write_bytes(journal.read_bytes() + b'{"type":"feedback","seq":2,"ru')

    log.append(entry("r2"))

    chain = check_log(log.read_log())
    assert [r.run_id for r in log.records()] == ["r1", "r2"] and chain.ok
    assert chain.notes == (
        "2026-03-01.journal line 2 holds no record; the chain continues across it (a write cut short: "
        "no record lost)",
    )


def test_a_changed_or_dropped_record_breaks_the_chain(tmp_path: Path) -> None:
    log = FolderFeedback(tmp_path / "feedback")
    for n in range(3):
        log.append(entry(f"r{n}"))
    records = log.records()

    changed = [records[0], records[1].model_copy(update={"verdict": "wrong_evidence"}), records[2]]
    assert check_chain(changed).first_bad_seq == 2
    assert check_chain([records[0], records[2]]).first_bad_seq == 2


def test_only_the_part_from_a_record_on_must_verify_when_asked(tmp_path: Path) -> None:
    log = FolderFeedback(tmp_path / "feedback")
    five(log)
    backend = folder_backend(tmp_path / "feedback")
    backend.put(TAMPERINGS["edit"][0](backend.rows()))
    read = log.read_log()

    assert not check_log(read).ok and check_log(read, 2).ok and not check_log(read, 1).ok


def test_an_empty_log_says_so(tmp_path: Path) -> None:
    chain = check_log(FolderFeedback(tmp_path / "feedback").read_log())

    assert (chain.ok, chain.summary()) == (True, "the feedback log is empty")
