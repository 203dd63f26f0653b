"""What a doc_id may be, and text that is not Unicode: the store refuses them for every caller."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from evidence_loop.tools.errors import InputError, NotFoundError
from evidence_loop.tools.store.folder import Store
from evidence_loop.tools.types import INVISIBLE_CHARS, DocumentInput, doc_id_fault, shown_doc_id

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


# Each looks like another doc_id ("cafe", "café"): refused for a document written now.
LOOK_ALIKE_IDS = [
    pytest.param("ca\u200bfe", id="zero-width space"),
    pytest.param("\ufeffcafe", id="byte order mark"),
    pytest.param("ca\u2060fe", id="word joiner"),
    pytest.param("ca\u00adfe", id="soft hyphen"),
    pytest.param("保修\u200b政策", id="zero-width space in Chinese"),
    pytest.param("\uff43\uff41\uff46\uff45", id="fullwidth letters"),
    pytest.param("c\u0430fe", id="Cyrillic a among Latin letters"),
    pytest.param("\u03bfrder-faq", id="Greek omicron among Latin letters"),
]
CAFE_NFC, CAFE_NFD = "caf\u00e9", "cafe\u0301"


@pytest.mark.parametrize("doc_id", LOOK_ALIKE_IDS)
def test_an_id_that_looks_like_another_is_refused_and_the_fault_shows_it_escaped(doc_id: str) -> None:
    fault = doc_id_fault(doc_id)

    assert fault is not None and doc_id not in fault and "\\" in fault  # shown escaped, not as the look-alike


@pytest.mark.parametrize("doc_id", LOOK_ALIKE_IDS)
def test_the_store_writes_no_document_under_a_look_alike_id(store: Store, doc_id: str) -> None:
    with pytest.raises(InputError):
        store.ingest([DocumentInput(doc_id, "Some text here.")])

    assert store.documents() == []


@pytest.mark.parametrize("doc_id", ["Ωμέγα-faq", "Справка", "ünïcödé", "保修政策（2024）"])
def test_an_id_in_one_script_with_its_own_letters_is_fine(doc_id: str) -> None:
    assert doc_id_fault(doc_id) is None


def test_an_id_is_taken_in_nfc_so_its_two_spellings_are_one_document(store: Store) -> None:
    store.ingest([DocumentInput(CAFE_NFD, "The café opens at nine.")])
    store.ingest([DocumentInput(CAFE_NFC, "The café opens at nine.")])

    assert [d.doc_id for d in store.documents()] == [CAFE_NFC]


def test_deleting_either_spelling_removes_the_one_document(store: Store) -> None:
    store.ingest([DocumentInput(CAFE_NFC, "The café opens at nine.")])

    store.delete(CAFE_NFD)

    assert store.documents() == []


def test_a_stored_document_is_deleted_by_its_id_whatever_the_rules_for_new_ones(store: Store) -> None:
    assert doc_id_fault("ca\u200bfe", new=False) is None  # an id stored before the rule stays deletable

    with pytest.raises(NotFoundError):
        store.delete("ca\u200bfe")


@pytest.mark.parametrize(
    ("doc_id", "shown"),
    [
        ("warranty-en", "warranty-en"),
        ("保修政策", "保修政策"),
        (CAFE_NFC, CAFE_NFC),
        (CAFE_NFD, "cafe\\u0301"),
        ("ca\u200bfe", "ca\\u200bfe"),
        ("\ufeffcafe", "\\ufeffcafe"),
        ("c\u0430fe", "c\\u0430fe"),
        ("\uff43afe", "\\uff43afe"),
        ("Справка", "Справка"),
        ("a\nb", "a\\nb"),
    ],
)
def test_an_id_is_shown_with_what_does_not_print_as_itself_escaped(doc_id: str, shown: str) -> None:
    assert shown_doc_id(doc_id) == shown


def test_the_invisible_characters_are_every_format_character_unicodedata_knows() -> None:
    import re
    import sys
    import unicodedata

    invisible = re.compile(f"[{INVISIBLE_CHARS}]")
    format_chars = [c for c in map(chr, range(sys.maxunicode + 1)) if unicodedata.category(c) == "Cf"]

    assert [c for c in format_chars if not invisible.match(c)] == []
