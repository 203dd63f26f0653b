"""Damage to the index folder is caught: each generation's manifest, what open verifies, what check
finds, what a rebuild repairs, and a damaged database as IndexStateError rather than sqlite3's."""

from __future__ import annotations

import json
import shutil
import signal
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from evidence_loop.tools.errors import IndexStateError
from evidence_loop.tools.store.folder import Store
from evidence_loop.tools.store.integrity import check_index
from evidence_loop.tools.store.manifest import MANIFEST_FILE, verify_manifest, write_manifest
from evidence_loop.tools.types import DocumentInput
from tests.damage_support import flip_byte, flip_units_page, killed_at

WARRANTY = DocumentInput("warranty-en", "# Device Warranty\n\nThe LM-S10 is covered for 1 year.\n")
# Enough units for the units table to span many database pages.
PAGES = [
    DocumentInput(
        f"page-{i:02d}", "\n".join(f"Step {j} of page {i}: returns ship in 7 days." for j in range(30))
    )
    for i in range(40)
]
GEN1 = Path("bm25") / "gen-000001"
NPY = GEN1 / "passages" / "data.csc.index.npy"


@pytest.fixture
def index(tmp_path: Path) -> Path:
    """A closed store at generation 1 over WARRANTY and PAGES."""
    folder = tmp_path / "ix"
    with Store.open(folder, create=True) as store:
        store.ingest([WARRANTY, *PAGES])
    return folder


def damage_lines(folder: Path) -> list[str]:
    return [f"{d.where}: {d.problem}" for d in check_index(folder).damage]


# --- the manifest ------------------------------------------------------------------------------------


def test_the_manifest_lists_every_file_of_the_generation_with_its_size_and_sha256(index: Path) -> None:
    gen = index / GEN1
    listed = json.loads((gen / MANIFEST_FILE).read_text(encoding="utf-8"))["files"]
    on_disk = sorted(p.relative_to(gen).as_posix() for p in gen.rglob("*") if p.is_file())

    assert sorted([*listed, MANIFEST_FILE]) == on_disk
    assert listed["passages/data.csc.index.npy"]["size"] == (index / NPY).stat().st_size
    assert all(len(entry["sha256"]) == 64 for entry in listed.values())


def test_a_manifest_covers_files_in_any_sub_folder_without_naming_them(tmp_path: Path) -> None:
    (tmp_path / "vectors" / "deep").mkdir(parents=True)
    (tmp_path / "vectors" / "deep" / "units.npy").write_bytes(b"\x93NUMPY" + bytes(100))
    write_manifest(tmp_path)
    flip_byte(tmp_path / "vectors" / "deep" / "units.npy")

    assert verify_manifest(tmp_path, hashes=False) == []
    assert [d.path for d in verify_manifest(tmp_path, hashes=True)] == ["vectors/deep/units.npy"]


# --- what opening and loading verify -----------------------------------------------------------------


def test_a_same_size_byte_flip_in_an_npy_file_is_refused_when_the_index_loads(index: Path) -> None:
    flip_byte(index / NPY)

    with (
        pytest.raises(IndexStateError, match=r"data\.csc\.index\.npy.*sha256.*reindex"),
        Store.open(index) as store,
    ):
        store.snapshot()


def test_a_cut_short_index_file_is_refused_when_the_store_opens(index: Path) -> None:
    path = index / GEN1 / "vocab.index.json"
    path.write_bytes(path.read_bytes()[:-1])

    with pytest.raises(IndexStateError, match=r"vocab\.index\.json.*bytes.*reindex"):
        Store.open(index)


def test_a_generation_without_its_manifest_is_refused_with_the_reindex_hint(index: Path) -> None:
    (index / GEN1 / MANIFEST_FILE).unlink()

    with pytest.raises(IndexStateError, match=r"manifest\.json.*missing.*reindex"):
        Store.open(index)


# --- what check finds --------------------------------------------------------------------------------


def test_check_finds_nothing_in_a_sound_index(index: Path) -> None:
    report = check_index(index)

    assert (report.generation, report.damage, report.files > 10) == (1, (), True)


def test_check_names_a_same_size_byte_flip_in_an_npy_file(index: Path) -> None:
    flip_byte(index / NPY)

    assert damage_lines(index) == [
        "bm25/gen-000001/passages/data.csc.index.npy: "
        "sha256 differs from the manifest: same size, changed bytes"
    ]


def test_check_names_a_missing_file_a_file_not_in_the_manifest_and_bm25_replaced_by_a_file(
    index: Path,
) -> None:
    (index / GEN1 / "params.index.json").unlink()
    (index / GEN1 / "stray.bin").write_bytes(b"x")
    found = damage_lines(index)
    shutil.rmtree(index / "bm25")
    (index / "bm25").write_text("not a folder")

    assert found == [
        "bm25/gen-000001/params.index.json: missing",
        "bm25/gen-000001/stray.bin: not in the manifest",
    ]
    assert damage_lines(index) == ["bm25: not a folder"]


def test_check_reports_a_damaged_database_page_and_still_checks_the_index_files(index: Path) -> None:
    flip_units_page(index / "store.sqlite3")
    flip_byte(index / NPY)
    damage = check_index(index).damage

    assert [d.where for d in damage] == ["store.sqlite3", str(NPY.as_posix())]
    assert [d.repair for d in damage] == ["ingest", "reindex"]


def test_check_finds_a_changed_byte_inside_a_document_text_that_sqlite_cannot_see(index: Path) -> None:
    with closing(sqlite3.connect(index / "store.sqlite3")) as conn, conn:
        conn.execute(
            "UPDATE versions SET text = replace(text, '1 year', '9 year') WHERE doc_id = 'warranty-en'"
        )

    assert damage_lines(index) == [
        "store.sqlite3: the text of 'warranty-en' version '1' differs from its recorded sha256"
    ]


# --- what a rebuild repairs --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "damage",
    ["bm25 replaced by a file", "generation folder replaced by a file", "bad manifest", "flipped npy byte"],
)
def test_a_rebuild_repairs_damaged_index_files_from_the_database(index: Path, damage: str) -> None:
    with Store.open(index) as store:
        before = store.snapshot().search("warranty LM-S10 returns", 10)
    if damage == "bm25 replaced by a file":
        shutil.rmtree(index / "bm25")
        (index / "bm25").write_text("not a folder")
    elif damage == "generation folder replaced by a file":
        shutil.rmtree(index / GEN1)
        (index / GEN1).write_text("not a folder")
    elif damage == "bad manifest":
        (index / GEN1 / MANIFEST_FILE).write_text('{"format": 1, "files": {"../x": {}}}')
    else:
        flip_byte(index / NPY)

    Store.open(index, rebuild_index=True).close()

    assert check_index(index).damage == ()
    with Store.open(index) as store:
        assert store.snapshot().search("warranty LM-S10 returns", 10) == before


# --- the manifest is written before the commit -------------------------------------------------------

KILLED_INGEST = """
from evidence_loop.tools.store.folder import Store
from evidence_loop.tools.types import DocumentInput
with Store.open(sys.argv[1], checkpoint=kill_at(sys.argv[2])) as store:
    store.ingest([DocumentInput("fresh", "A new page about shipping.")])
"""


def test_a_kill_between_writing_the_index_and_the_commit_leaves_a_manifest_and_generation_1_valid(
    index: Path,
) -> None:
    returncode = killed_at("index", KILLED_INGEST, index)
    uncommitted = index / "bm25" / "gen-000002"

    assert returncode == -signal.SIGKILL
    assert (uncommitted / MANIFEST_FILE).is_file()
    assert verify_manifest(uncommitted, hashes=True) == []
    assert (check_index(index).generation, check_index(index).damage) == (1, ())
    with Store.open(index) as store:
        assert (store.generation, "fresh" in store.snapshot().current_versions()) == (1, False)


# --- a damaged database ------------------------------------------------------------------------------


def test_a_flipped_byte_in_the_database_is_an_index_state_error_on_use(index: Path) -> None:
    flip_units_page(index / "store.sqlite3")

    damaged = r"store\.sqlite3 cannot be used.*malformed.*evloop check"
    with pytest.raises(IndexStateError, match=damaged), Store.open(index) as store:
        store.snapshot()


def test_an_ingest_into_a_damaged_database_is_an_index_state_error(index: Path) -> None:
    flip_units_page(index / "store.sqlite3")

    with pytest.raises(IndexStateError, match="malformed"), Store.open(index) as store:
        store.ingest([DocumentInput("fresh", "A new page about shipping.")])
