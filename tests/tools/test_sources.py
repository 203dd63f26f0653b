"""Reading files, folders and corpus.jsonl files into documents, and refusing bad input before any write."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from evidence_loop.tools.errors import (
    DecodeError,
    DocumentTooLargeError,
    InputError,
    MalformedRecordError,
    UnsupportedFormatError,
    VersionClashError,
)
from evidence_loop.tools.parse.sources import collect, html_title, markdown_title, read_corpus_jsonl


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def jsonl(path: Path, *records: object) -> Path:
    lines = [r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in records]
    return write(path, "\n".join(lines) + "\n")


# --- files and folders ---------------------------------------------------------------------------


def test_a_file_named_directly_gets_its_stem_as_doc_id_and_its_first_heading_as_title(tmp_path: Path) -> None:
    path = write(tmp_path / "returns.md", "intro line\n\n# 退换货政策\n\n七天无理由退货。\n")

    (doc,) = collect([path]).documents

    assert (doc.doc_id, doc.title, doc.format, doc.version, doc.acl) == (
        "returns",
        "退换货政策",
        "markdown",
        None,
        (),
    )


def test_document_text_is_the_file_text_exactly(tmp_path: Path) -> None:
    text = "# Title\r\n\r\nLine one.  \r\nLine two.\n"
    path = tmp_path / "a.md"
    path.write_bytes(text.encode("utf-8"))

    (doc,) = collect([path]).documents

    assert doc.text == text


def test_a_utf8_byte_order_mark_is_not_part_of_the_text(tmp_path: Path) -> None:
    path = tmp_path / "bom.txt"
    path.write_bytes("\ufeff账号常见问题\n".encode())

    (doc,) = collect([path]).documents

    assert doc.text == "账号常见问题\n"


def test_a_folder_is_read_recursively_in_sorted_order_with_posix_doc_ids(tmp_path: Path) -> None:
    root = tmp_path / "kb"
    write(root / "b.txt", "bee")
    write(root / "a" / "z.html", "<h1>Zed</h1><p>zed</p>")
    write(root / "a" / "deeper" / "m.markdown", "# Em\nem")
    write(root / "a.md", "# A\na")

    docs = collect([root]).documents

    assert [(d.doc_id, d.format) for d in docs] == [
        ("a/deeper/m", "markdown"),
        ("a/z", "html"),
        ("a", "markdown"),
        ("b", "text"),
    ]


def test_hidden_files_and_folders_are_skipped_silently(tmp_path: Path) -> None:
    write(tmp_path / "kb" / ".draft.md", "# Draft\nsecret")
    write(tmp_path / "kb" / ".git" / "notes.md", "# Git\nnotes")
    write(tmp_path / "kb" / "page.md", "# Page\ntext")

    found = collect([tmp_path / "kb"])

    assert ([d.doc_id for d in found.documents], found.warnings) == (["page"], ())


def test_an_unsupported_file_inside_a_folder_is_skipped_with_a_warning(tmp_path: Path) -> None:
    write(tmp_path / "kb" / "page.md", "# Page\ntext")
    write(tmp_path / "kb" / "logo.png", "not really a png")

    found = collect([tmp_path / "kb"])

    assert [d.doc_id for d in found.documents] == ["page"]
    assert len(found.warnings) == 1
    assert "logo.png" in found.warnings[0]


def test_an_unsupported_file_named_explicitly_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path / "manual.pdf", "%PDF-1.7")

    with pytest.raises(UnsupportedFormatError, match=r"manual\.pdf"):
        collect([path])


def test_a_path_that_does_not_exist_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        collect([tmp_path / "missing.md"])


def test_undecodable_bytes_are_a_decode_error_naming_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "gbk.txt"
    path.write_bytes("第一行\n".encode() + "保修".encode("gbk"))

    with pytest.raises(DecodeError, match=r"gbk\.txt:2"):
        collect([path])


def test_an_empty_file_is_skipped_with_a_warning(tmp_path: Path) -> None:
    write(tmp_path / "kb" / "blank.md", "  \n\n\t\n")
    write(tmp_path / "kb" / "page.md", "# Page\ntext")

    found = collect([tmp_path / "kb"])

    assert [d.doc_id for d in found.documents] == ["page"]
    assert found.skipped == 1
    assert any("blank.md" in w and "empty" in w for w in found.warnings)


def test_acl_and_version_given_by_the_caller_apply_to_every_file(tmp_path: Path) -> None:
    write(tmp_path / "kb" / "a.md", "# A\na")
    write(tmp_path / "kb" / "b.txt", "b")

    docs = collect([tmp_path / "kb"], acl=("staff",), version="2024-10").documents

    assert {(d.acl, d.version) for d in docs} == {(("staff",), "2024-10")}


def test_a_file_over_the_size_limit_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path / "big.txt", "x" * 101)

    with pytest.raises(DocumentTooLargeError, match=r"big\.txt"):
        collect([path], max_bytes=100)


def test_two_files_with_the_same_doc_id_and_different_text_clash(tmp_path: Path) -> None:
    write(tmp_path / "kb" / "faq.md", "# FAQ\none")
    write(tmp_path / "kb" / "faq.txt", "FAQ two")

    with pytest.raises(VersionClashError, match="'faq' is given twice with different text"):
        collect([tmp_path / "kb"])


def test_the_same_file_given_twice_is_read_once_with_a_warning(tmp_path: Path) -> None:
    path = write(tmp_path / "faq.md", "# FAQ\none")

    found = collect([path, path])

    assert (len(found.documents), found.skipped) == (1, 1)


# --- titles -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("# 配送说明\n正文", "配送说明"),
        ("正文\n\n## Second level ##\n", "Second level"),
        ("```\n# not a heading\n```\n# Real\n", "Real"),
        ("#hashtag is not a heading\n", ""),
        ("no heading at all", ""),
    ],
)
def test_markdown_title_is_the_first_heading_outside_code(text: str, title: str) -> None:
    assert markdown_title(text) == title


@pytest.mark.parametrize(
    ("text", "title"),
    [
        (
            "<html><head><title>Page | Site</title></head><body><h1>Device  Warranty</h1></body></html>",
            "Device Warranty",
        ),
        ("<title>Only &amp; title</title><p>body</p>", "Only & title"),
        ("<p>nothing</p>", ""),
    ],
)
def test_html_title_prefers_the_first_heading_then_the_title_tag(text: str, title: str) -> None:
    assert html_title(text) == title


def test_a_text_file_is_titled_by_its_stem(tmp_path: Path) -> None:
    path = write(tmp_path / "faq-account-zh.txt", "账号常见问题\n问：忘记密码怎么办？")

    (doc,) = collect([path]).documents

    assert doc.title == "faq-account-zh"


# --- corpus.jsonl -----------------------------------------------------------------------------------


def test_jsonl_records_get_the_documented_defaults(tmp_path: Path) -> None:
    path = jsonl(tmp_path / "corpus.jsonl", {"doc_id": "d1", "text": "正文"})

    (doc,) = collect([path]).documents

    assert (doc.doc_id, doc.text, doc.title, doc.version, doc.format, doc.acl, dict(doc.metadata)) == (
        "d1",
        "正文",
        "",
        None,
        "text",
        (),
        {},
    )


def test_jsonl_records_keep_every_optional_field(tmp_path: Path) -> None:
    record = {
        "doc_id": "d1",
        "text": "# T\nx",
        "title": "T",
        "version": "3",
        "format": "markdown",
        "acl": ["staff"],
        "metadata": {"source": "wiki"},
    }
    path = jsonl(tmp_path / "corpus.jsonl", record)

    (doc,) = collect([path]).documents

    assert (doc.title, doc.version, doc.format, doc.acl, dict(doc.metadata)) == (
        "T",
        "3",
        "markdown",
        ("staff",),
        {"source": "wiki"},
    )


def test_a_records_own_acl_and_version_win_over_the_callers(tmp_path: Path) -> None:
    path = jsonl(tmp_path / "corpus.jsonl", {"doc_id": "d1", "text": "x", "acl": ["hr"], "version": "7"})

    (doc,) = collect([path], acl=("staff",), version="2").documents

    assert (doc.acl, doc.version) == (("hr",), "7")


def test_the_callers_acl_and_version_fill_records_without_their_own(tmp_path: Path) -> None:
    path = jsonl(tmp_path / "corpus.jsonl", {"doc_id": "d1", "text": "x", "acl": []})

    (doc,) = collect([path], acl=("staff",), version="2").documents

    assert (doc.acl, doc.version) == (("staff",), "2")


def test_blank_lines_in_jsonl_are_ignored(tmp_path: Path) -> None:
    path = jsonl(
        tmp_path / "corpus.jsonl", {"doc_id": "a", "text": "x"}, "", "   ", {"doc_id": "b", "text": "y"}
    )

    assert [d.doc_id for d in collect([path]).documents] == ["a", "b"]


def test_a_malformed_json_line_names_the_file_and_line(tmp_path: Path) -> None:
    path = jsonl(tmp_path / "corpus.jsonl", {"doc_id": "a", "text": "x"}, '{"doc_id": "b", "text": ')

    with pytest.raises(MalformedRecordError) as caught:
        collect([path])

    assert (caught.value.path, caught.value.line) == (str(path), 2)


def test_a_malformed_line_in_one_file_stops_the_whole_collection(tmp_path: Path) -> None:
    good = jsonl(tmp_path / "a.jsonl", {"doc_id": "a", "text": "x"})
    bad = jsonl(tmp_path / "b.jsonl", "not json")

    with pytest.raises(MalformedRecordError, match=r"b\.jsonl:1"):
        collect([good, bad])


@pytest.mark.parametrize(
    ("record", "field"),
    [
        ({"text": "x"}, "doc_id"),
        ({"doc_id": "a"}, "text"),
        ({"doc_id": 7, "text": "x"}, "doc_id"),
        ({"doc_id": "a", "text": ["x"]}, "text"),
        ({"doc_id": "a", "text": "x", "version": 2}, "version"),
        ({"doc_id": "a", "text": "x", "title": None}, "title"),
        ({"doc_id": "a", "text": "x", "format": "pdf"}, "format"),
        ({"doc_id": "a", "text": "x", "acl": "staff"}, "acl"),
        ({"doc_id": "a", "text": "x", "acl": [1]}, "acl"),
        ({"doc_id": "a", "text": "x", "metadata": []}, "metadata"),
        ({"doc_id": " ", "text": "x"}, "doc_id"),
    ],
)
def test_a_missing_or_mistyped_field_is_named_with_its_line(
    tmp_path: Path, record: dict[str, object], field: str
) -> None:
    path = jsonl(tmp_path / "corpus.jsonl", {"doc_id": "ok", "text": "fine"}, record)

    with pytest.raises(MalformedRecordError, match=rf"corpus\.jsonl:2: .*'{field}'"):
        collect([path])


def test_a_jsonl_line_that_is_not_an_object_is_malformed(tmp_path: Path) -> None:
    path = jsonl(tmp_path / "corpus.jsonl", '["doc_id", "text"]')

    with pytest.raises(MalformedRecordError, match="JSON object"):
        collect([path])


def test_an_empty_jsonl_record_is_skipped_with_a_warning(tmp_path: Path) -> None:
    path = jsonl(tmp_path / "corpus.jsonl", {"doc_id": "a", "text": " \n"}, {"doc_id": "b", "text": "y"})

    found = collect([path])

    assert [d.doc_id for d in found.documents] == ["b"]
    assert found.skipped == 1
    assert "corpus.jsonl:1" in found.warnings[0]


def test_undecodable_bytes_in_jsonl_are_a_decode_error_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "corpus.jsonl"
    path.write_bytes(b'{"doc_id": "a", "text": "\xff\xfe"}\n')

    with pytest.raises(DecodeError, match=r"corpus\.jsonl:1"):
        collect([path])


def test_two_versions_of_one_document_in_jsonl_are_both_kept_in_order(tmp_path: Path) -> None:
    path = jsonl(
        tmp_path / "corpus.jsonl",
        {"doc_id": "ship", "version": "1", "text": "满99元包邮"},
        {"doc_id": "ship", "version": "2", "text": "满79元包邮"},
    )

    assert [(d.doc_id, d.version) for d in collect([path]).documents] == [("ship", "1"), ("ship", "2")]


def test_the_same_version_twice_with_different_text_in_jsonl_clashes(tmp_path: Path) -> None:
    path = jsonl(
        tmp_path / "corpus.jsonl",
        {"doc_id": "ship", "text": "满99元包邮"},
        {"doc_id": "ship", "text": "满79元包邮"},
    )

    with pytest.raises(VersionClashError, match=r"corpus\.jsonl:1 and .*corpus\.jsonl:2"):
        collect([path])


def test_a_jsonl_record_over_the_size_limit_is_refused_with_its_line(tmp_path: Path) -> None:
    path = jsonl(tmp_path / "corpus.jsonl", {"doc_id": "a", "text": "x"}, {"doc_id": "b", "text": "保" * 40})

    with pytest.raises(DocumentTooLargeError, match=r"corpus\.jsonl:2"):
        collect([path], max_bytes=100)


def test_a_jsonl_file_inside_a_folder_is_read_as_a_corpus(tmp_path: Path) -> None:
    jsonl(tmp_path / "kb" / "corpus.jsonl", {"doc_id": "from-jsonl", "text": "x"})
    write(tmp_path / "kb" / "page.md", "# P\np")

    assert [d.doc_id for d in collect([tmp_path / "kb"]).documents] == ["from-jsonl", "page"]


def test_read_corpus_jsonl_reads_a_corpus_file_of_any_name(tmp_path: Path) -> None:
    path = jsonl(tmp_path / "export.ndjson", {"doc_id": "a", "text": "x"}, {"doc_id": "b", "text": " "})

    assert [d.doc_id for d in read_corpus_jsonl(path)] == ["a"]


def test_read_corpus_jsonl_raises_like_collect(tmp_path: Path) -> None:
    path = jsonl(tmp_path / "corpus.jsonl", {"doc_id": "a"})

    with pytest.raises(MalformedRecordError, match="'text'"):
        read_corpus_jsonl(path)


# --- links, names and ids a folder may hold -------------------------------------------------------


@pytest.fixture
def kb_with_links(tmp_path: Path) -> Path:
    """A folder with a page, a link to it, a link out of the folder, and a link to a folder outside."""
    outside = write(tmp_path / "private" / "secret.txt", "The root password is hunter2.")
    kb = tmp_path / "kb"
    write(kb / "page.md", "# Page\nThe warranty is one year.")
    (kb / "alias.md").symlink_to("page.md")
    (kb / "secret.txt").symlink_to(outside)
    (kb / "private").symlink_to(outside.parent, target_is_directory=True)
    return kb


def test_a_link_to_a_file_outside_the_folder_is_skipped_with_a_warning(kb_with_links: Path) -> None:
    found = collect([kb_with_links])

    assert [d.doc_id for d in found.documents] == ["alias", "page"]
    assert found.skipped == 1
    assert any("secret.txt" in w and "outside" in w and "--follow-symlinks" in w for w in found.warnings)


def test_a_link_to_a_folder_is_not_followed_and_says_so(kb_with_links: Path) -> None:
    found = collect([kb_with_links], follow_symlinks=True)

    assert "private/secret" not in [d.doc_id for d in found.documents]
    assert any(w.endswith("private: a link to a folder; not followed") for w in found.warnings)


def test_follow_symlinks_reads_a_link_to_a_file_outside_the_folder(kb_with_links: Path) -> None:
    found = collect([kb_with_links], follow_symlinks=True)

    secret = next(d for d in found.documents if d.doc_id == "secret")
    assert "hunter2" in secret.text


def test_a_link_out_of_the_folder_given_through_a_linked_folder_is_still_outside(tmp_path: Path) -> None:
    write(tmp_path / "elsewhere.txt", "Outside text.")
    real = tmp_path / "real-kb"
    write(real / "page.md", "# Page\ntext")
    (real / "out.txt").symlink_to(tmp_path / "elsewhere.txt")
    (tmp_path / "kb").symlink_to(real, target_is_directory=True)

    found = collect([tmp_path / "kb"])

    assert [d.doc_id for d in found.documents] == ["page"]


def test_a_file_named_explicitly_is_read_wherever_its_link_points(kb_with_links: Path) -> None:
    (doc,) = collect([kb_with_links / "secret.txt"]).documents

    assert "hunter2" in doc.text


def test_a_symlink_loop_is_an_input_error_naming_the_file(tmp_path: Path) -> None:
    (tmp_path / "kb").mkdir()
    (tmp_path / "kb" / "a.md").symlink_to("b.md")
    (tmp_path / "kb" / "b.md").symlink_to("a.md")

    with pytest.raises(InputError, match=r"a\.md: cannot be read \(Too many levels of symbolic links\)"):
        collect([tmp_path / "kb"])


def test_a_dangling_link_named_explicitly_is_an_input_error(tmp_path: Path) -> None:
    (tmp_path / "gone.md").symlink_to(tmp_path / "nowhere.md")

    with pytest.raises(InputError, match=r"gone\.md: cannot be read"):
        collect([tmp_path / "gone.md"])


def test_a_file_whose_name_is_not_utf8_is_an_input_error(tmp_path: Path) -> None:
    write(tmp_path / "kb" / os.fsdecode(b"caf\xe9.md"), "# Caf\u00e9\ntext")

    with pytest.raises(InputError, match=r"not valid UTF-8.*rename the file"):
        collect([tmp_path / "kb"])


def test_a_file_name_with_a_newline_is_an_input_error(tmp_path: Path) -> None:
    write(tmp_path / "kb" / "two\nlines.md", "# Page\ntext")

    with pytest.raises(InputError, match="control character"):
        collect([tmp_path / "kb"])


@pytest.mark.parametrize("doc_id", ["a\u0000b", "a\nb", "\u001b[2J", "x\u202ey"])
def test_a_jsonl_doc_id_with_a_control_character_is_malformed_with_its_line(
    tmp_path: Path, doc_id: str
) -> None:
    path = jsonl(tmp_path / "corpus.jsonl", {"doc_id": "fine", "text": "x"}, {"doc_id": doc_id, "text": "y"})

    with pytest.raises(MalformedRecordError, match=r"corpus\.jsonl:2: field 'doc_id'"):
        collect([path])


def test_a_lone_surrogate_in_a_jsonl_record_leaves_collection_to_the_store(tmp_path: Path) -> None:
    path = jsonl(tmp_path / "corpus.jsonl", '{"doc_id": "a", "text": "lone \\ud800 here"}')

    (doc,) = collect([path], max_bytes=1000).documents

    assert doc.text == "lone \ud800 here"
