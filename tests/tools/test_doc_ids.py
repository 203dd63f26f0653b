"""What a doc_id may be, and text that is not Unicode: the store refuses them for every caller."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from evidence_loop.tools.errors import InputError, NotFoundError
from evidence_loop.tools.store import Store
from evidence_loop.tools.types import DocumentInput, doc_id_fault

UNSAFE_IDS = [
    pytest.param("a\x00b", id="NUL"),
    pytest.param("a\nb", id="newline"),
    pytest.param("a\rb", id="carriage return"),
    pytest.param("a\tb", id="tab"),
    pytest.param("\x1b[31mred", id="escape"),
    pytest.param("a\x85b", id="C1 next line"),
    pytest.param("a\u2028b", id="line separator"),
    pytest.param("invoice\u202etxt.exe", id="right-to-left override"),
    pytest.param("\udcff", id="a byte that is not UTF-8"),
    pytest.param("", id="empty"),
    pytest.param("   ", id="blank"),
]
SAFE_IDS = [
    "warranty-en",
    "help/returns",
    "保修政策",
    "FAQ 2024 (v2)",
    "emoji-👩\u200d💻",
    "ünïcödé",
    "a@b#c",
]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(tmp_path / "ix", create=True) as opened:
        yield opened


@pytest.mark.parametrize("doc_id", UNSAFE_IDS)
def test_an_id_with_a_control_character_or_nothing_printable_is_at_fault(doc_id: str) -> None:
    assert doc_id_fault(doc_id) is not None


@pytest.mark.parametrize("doc_id", SAFE_IDS)
def test_printable_ids_in_any_script_are_fine(doc_id: str) -> None:
    assert doc_id_fault(doc_id) is None


def test_the_fault_shows_the_character_escaped_on_one_line() -> None:
    fault = doc_id_fault("a\nb")

    assert fault is not None and "\n" not in fault
    assert "'a\\nb'" in fault and "U+000A" in fault


@pytest.mark.parametrize("doc_id", UNSAFE_IDS)
def test_the_store_refuses_an_unsafe_id_and_writes_nothing_of_the_batch(store: Store, doc_id: str) -> None:
    batch = [DocumentInput("fine", "The warranty is one year."), DocumentInput(doc_id, "Some text here.")]

    with pytest.raises(InputError):
        store.ingest(batch)

    assert (store.generation, store.documents()) == (0, [])


@pytest.mark.parametrize("doc_id", ["a\x00b", "a\nb", "\udcff"])
def test_deleting_an_unsafe_id_is_an_input_error_not_a_lookup(store: Store, doc_id: str) -> None:
    with pytest.raises(InputError) as refused:
        store.delete(doc_id)

    assert not isinstance(refused.value, NotFoundError)


@pytest.mark.parametrize(
    "doc",
    [
        pytest.param(DocumentInput("d", "lone \ud800 surrogate"), id="text"),
        pytest.param(DocumentInput("d", "Fine text.", title="\udfff"), id="title"),
        pytest.param(DocumentInput("d", "Fine text.", version="v\ud800"), id="version"),
        pytest.param(DocumentInput("d", "Fine text.", acl=("staff\ud800",)), id="acl"),
        pytest.param(DocumentInput("d", "Fine text.", metadata={"k": ["\ud800"]}), id="metadata"),
    ],
)
def test_a_lone_surrogate_anywhere_in_a_document_is_refused(store: Store, doc: DocumentInput) -> None:
    with pytest.raises(InputError, match=r"lone surrogate U\+D[89BF]"):
        store.ingest([doc])

    assert store.documents() == []


def test_an_emoji_sent_as_a_json_surrogate_pair_is_ordinary_text(store: Store) -> None:
    text = json.loads('"An emoji \\ud83d\\ude00 in the text."')

    report = store.ingest([DocumentInput("d", text)])

    assert report.documents == 1
