"""Hostile but fair input at the command line: one line on stderr with a hint, exit 1 or 2, no traceback."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evidence_loop.agent.doors.cli.app import _report, main
from evidence_loop.tools.errors import IndexStateError, StoreStateError

Capture = pytest.CaptureFixture[str]
NOT_UTF8 = os.fsdecode(b"\xff warranty")  # what Python makes of the argv bytes b"\xff warranty"


def run(capsys: Capture, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_line(err: str, *needles: str) -> None:
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith("evloop: error: ") and "(hint: " in err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in err, err


@pytest.fixture
def index(capsys: Capture, tmp_path: Path) -> Path:
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "warranty.md").write_text("# Warranty\n\nThe LM-S10 warranty is 3 years.\n", encoding="utf-8")
    assert run(capsys, "ingest", str(kb), "--index", str(tmp_path / "index"))[0] == 0
    return tmp_path / "index"


# --- text that is not UTF-8 ----------------------------------------------------------------------------


def test_an_index_error_that_names_its_repair_gets_no_second_generic_one(capsys: Capture) -> None:
    _report(
        IndexStateError(
            "the vectors are damaged; delete ix and ingest again: `evloop ingest PATH --index ix`"
        )
    )
    _report(IndexStateError("the vectors cover 3 of 4 units"))

    named, bare = capsys.readouterr().err.splitlines()
    assert "hint:" not in named and named.endswith("`evloop ingest PATH --index ix`")
    assert bare.endswith(
        "(hint: `evloop ingest PATH` or `evloop demo` creates an index; --index chooses the folder)"
    )


def test_a_database_store_error_names_the_database_repair_not_a_folder(capsys: Capture) -> None:
    code = _report(
        StoreStateError("the store at postgresql:///kb failed: relation trace_runs does not exist")
    )

    err = capsys.readouterr().err
    assert code == 1
    assert_one_line(err, "(hint: `evloop migrate --store URL`")
    assert "--index" not in err


@pytest.mark.parametrize(
    "argv",
    [
        ["ask", NOT_UTF8],
        ["search", NOT_UTF8],
        ["ask", "warranty?", "--groups", NOT_UTF8],
        ["delete", NOT_UTF8],
        ["trace", "show", NOT_UTF8],
    ],
    ids=["ask", "search", "groups", "delete", "trace show"],
)
def test_an_argument_that_is_not_utf8_is_refused_showing_the_byte(
    capsys: Capture, index: Path, argv: list[str]
) -> None:
    code, out, err = run(capsys, *argv, "--index", str(index))

    assert (code, out) == (2, "")
    assert_one_line(err, "\\xff warranty", "not valid UTF-8")


def test_a_question_typed_in_a_latin1_terminal_is_refused_by_the_installed_command(index: Path) -> None:
    evloop = Path(sys.executable).with_name("evloop")

    done = subprocess.run(
        [evloop, "ask", b"caf\xe9 warranty", "--index", index], capture_output=True, timeout=120, check=False
    )

    assert done.returncode == 2
    assert_one_line(done.stderr.decode("utf-8"), "caf\\xe9 warranty")


def test_a_file_name_that_is_not_utf8_in_a_folder_is_refused_and_nothing_written(
    capsys: Capture, tmp_path: Path
) -> None:
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "ok.md").write_text("# Fine\n\nText.\n", encoding="utf-8")
    (kb / os.fsdecode(b"\xff.md")).write_text("# Bad name\n\nText.\n", encoding="utf-8")

    code, _, err = run(capsys, "ingest", str(kb), "--index", str(tmp_path / "index"))

    assert code == 2
    assert_one_line(err, "not valid UTF-8", "rename the file")
    assert not (tmp_path / "index").exists()


def test_an_index_path_that_is_not_utf8_prints_as_escapes_on_a_strict_terminal(
    capsys: Capture, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "page.md").write_text("# Page\n\nText.\n", encoding="utf-8")
    strict = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict")
    monkeypatch.setattr(sys, "stdout", strict)

    code = main(["ingest", str(tmp_path / "page.md"), "--index", str(tmp_path / os.fsdecode(b"ix\xff"))])

    strict.flush()
    assert code == 0
    assert strict.buffer.getvalue().decode("utf-8").rstrip().endswith("ix\\udcff")  # type: ignore[attr-defined]


# --- links ----------------------------------------------------------------------------------------------


def test_a_symlink_loop_is_refused_in_one_line(capsys: Capture, tmp_path: Path) -> None:
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "a.md").symlink_to("b.md")
    (kb / "b.md").symlink_to("a.md")

    code, _, err = run(capsys, "ingest", str(kb), "--index", str(tmp_path / "index"))

    assert code == 2
    assert_one_line(err, "a.md", "symbolic links")
    assert "[Errno" not in err


def test_a_link_out_of_the_folder_is_skipped_with_a_warning_unless_followed(
    capsys: Capture, tmp_path: Path
) -> None:
    (tmp_path / "passwd").write_text("root:x:0:0:root:/root:/bin/bash\n", encoding="utf-8")
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "page.md").write_text("# Page\n\nText.\n", encoding="utf-8")
    (kb / "passwd.txt").symlink_to(tmp_path / "passwd")
    index = tmp_path / "index"

    code, out, err = run(capsys, "ingest", str(kb), "--index", str(index))
    _, docs, _ = run(capsys, "docs", "--index", str(index), "--json")
    followed, _, _ = run(capsys, "ingest", str(kb), "--index", str(index), "--follow-symlinks")
    _, docs_after, _ = run(capsys, "docs", "--index", str(index), "--json")

    assert code == 0 and "1 skipped:" in out
    assert err.startswith("evloop: warning: ") and "passwd.txt" in err and "--follow-symlinks" in err
    assert [json.loads(line)["doc_id"] for line in docs.splitlines()] == ["page"]
    assert followed == 0
    assert [json.loads(line)["doc_id"] for line in docs_after.splitlines()] == ["page", "passwd"]


# --- unsafe doc ids --------------------------------------------------------------------------------------


@pytest.mark.parametrize("doc_id", ["a\u0000b", "a\nb", "evil\r\ningested 99 documents"])
def test_a_corpus_record_with_a_control_character_in_its_doc_id_is_refused(
    capsys: Capture, tmp_path: Path, doc_id: str
) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(json.dumps({"doc_id": doc_id, "text": "Some text."}) + "\n", encoding="utf-8")

    code, _, err = run(capsys, "ingest", str(corpus), "--index", str(tmp_path / "index"))

    assert code == 2
    assert_one_line(err, "corpus.jsonl:1", "control character")
    assert not (tmp_path / "index").exists()


@pytest.mark.parametrize("doc_id", ["a\nb", "a\tb", "\x1b[2J"])
def test_deleting_a_doc_id_with_a_control_character_is_refused(
    capsys: Capture, index: Path, doc_id: str
) -> None:
    code, out, err = run(capsys, "delete", doc_id, "--index", str(index))

    assert (code, out) == (2, "")
    assert_one_line(err, "control character")


def test_a_lone_surrogate_in_a_corpus_record_is_refused_in_one_line(capsys: Capture, tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"doc_id": "a", "text": "lone \\ud800 surrogate"}\n', encoding="utf-8")

    code, _, err = run(capsys, "ingest", str(corpus), "--index", str(tmp_path / "index"))

    assert code == 2
    assert_one_line(err, "'a'", "lone surrogate U+D800")


# --- numbers and other errors -------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["inf", "nan", "-0"])
def test_max_mb_must_be_a_positive_finite_number(capsys: Capture, tmp_path: Path, value: str) -> None:
    (tmp_path / "page.md").write_text("# Page\n\nText.\n", encoding="utf-8")

    code, _, err = run(
        capsys, "ingest", str(tmp_path / "page.md"), "--index", str(tmp_path / "ix"), "--max-mb", value
    )

    assert code == 2
    assert_one_line(err, "--max-mb")


def test_an_os_error_is_one_line_with_a_hint(capsys: Capture, index: Path, tmp_path: Path) -> None:
    questions = tmp_path / "questions.jsonl"
    questions.write_text(json.dumps({"question": "warranty?"}) + "\n", encoding="utf-8")

    code, _, err = run(capsys, "batch", str(questions), "--out", str(tmp_path), "--index", str(index))

    assert code == 1
    # the warning that the lexical rule decides (the tests run without an embedder) is its own line
    warned = [line for line in err.splitlines() if line.startswith("evloop: warning:")]
    assert [line for line in warned if "lexical rule" not in line] == []
    assert_one_line("\n".join(line for line in err.splitlines() if line not in warned), "Is a directory")


def test_an_index_error_written_over_several_lines_is_printed_as_one(capsys: Capture) -> None:
    code = _report(IndexStateError("store.sqlite3 is damaged:\nfile is not a database\n  (page 3)"))

    err = capsys.readouterr().err
    assert code == 1
    assert_one_line(err, "damaged: file is not a database (page 3)", "evloop ingest")


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("--port", "99999"),
        ("--port", "-5"),
        ("--workers", "40000"),
        ("--timeout", "nan"),
        ("--max-body-mb", "inf"),
    ],
)
def test_serve_refuses_an_impossible_setting_before_it_listens(
    capsys: Capture, tmp_path: Path, option: str, value: str
) -> None:
    code, out, err = run(capsys, "serve", "--index", str(tmp_path / "index"), option, value)

    assert (code, out) == (2, "")
    assert_one_line(err, option)
    assert not (tmp_path / "index").exists()


@pytest.mark.parametrize(
    ("argv", "code", "needle"),
    [
        (["search", "warranty", "-k=--"], 2, "invalid int value: '--'"),
        (["search", "warranty", "-k--"], 2, "invalid int value: '--'"),
        (["trace", "list", "--since=--"], 2, "--since '--' is not an ISO date"),
        (["ask", "warranty?", "--policy=--"], 2, "expected KEY=VALUE"),
    ],
)
def test_an_option_whose_value_is_double_dash_gets_that_value(
    capsys: Capture, index: Path, argv: list[str], code: int, needle: str
) -> None:
    got, _, err = run(capsys, *argv, "--index", str(index))

    assert got == code
    assert needle in err and "Traceback" not in err
