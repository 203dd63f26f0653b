"""Index damage at the front doors: `evloop check` says what is damaged, `evloop reindex` repairs the
index files, and a damaged database is one error line (CLI) or a 503 problem (HTTP), never a traceback."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from evidence_loop.agent.doors.cli.app import main
from evidence_loop.agent.service import Service
from tests.agent.api_support import PUBLIC, api_client
from tests.damage_support import flip_byte, flip_units_page

Capture = pytest.CaptureFixture[str]
NPY = Path("bm25") / "gen-000001" / "data.csc.index.npy"


def run(capsys: Capture, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_check_says_ok_and_exits_0_when_nothing_is_damaged(capsys: Capture, index: Path) -> None:
    code, out, err = run(capsys, "check", "--index", str(index))

    assert (code, err) == (0, "")
    assert out.startswith("ok: the database and ") and out.rstrip().endswith(f"generation 1 in {index}")


def test_check_prints_one_line_per_problem_and_exits_1_with_the_count(capsys: Capture, index: Path) -> None:
    flip_byte(index / NPY)
    (index / "bm25" / "gen-000001" / "params.index.json").unlink()

    code, out, err = run(capsys, "check", "--index", str(index))

    assert code == 1
    assert out.splitlines() == [
        "bm25/gen-000001/data.csc.index.npy: sha256 differs from the manifest: same size, changed bytes "
        "(repair: evloop reindex)",
        "bm25/gen-000001/params.index.json: missing (repair: evloop reindex)",
    ]
    assert err.startswith(f"evloop: error: 2 problems in {index} (hint: `evloop reindex --index {index}`")


def test_check_help_says_what_it_checks_and_what_the_exit_code_means(capsys: Capture) -> None:
    code, out, _ = run(capsys, "check", "--help")

    assert code == 0
    for phrase in ("integrity_check", "manifest.json", "exits 1 with the count", "exits 0", "evloop reindex"):
        assert phrase in " ".join(out.split())


def test_reindex_repairs_a_bm25_folder_replaced_by_a_file(capsys: Capture, index: Path) -> None:
    _, before, _ = run(capsys, "search", "LM-S10 保修", "--index", str(index), "--json")
    shutil.rmtree(index / "bm25")
    (index / "bm25").write_text("not a folder", encoding="utf-8")

    assert run(capsys, "reindex", "--index", str(index))[0] == 0
    assert run(capsys, "check", "--index", str(index))[0] == 0
    assert run(capsys, "search", "LM-S10 保修", "--index", str(index), "--json") == (0, before, "")


def test_a_same_size_byte_flip_in_an_npy_file_stops_search_with_the_reindex_hint(
    capsys: Capture, index: Path
) -> None:
    flip_byte(index / NPY)

    code, out, err = run(capsys, "search", "LM-S10 保修", "--index", str(index))

    assert (code, out, len(err.splitlines())) == (1, "", 1)
    assert "sha256" in err and f"evloop reindex --index {index}" in err


@pytest.mark.parametrize(
    "argv",
    [
        ("docs",),
        ("search", "LM-S10 保修"),
        ("ask", "LM-S10 的整机保修期是多久？"),
        ("reindex",),
        ("delete", "returns-en"),
    ],
)
def test_a_flipped_byte_in_the_database_is_one_error_line_and_exit_1(
    capsys: Capture, index: Path, argv: tuple[str, ...]
) -> None:
    flip_units_page(index / "store.sqlite3")

    code, out, err = run(capsys, *argv, "--index", str(index))

    assert (code, out, len(err.splitlines())) == (1, "", 1)
    assert err.startswith("evloop: error: the database ") and "malformed" in err and "evloop check" in err


def test_a_flipped_byte_in_the_database_prints_no_traceback_from_the_real_command(index: Path) -> None:
    flip_units_page(index / "store.sqlite3")
    env = {**os.environ, "OMP_NUM_THREADS": "1"}

    done = subprocess.run(
        [sys.executable, "-m", "evidence_loop.agent.doors.cli.app", "search", "保修", "--index", str(index)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )

    assert (done.returncode, done.stdout, len(done.stderr.splitlines())) == (1, "", 1)
    assert "Traceback" not in done.stderr


def test_check_reports_a_damaged_database_with_the_restore_hint(capsys: Capture, index: Path) -> None:
    flip_units_page(index / "store.sqlite3")

    code, out, err = run(capsys, "check", "--index", str(index))

    assert code == 1
    assert out.startswith("store.sqlite3: ") and "(repair: evloop ingest)" in out
    assert "restore it from your sources" in err


def test_the_api_answers_a_damaged_database_with_503_problems_not_500(index: Path) -> None:
    flip_units_page(index / "store.sqlite3")
    service = Service.open(index)
    try:
        client = api_client(service)
        ask = client.post("/v1/ask", json={"question": "LM-S10 保修多久？"}, headers=PUBLIC.headers)
        ready = client.get("/readyz")
    finally:
        service.close()

    assert (ask.status_code, ready.status_code) == (503, 503)
    assert ask.json()["type"] == "urn:evloop:problem:index-unavailable"
    assert "sqlite3" not in ask.text
