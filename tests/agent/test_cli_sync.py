"""`evloop ingest FOLDER` run again after edits: a folder of 20 help articles kept in sync, on both
backends (an index folder, a PostgreSQL database), embedded by a loopback endpoint that counts what
it embeds. Runs recorded before a sync still verify and replay identical after it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evidence_loop.agent.doors.cli.app import main
from evidence_loop.tools.parse import parse_document
from evidence_loop.tools.store.location import Location
from evidence_loop.tools.types import DocumentInput
from tests.fake_embedding_server import FakeEmbeddingServer

Capture = pytest.CaptureFixture[str]
ARTICLES = 20
PROBE = "dimension probe"  # what the OpenAI-compatible client embeds once to learn the dimension


def article(i: int, years: int | None = None) -> str:
    """A help article about one model, with facts no other article states."""
    return (
        f"# Model LM-A{i:02d}\n\n"
        f"The LM-A{i:02d} tablet has a warranty of {years or i + 1} years from delivery.\n"
        f"An LM-A{i:02d} bought online can be returned within {10 + i} days.\n"
    )


def question(i: int) -> str:
    return f"How long is the warranty of the LM-A{i:02d}?"


@pytest.fixture(scope="module")
def embedding_server() -> Iterator[FakeEmbeddingServer]:
    server = FakeEmbeddingServer().start()
    yield server
    server.stop()


@pytest.fixture
def embedded(embedding_server: FakeEmbeddingServer, monkeypatch: pytest.MonkeyPatch) -> FakeEmbeddingServer:
    for name, value in embedding_server.environ.items():
        monkeypatch.setenv(name, value)
    return embedding_server


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    folder = tmp_path / "kb"
    folder.mkdir()
    for i in range(ARTICLES):
        (folder / f"lm-a{i:02d}.md").write_text(article(i), encoding="utf-8")
    return folder


def where(location: Location) -> list[str]:
    return ["--store", location] if isinstance(location, str) else ["--index", str(location)]


def evloop(capsys: Capture, location: Location, *argv: str) -> tuple[int, str, str]:
    code = main([*argv, *where(location)])
    out, err = capsys.readouterr()
    return code, out, err


def ask(capsys: Capture, location: Location, i: int) -> dict[str, Any]:
    code, out, _ = evloop(capsys, location, "ask", question(i), "--json")
    assert code == 0
    outcome: dict[str, Any] = json.loads(out)
    return outcome


def documents(capsys: Capture, location: Location) -> dict[str, tuple[str, list[str]]]:
    _, out, _ = evloop(capsys, location, "docs", "--json")
    rows = [json.loads(line) for line in out.splitlines()]
    return {r["doc_id"]: (r["current_version"], r["versions"]) for r in rows}


def cited(outcome: dict[str, Any]) -> set[str]:
    answer = outcome["answer"] or {"citations": []}
    return {c["doc_id"] for c in answer["citations"]}


def test_an_edit_to_one_file_of_twenty_stores_one_version_and_embeds_only_its_units(
    capsys: Capture, kb: Path, store_location: Location, embedded: FakeEmbeddingServer
) -> None:
    assert evloop(capsys, store_location, "ingest", str(kb))[0] == 0
    before = ask(capsys, store_location, 7)
    (kb / "lm-a07.md").write_text(article(7, years=9), encoding="utf-8")
    sent = len(embedded.passages)

    code, out, _ = evloop(capsys, store_location, "ingest", str(kb))

    edited = parse_document(DocumentInput("lm-a07", article(7, years=9), format="markdown"))
    after = documents(capsys, store_location)
    embedded_now = [text for text in embedded.passages[sent:] if text != PROBE]
    assert (code, embedded_now) == (0, [u.text for u in edited.units])
    assert out.startswith(
        f"0 added, 1 changed, 19 unchanged, 0 retired, 0 skipped: 1 new version, {len(edited.units)} "
    )
    assert after["lm-a07"] == ("2", ["1", "2"])
    assert {doc_id: v for doc_id, v in after.items() if doc_id != "lm-a07"} == {
        f"lm-a{i:02d}": ("1", ["1"]) for i in range(ARTICLES) if i != 7
    }
    assert "9 years" in ask(capsys, store_location, 7)["answer"]["text"]
    replayed = evloop(capsys, store_location, "replay", before["run_id"])
    assert (replayed[0], replayed[1].split()[:2]) == (0, [f"{before['run_id']}:", "identical"])


def test_two_files_deleted_and_synced_with_prune_are_no_longer_answered_and_their_runs_still_verify(
    capsys: Capture, kb: Path, store_location: Location, embedded: FakeEmbeddingServer
) -> None:
    evloop(capsys, store_location, "ingest", str(kb))
    earlier = [ask(capsys, store_location, i) for i in (3, 4)]
    assert all(cited(o) == {f"lm-a{i:02d}"} for o, i in zip(earlier, (3, 4), strict=True))
    (kb / "lm-a03.md").unlink()
    (kb / "lm-a04.md").unlink()

    code, out, _ = evloop(capsys, store_location, "ingest", str(kb), "--prune")

    assert (code, out.split(":")[0]) == (0, "0 added, 0 changed, 18 unchanged, 2 retired, 0 skipped")
    later = [ask(capsys, store_location, i) for i in (3, 4)]
    assert [cited(o) & {"lm-a03", "lm-a04"} for o in later] == [set(), set()]
    assert {"lm-a03", "lm-a04"} & set(documents(capsys, store_location)) == set()
    assert evloop(capsys, store_location, "trace", "verify", "--all")[0] == 0
    assert evloop(capsys, store_location, "replay", "--all")[0] == 0


def test_a_dry_run_prints_what_a_sync_would_do_and_writes_nothing(
    capsys: Capture, kb: Path, store_location: Location, embedded: FakeEmbeddingServer
) -> None:
    evloop(capsys, store_location, "ingest", str(kb))
    before = documents(capsys, store_location)
    (kb / "lm-a07.md").write_text(article(7, years=9), encoding="utf-8")
    (kb / "lm-a03.md").unlink()
    (kb / "lm-new.md").write_text(article(42), encoding="utf-8")
    sent = len(embedded.passages)

    code, out, _ = evloop(capsys, store_location, "ingest", str(kb), "--prune", "--dry-run")

    assert (code, out.splitlines()) == (
        0,
        [
            "would change lm-a07 (version 2)",
            "would add    lm-new (version 1)",
            "would retire lm-a03 (version 1)",
            f"dry run, nothing written: 1 to add, 1 to change, 18 unchanged, 1 to retire, 0 skipped -> "
            f"{store_location}",
        ],
    )
    assert documents(capsys, store_location) == before
    assert [text for text in embedded.passages[sent:] if text != PROBE] == []


def test_a_dry_run_on_an_index_not_made_yet_creates_nothing(
    capsys: Capture, kb: Path, tmp_path: Path
) -> None:
    index = tmp_path / "never"

    code, out, _ = evloop(capsys, index, "ingest", str(kb), "--dry-run")

    assert (code, out.splitlines()[-1].split(" -> ")[0]) == (
        0,
        "dry run, nothing written: 20 to add, 0 to change, 0 unchanged, 0 to retire, 0 skipped",
    )
    assert not index.exists()


def test_a_sync_under_another_source_name_leaves_the_folders_documents(
    capsys: Capture, kb: Path, tmp_path: Path
) -> None:
    index = tmp_path / "index"
    evloop(capsys, index, "ingest", str(kb))
    other = tmp_path / "other"
    other.mkdir()
    (other / "extra.md").write_text(article(50), encoding="utf-8")

    code, out, _ = evloop(capsys, index, "ingest", str(other), "--prune")

    assert (code, out.split(":")[0]) == (0, "1 added, 0 changed, 0 unchanged, 0 retired, 0 skipped")
    assert len(documents(capsys, index)) == ARTICLES + 1


def test_two_folders_naming_one_doc_id_are_told_they_replace_each_other(
    capsys: Capture, tmp_path: Path
) -> None:
    index = tmp_path / "index"
    en, zh = tmp_path / "en", tmp_path / "zh"
    for folder, years in ((en, 2), (zh, 3)):
        folder.mkdir()
        (folder / "warranty.md").write_text(article(1, years), encoding="utf-8")
    evloop(capsys, index, "ingest", str(en))

    code, out, err = evloop(capsys, index, "ingest", str(zh))

    assert (code, out.split(":")[0]) == (0, "0 added, 1 changed, 0 unchanged, 0 retired, 0 skipped")
    assert f"warranty: synced from {en} before, its text now from {zh}" in err
    # the same folder again changes nothing and says nothing; an unchanged text moved says nothing
    assert "synced from" not in evloop(capsys, index, "ingest", str(zh))[2]
    (en / "warranty.md").write_text(article(1, 3), encoding="utf-8")
    assert "synced from" not in evloop(capsys, index, "ingest", str(en))[2]


def test_a_folder_moved_and_named_by_source_is_still_the_same_source(
    capsys: Capture, kb: Path, tmp_path: Path
) -> None:
    index = tmp_path / "index"
    evloop(capsys, index, "ingest", str(kb), "--source", "help-centre")
    moved = kb.rename(tmp_path / "checkout-2")
    (moved / "lm-a00.md").unlink()

    code, out, _ = evloop(capsys, index, "ingest", str(moved), "--source", "help-centre", "--prune")

    assert (code, out.split(":")[0]) == (0, "0 added, 0 changed, 19 unchanged, 1 retired, 0 skipped")


def test_the_same_folder_given_from_another_working_directory_is_the_same_source(
    capsys: Capture, kb: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = tmp_path / "index"
    evloop(capsys, index, "ingest", str(kb))
    (kb / "lm-a00.md").unlink()
    monkeypatch.chdir(kb)

    code, out, _ = evloop(capsys, index, "ingest", ".", "--prune")

    assert (code, out.split(":")[0]) == (0, "0 added, 0 changed, 19 unchanged, 1 retired, 0 skipped")
