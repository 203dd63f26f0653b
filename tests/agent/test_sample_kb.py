"""The bundled sample help centre: a valid manifest, and the cases the loop is demonstrated and tested on."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from evidence_loop.agent.doors.cli.sample import SampleEntry, load_sample_kb, sample_kb_dir, sample_manifest
from evidence_loop.tools.parse import parse_document
from evidence_loop.tools.store.folder import Store
from evidence_loop.tools.types import DocumentInput

SUFFIX_FORMAT = {".md": "markdown", ".txt": "text", ".html": "html"}
MANIFEST = sample_manifest()
ALL_DOCS = load_sample_kb(include_non_default=True)


def text_of(doc_id: str, version: str = "1") -> str:
    return next(d.text for d in ALL_DOCS if (d.doc_id, d.version) == (doc_id, version))


def markdown_section(text: str, heading: str) -> str:
    """The body under a markdown heading line, up to the next heading."""
    match = re.search(rf"^#+ {re.escape(heading)}\n(.*?)(?=^#+ |\Z)", text, re.M | re.S)
    assert match, f"no section {heading!r}"
    return match.group(1).strip()


def sentences(body: str) -> list[str]:
    """Chinese sentences end in 。, English ones in '. ' or at the end of the body."""
    parts = re.split(r"(?<=。)|(?<=\.)\s+", body)
    return [p.strip() for p in parts if p.strip()]


# --- the manifest ---------------------------------------------------------------------------------------


def test_every_listed_file_exists_in_the_package() -> None:
    missing = [e.file for e in MANIFEST if not (sample_kb_dir() / e.file).is_file()]

    assert missing == []


def test_every_file_in_the_folder_is_listed() -> None:
    on_disk = {p.name for p in sample_kb_dir().iterdir() if p.name != "manifest.json"}

    assert on_disk == {e.file for e in MANIFEST}


def test_each_entrys_format_matches_its_file_extension() -> None:
    assert [(e.file, e.format) for e in MANIFEST] == [
        (e.file, SUFFIX_FORMAT[Path(e.file).suffix]) for e in MANIFEST
    ]


def test_doc_id_and_version_pairs_are_unique() -> None:
    pairs = [(e.doc_id, e.version) for e in MANIFEST]

    assert len(pairs) == len(set(pairs))


def test_the_sample_mixes_languages_and_formats() -> None:
    formats = {e.format for e in MANIFEST}
    languages = {"zh" if e.doc_id.endswith("-zh") else "en" for e in MANIFEST}

    assert 12 <= len({e.doc_id for e in MANIFEST}) <= 24  # a small help centre
    assert (formats, languages) == ({"markdown", "text", "html"}, {"zh", "en"})


@pytest.mark.parametrize("entry", MANIFEST, ids=lambda e: f"{e.doc_id}@{e.version}")
def test_every_document_is_help_centre_sized(entry: SampleEntry) -> None:
    assert 300 <= len(text_of(entry.doc_id, entry.version)) <= 2500


@pytest.mark.parametrize("doc", ALL_DOCS, ids=lambda d: f"{d.doc_id}@{d.version}")
def test_every_document_parses_into_units_with_honest_offsets(doc: DocumentInput) -> None:
    parsed = parse_document(doc)  # offsets into the stored text: an HTML page's clean text

    assert parsed.units
    assert all(parsed.text[u.start : u.end] == u.text for u in parsed.units)


# --- subsets ------------------------------------------------------------------------------------------------


def test_the_demo_set_leaves_out_documents_not_marked_default() -> None:
    demo = {d.doc_id for d in load_sample_kb()}
    drafts = {e.doc_id for e in MANIFEST if not e.default}

    assert drafts == {"launch-preview-draft-zh"}
    assert demo.isdisjoint(drafts)


def test_tests_can_leave_out_the_enrolled_student_rules() -> None:
    optional = {e.doc_id for e in MANIFEST if e.optional_for_tests}
    without = {d.doc_id for d in load_sample_kb(include_optional=False)}

    assert optional == {"enrolled-reschedule-zh"}
    assert "enrolled-reschedule-zh" in {d.doc_id for d in load_sample_kb()}
    assert "enrolled-reschedule-zh" not in without


def test_documents_carry_the_manifests_acl_and_title() -> None:
    staff = next(d for d in ALL_DOCS if d.doc_id == "staff-discount-zh")

    assert (staff.acl, staff.title) == (("staff",), "员工内部购机优惠规则")


def test_exactly_one_document_is_restricted_to_staff() -> None:
    assert [(e.doc_id, e.acl) for e in MANIFEST if e.acl] == [("staff-discount-zh", ("staff",))]


# --- the cases ----------------------------------------------------------------------------------------------


def test_the_chinese_reschedule_section_says_scope_then_rule_then_cross_reference() -> None:
    body = markdown_section(text_of("course-policy-zh"), "二、改期")

    scope, rule, reference = sentences(body)[:3]

    assert "仅适用于" in scope and "尚未开课" in scope and "常规班" in scope
    assert "免费改期一次" in rule
    assert "开课后" in reference and "《在读学员改期规则》" in reference


def test_the_english_reschedule_section_says_scope_then_rule_then_cross_reference() -> None:
    body = markdown_section(text_of("course-policy-en"), "2. Rescheduling")

    assert sentences(body)[:3] == [
        "This section applies only to regular-class enrolments that have not started yet.",
        "Students may reschedule once free of charge.",
        "After the class has started, the Enrolled Student Rescheduling Rules apply.",
    ]


def test_the_course_policy_has_other_sections_around_the_reschedule_rule() -> None:
    headings = re.findall(r"^## (.+)$", text_of("course-policy-zh"), re.M)

    assert headings.index("二、改期") not in (0, len(headings) - 1)
    assert {"三、退费", "四、出勤与请假"} <= set(headings)


def test_the_enrolled_student_rules_give_notice_fee_and_limit() -> None:
    text = text_of("enrolled-reschedule-zh")

    assert text.startswith("# 在读学员改期规则")
    assert all(fact in text for fact in ("48小时", "50元", "最多可改期2次"))


def test_the_chinese_warranty_table_has_its_header_and_every_model() -> None:
    text = text_of("warranty-zh")
    rows = [line for line in text.splitlines() if line.startswith("|")]

    assert rows[0] == "| 型号 | 整机保修 | 电池保修 | 说明 |"
    assert [r.split("|")[1].strip() for r in rows[2:]] == ["LM-X200", "LM-X200 Pro", "LM-S10", "LM-K3"]
    assert "| LM-S10 | 3年 |" in text


def test_the_warranty_tables_have_a_scope_sentence_right_above_them() -> None:
    zh = text_of("warranty-zh")
    en = text_of("warranty-en")

    assert re.search(r"下表列出[^\n]*。\n\n\| 型号", zh)
    assert re.search(r"<p>The table below lists[^<]*</p>\s*<table>", en)


def test_the_english_warranty_page_is_an_html_table_with_the_same_models() -> None:
    text = text_of("warranty-en")
    models = re.findall(r"<tr><td>([^<]+)</td>", text)

    assert models == ["LM-X200", "LM-X200 Pro", "LM-S10", "LM-K3"]
    assert "<tr><td>LM-S10</td><td>3 years</td>" in text


def test_the_returns_exceptions_are_a_list_under_an_intro_sentence() -> None:
    text = text_of("returns-zh")

    match = re.search(r"以下商品不支持7天无理由退货：\n\n((?:- .+\n)+)", text)

    assert match and len(match.group(1).splitlines()) >= 3


def test_the_english_returns_page_has_its_exceptions_list_too() -> None:
    assert re.search(r"cannot be returned[^<]*</p>\s*<ul>\s*<li>", text_of("returns-en"))


def test_the_wifi_procedure_is_a_numbered_list_under_its_intro() -> None:
    en = text_of("troubleshoot-wifi-en")
    zh = text_of("troubleshoot-wifi-zh")

    assert "If the device cannot connect to Wi-Fi, follow these steps:\n\n1. " in en
    assert "如果设备无法连接Wi-Fi，请按以下步骤排查：\n\n1. " in zh
    assert re.findall(r"^(\d+)\. ", en, re.M) == [str(n) for n in range(1, 7)]


def test_the_shipping_page_comes_in_two_versions_listed_oldest_first() -> None:
    versions = [e.version for e in MANIFEST if e.doc_id == "shipping-zh"]

    assert versions == ["1", "2"]
    assert "满99元包邮" in text_of("shipping-zh", "1")
    assert "满79元包邮" in text_of("shipping-zh", "2")


def test_one_html_page_carries_script_and_style_for_the_parser_to_drop() -> None:
    text = text_of("contact-zh")

    assert "<script>" in text and "<style>" in text


def test_plain_text_faqs_are_included() -> None:
    assert sorted(e.doc_id for e in MANIFEST if e.format == "text") == ["faq-account-zh", "faq-devices-en"]


# --- parsed -----------------------------------------------------------------------------------------------


def test_the_reschedule_rule_parses_into_three_consecutive_sentences_of_its_section() -> None:
    doc = next(d for d in ALL_DOCS if d.doc_id == "course-policy-zh")
    parsed = parse_document(doc)
    (section,) = [s for s in parsed.sections if s.title == "二、改期"]

    in_section = [u for u in parsed.units if u.section_id == section.section_id and u.kind == "sentence"]

    assert [u.ordinal for u in in_section] == list(range(in_section[0].ordinal, in_section[0].ordinal + 3))
    assert ["尚未开课" in in_section[0].text, "免费改期一次" in in_section[1].text] == [True, True]
    assert "《在读学员改期规则》" in in_section[2].text


def test_script_and_style_never_become_units() -> None:
    doc = next(d for d in ALL_DOCS if d.doc_id == "contact-zh")

    texts = " ".join(u.text for u in parse_document(doc).units)

    assert ("dataLayer" in texts, "font-size" in texts, "400-820-6688" in texts) == (False, False, True)


# --- ingested into a real store ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sample_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    with Store.open(tmp_path_factory.mktemp("sample") / "index", create=True) as store:
        store.ingest(load_sample_kb())
        yield store


def test_ingesting_the_manifest_in_order_leaves_the_later_shipping_version_current(
    sample_store: Store,
) -> None:
    assert sample_store.snapshot().current_versions()["shipping-zh"] == "2"


@pytest.mark.parametrize(
    "query", ["员工购机优惠码", "内部优惠 7折", "STAFF-LUMEN-2024", "员工子女 常规班 5折"]
)
def test_public_callers_never_find_the_staff_only_document(sample_store: Store, query: str) -> None:
    public = sample_store.snapshot().search(query, 50)
    staff = sample_store.snapshot().search(query, 50, groups=("staff",))

    assert "staff-discount-zh" not in {h.unit.doc_id for h in public}
    assert "staff-discount-zh" in {h.unit.doc_id for h in staff}
