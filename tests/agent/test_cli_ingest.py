"""The `evloop` front door for ingestion and search: ingest, docs, search round trips through `main`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evidence_loop.agent.doors.cli.app import COMMANDS, main
from evidence_loop.agent.doors.cli.common import parse_groups, resolve_index

Capture = pytest.CaptureFixture[str]

POLICY = """# 课程服务政策

## 二、改期

本节规定仅适用于尚未开课的常规班报名。学员可免费改期一次。开课后如需改期，按照《在读学员改期规则》办理。
"""
WARRANTY = """# Device Warranty

The LM-S10 is covered for 3 years from delivery.
"""


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    folder = tmp_path / "kb"
    folder.mkdir()
    (folder / "policy.md").write_text(POLICY, encoding="utf-8")
    (folder / "warranty.md").write_text(WARRANTY, encoding="utf-8")
    return folder


def run(capsys: Capture, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def search_json(capsys: Capture, index: Path, query: str, *extra: str) -> list[dict[str, object]]:
    code, out, err = run(capsys, "search", query, "--index", str(index), "--json", *extra)
    assert (code, err) == (0, "")
    return [json.loads(line) for line in out.splitlines()]


# --- the round trip ---------------------------------------------------------------------------------


def test_ingest_prints_one_summary_line_and_creates_the_index_folder(
    capsys: Capture, kb: Path, tmp_path: Path
) -> None:
    index = tmp_path / "new" / "index"

    code, out, err = run(capsys, "ingest", str(kb), "--index", str(index))

    assert (code, err) == (0, "")
    assert out.startswith("2 added, 0 changed, 0 unchanged, 0 retired, 0 skipped: 2 new versions, ")
    assert out.rstrip().endswith(f"-> {index}")
    assert index.is_dir()


def test_docs_lists_what_was_ingested(capsys: Capture, kb: Path, tmp_path: Path) -> None:
    index = tmp_path / "index"
    run(capsys, "ingest", str(kb), "--index", str(index), "--acl", "staff")

    code, out, _ = run(capsys, "docs", "--index", str(index), "--json")

    rows = [json.loads(line) for line in out.splitlines()]
    assert code == 0
    assert [(r["doc_id"], r["title"], r["current_version"], r["versions"], r["acl"]) for r in rows] == [
        ("policy", "课程服务政策", "1", ["1"], ["staff"]),
        ("warranty", "Device Warranty", "1", ["1"], ["staff"]),
    ]
    assert all(isinstance(r["units"], int) and r["units"] > 0 for r in rows)


def test_docs_prints_a_table_for_people(capsys: Capture, kb: Path, tmp_path: Path) -> None:
    index = tmp_path / "index"
    run(capsys, "ingest", str(kb), "--index", str(index))

    _, out, _ = run(capsys, "docs", "--index", str(index))

    header, *rows = out.splitlines()
    assert header.split() == ["doc_id", "current", "versions", "units", "acl", "title"]
    assert [row.split()[0] for row in rows] == ["policy", "warranty"]


def test_search_json_hits_point_at_exact_offsets_of_the_ingested_text(
    capsys: Capture, kb: Path, tmp_path: Path
) -> None:
    index = tmp_path / "index"
    run(capsys, "ingest", str(kb), "--index", str(index))

    hits = search_json(capsys, index, "LM-S10 warranty years")

    assert hits, "expected at least one hit"
    top = hits[0]
    assert set(top) == {"doc_id", "version", "section", "kind", "start", "end", "text", "score"}
    assert (top["doc_id"], top["version"]) == ("warranty", "1")
    start, end = top["start"], top["end"]
    assert isinstance(start, int) and isinstance(end, int)
    assert WARRANTY[start:end] == top["text"]
    assert isinstance(top["section"], list)


def test_search_json_orders_hits_best_first_and_honours_k(capsys: Capture, kb: Path, tmp_path: Path) -> None:
    index = tmp_path / "index"
    run(capsys, "ingest", str(kb), "--index", str(index))

    hits = search_json(capsys, index, "改期 warranty", "-k", "2")

    scores = [float(str(h["score"])) for h in hits]
    assert len(hits) == 2
    assert scores == sorted(scores, reverse=True)


def test_search_for_people_shows_rank_score_doc_version_and_offsets(
    capsys: Capture, kb: Path, tmp_path: Path
) -> None:
    index = tmp_path / "index"
    run(capsys, "ingest", str(kb), "--index", str(index))

    code, out, _ = run(capsys, "search", "免费改期", "--index", str(index), "-k", "1")

    assert code == 0
    line = out.splitlines()[0]
    assert line.lstrip().startswith("1. ")
    assert "policy@1" in line
    assert "免费改期一次" in line
    assert "[" in line and ":" in line.split("[", 1)[1]


def test_a_restricted_document_is_found_only_by_a_caller_in_its_group(
    capsys: Capture, kb: Path, tmp_path: Path
) -> None:
    index = tmp_path / "index"
    run(capsys, "ingest", str(kb / "warranty.md"), "--index", str(index), "--acl", "staff")

    public = search_json(capsys, index, "LM-S10 warranty")
    staff = search_json(capsys, index, "LM-S10 warranty", "--groups", "sales,staff")

    assert (public, {h["doc_id"] for h in staff}) == ([], {"warranty"})


def test_reingesting_the_same_files_changes_nothing(capsys: Capture, kb: Path, tmp_path: Path) -> None:
    index = tmp_path / "index"
    run(capsys, "ingest", str(kb), "--index", str(index))

    code, out, _ = run(capsys, "ingest", str(kb), "--index", str(index))

    assert code == 0
    assert out.startswith("0 added, 0 changed, 2 unchanged, 0 retired, 0 skipped: 0 new versions, 0 units, ")


def test_a_new_version_becomes_current_and_the_old_one_stays_listed(
    capsys: Capture, kb: Path, tmp_path: Path
) -> None:
    index = tmp_path / "index"
    run(capsys, "ingest", str(kb / "warranty.md"), "--index", str(index))
    (kb / "warranty.md").write_text(WARRANTY.replace("3 years", "4 years"), encoding="utf-8")
    run(capsys, "ingest", str(kb / "warranty.md"), "--index", str(index), "--version", "2")

    _, out, _ = run(capsys, "docs", "--index", str(index), "--json")

    (row,) = [json.loads(line) for line in out.splitlines()]
    assert (row["current_version"], row["versions"]) == ("2", ["1", "2"])


def test_delete_takes_a_document_out_of_search(capsys: Capture, kb: Path, tmp_path: Path) -> None:
    index = tmp_path / "index"
    run(capsys, "ingest", str(kb), "--index", str(index))

    code, out, _ = run(capsys, "delete", "warranty", "--index", str(index))

    assert (code, out.strip()) == (0, f"deleted warranty from {index}")
    assert search_json(capsys, index, "LM-S10 warranty years") == []


def test_an_empty_file_is_reported_as_skipped(capsys: Capture, kb: Path, tmp_path: Path) -> None:
    (kb / "blank.txt").write_text("\n  \n", encoding="utf-8")

    code, out, err = run(capsys, "ingest", str(kb), "--index", str(tmp_path / "index"))

    assert code == 0
    assert "0 unchanged, 0 retired, 1 skipped:" in out
    assert err.startswith("evloop: warning: ") and "blank.txt" in err


# --- bad input: exit 2, one clear line, nothing written -----------------------------------------------


def assert_refused(code: int, err: str, index: Path, *needles: str) -> None:
    assert code == 2
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith("evloop: error: ")
    assert "Traceback" not in err
    for needle in needles:
        assert needle in err
    assert not index.exists()


def test_a_malformed_jsonl_line_is_refused_with_file_and_line_and_nothing_is_written(
    capsys: Capture, kb: Path, tmp_path: Path
) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"doc_id": "a", "text": "fine"}\n{"doc_id": "b", "text": \n', encoding="utf-8")
    index = tmp_path / "index"

    code, out, err = run(capsys, "ingest", str(kb), str(corpus), "--index", str(index))

    assert out == ""
    assert_refused(code, err, index, f"{corpus}:2", "hint:")


def test_a_record_missing_a_field_is_refused_naming_the_field(capsys: Capture, tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"doc_id": "a"}\n', encoding="utf-8")
    index = tmp_path / "index"

    code, _, err = run(capsys, "ingest", str(corpus), "--index", str(index))

    assert_refused(code, err, index, f"{corpus}:1", "'text'")


def test_an_unsupported_file_is_refused(capsys: Capture, tmp_path: Path) -> None:
    pdf = tmp_path / "manual.pdf"
    pdf.write_bytes(b"%PDF-1.7")
    index = tmp_path / "index"

    code, _, err = run(capsys, "ingest", str(pdf), "--index", str(index))

    assert_refused(code, err, index, "manual.pdf", ".md")


def test_undecodable_bytes_are_refused_naming_the_file(capsys: Capture, tmp_path: Path) -> None:
    page = tmp_path / "gbk.txt"
    page.write_bytes("保修政策".encode("gbk"))
    index = tmp_path / "index"

    code, _, err = run(capsys, "ingest", str(page), "--index", str(index))

    assert_refused(code, err, index, "gbk.txt", "UTF-8")


def test_a_document_over_max_mb_is_refused(capsys: Capture, kb: Path, tmp_path: Path) -> None:
    index = tmp_path / "index"

    code, _, err = run(capsys, "ingest", str(kb), "--index", str(index), "--max-mb", "0.0001")

    assert_refused(code, err, index, "--max-mb")


def test_a_folder_without_documents_is_refused(capsys: Capture, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    index = tmp_path / "index"

    code, _, err = run(capsys, "ingest", str(empty), "--index", str(index))

    assert_refused(code, err, index, "no documents")


def test_changed_text_becomes_the_next_version_and_the_old_text_stays_stored(
    capsys: Capture, kb: Path, tmp_path: Path
) -> None:
    index = tmp_path / "index"
    run(capsys, "ingest", str(kb), "--index", str(index))
    (kb / "warranty.md").write_text(WARRANTY.replace("3 years", "4 years"), encoding="utf-8")

    code, out, err = run(capsys, "ingest", str(kb), "--index", str(index))

    hits = search_json(capsys, index, "LM-S10 covered")
    assert (code, err) == (0, "")
    assert out.startswith("0 added, 1 changed, 1 unchanged, 0 retired, 0 skipped: 1 new version, ")
    assert (hits[0]["version"], "4 years" in str(hits[0]["text"])) == ("2", True)


def test_changed_text_under_a_version_given_again_is_refused_and_the_stored_text_kept(
    capsys: Capture, kb: Path, tmp_path: Path
) -> None:
    index = tmp_path / "index"
    run(capsys, "ingest", str(kb), "--index", str(index), "--version", "1")
    (kb / "warranty.md").write_text(WARRANTY.replace("3 years", "4 years"), encoding="utf-8")

    code, _, err = run(capsys, "ingest", str(kb), "--index", str(index), "--version", "1")

    texts = [str(h["text"]) for h in search_json(capsys, index, "LM-S10 covered")]
    assert code == 2
    assert err.startswith("evloop: error: ") and "--replace" in err
    assert "3 years" in texts[0]


def test_replace_overwrites_changed_text_under_the_same_version(
    capsys: Capture, kb: Path, tmp_path: Path
) -> None:
    index = tmp_path / "index"
    run(capsys, "ingest", str(kb), "--index", str(index))
    (kb / "warranty.md").write_text(WARRANTY.replace("3 years", "4 years"), encoding="utf-8")

    code, _, _ = run(capsys, "ingest", str(kb), "--index", str(index), "--replace")

    texts = [str(h["text"]) for h in search_json(capsys, index, "LM-S10 covered")]
    assert code == 0
    assert "4 years" in texts[0]


# --- other errors: exit 1 with a hint ------------------------------------------------------------------


def test_searching_a_missing_index_is_an_error_naming_its_one_repair(capsys: Capture, tmp_path: Path) -> None:
    nowhere = tmp_path / "nowhere"
    code, out, err = run(capsys, "search", "保修", "--index", str(nowhere))

    assert (code, out) == (1, "")
    assert (
        err
        == f"evloop: error: no index at {nowhere}; create one with `evloop ingest PATH --index {nowhere}`\n"
    )
    assert not nowhere.exists()


def test_deleting_an_unknown_document_is_an_error_with_a_hint(
    capsys: Capture, kb: Path, tmp_path: Path
) -> None:
    index = tmp_path / "index"
    run(capsys, "ingest", str(kb), "--index", str(index))

    code, _, err = run(capsys, "delete", "no-such-doc", "--index", str(index))

    assert code == 1
    assert "no-such-doc" in err and "evloop docs" in err


def test_a_non_positive_k_is_refused(capsys: Capture, kb: Path, tmp_path: Path) -> None:
    index = tmp_path / "index"
    run(capsys, "ingest", str(kb), "--index", str(index))

    code, _, err = run(capsys, "search", "保修", "--index", str(index), "-k", "0")

    assert (code, err.startswith("evloop: error: -k must be positive")) == (2, True)


# --- index folder resolution, groups, help -------------------------------------------------------------


def test_the_index_option_wins_over_the_environment() -> None:
    assert resolve_index(Path("/a"), {"EVLOOP_INDEX": "/b"}) == Path("/a")


def test_the_environment_wins_over_the_default() -> None:
    assert resolve_index(None, {"EVLOOP_INDEX": "/b"}) == Path("/b")


def test_the_default_index_is_dot_evloop_in_the_working_directory() -> None:
    assert resolve_index(None, {"EVLOOP_INDEX": "  "}) == Path(".evloop")


def test_ingest_without_index_option_writes_to_the_environment_folder(
    capsys: Capture, kb: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVLOOP_INDEX", str(tmp_path / "from-env"))

    code, _, _ = run(capsys, "ingest", str(kb))

    assert (code, (tmp_path / "from-env").is_dir()) == (0, True)


@pytest.mark.parametrize(
    ("value", "groups"),
    [("staff", ("staff",)), (" staff , sales ,,", ("staff", "sales")), ("a,a,b", ("a", "b")), ("", ())],
)
def test_group_lists_are_comma_separated(value: str, groups: tuple[str, ...]) -> None:
    assert parse_groups(value) == groups


COMMAND_NAMES = [command.name for command in COMMANDS]


@pytest.mark.parametrize("command", COMMAND_NAMES)
def test_every_command_answers_help_with_options_and_examples(capsys: Capture, command: str) -> None:
    code, out, _ = run(capsys, command, "--help")

    assert code == 0
    assert out.startswith(f"usage: evloop {command}")
    assert "options:" in out
    assert "example" in out
    # it points at what a user has (a command, a flag), not at the project's sources or eval notes
    assert not any(name in out for name in ("FORMAT.md", "policies/", "../shared"))


def test_the_top_level_help_lists_every_command(capsys: Capture) -> None:
    code, out, _ = run(capsys, "--help")

    assert code == 0
    assert all(name in out for name in COMMAND_NAMES)


def test_an_unknown_command_is_a_usage_error(capsys: Capture) -> None:
    code, _, err = run(capsys, "frobnicate")

    assert code == 2
    assert "invalid choice" in err


def test_doc_ids_are_taken_in_nfc_and_docs_shows_what_does_not_print_escaped(
    capsys: Capture, tmp_path: Path
) -> None:
    corpus = tmp_path / "corpus.jsonl"
    records = [
        {"doc_id": "cafe\u0301", "text": "The café opens at nine."},
        {"doc_id": "emoji-\U0001f469\u200d\U0001f4bb", "text": "Laptops are lent for a week."},
    ]
    corpus.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    index = str(tmp_path / "ix")
    assert run(capsys, "ingest", str(corpus), "--index", index)[0] == 0

    table = run(capsys, "docs", "--index", index)[1]
    listed = [
        json.loads(line)["doc_id"] for line in run(capsys, "docs", "--index", index, "--json")[1].splitlines()
    ]
    deleted = run(capsys, "delete", "cafe\u0301", "--index", index)

    assert sorted(listed) == ["caf\u00e9", "emoji-\U0001f469\u200d\U0001f4bb"]
    assert "caf\u00e9 " in table and "emoji-\U0001f469\\u200d\U0001f4bb" in table
    assert deleted[0] == 0
    assert [
        line for line in run(capsys, "docs", "--index", index, "--json")[1].splitlines() if "caf" in line
    ] == []


@pytest.mark.parametrize("doc_id", ["ca\u200bfe", "\ufeffcafe", "c\u0430fe", "\uff43afe"])
def test_a_jsonl_record_under_a_look_alike_id_is_refused_naming_its_line(
    capsys: Capture, tmp_path: Path, doc_id: str
) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(json.dumps({"doc_id": doc_id, "text": "Some text."}) + "\n", encoding="utf-8")

    code, _out, err = run(capsys, "ingest", str(corpus), "--index", str(tmp_path / "ix"))

    assert code != 0 and "corpus.jsonl:1" in err and "doc_id" in err


def test_a_jsonl_record_with_nan_in_its_metadata_is_refused_naming_the_field(
    capsys: Capture, tmp_path: Path
) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(
        '{"doc_id": "odd", "text": "Some text.", "metadata": {"price": NaN}}\n', encoding="utf-8"
    )

    code, _out, err = run(capsys, "ingest", str(corpus), "--index", str(tmp_path / "ix"))

    assert code != 0 and "metadata field 'price' is nan" in err
