"""Invariants of every parse: exact offsets, full coverage, a consistent tree; on generated documents,
the bundled sample knowledge base and every evaluation corpus present on this machine."""

from __future__ import annotations

import json
import os
import random
import re
from pathlib import Path
from typing import Any

import pytest

from evidence_loop.tools.parse import parse_document
from evidence_loop.tools.types import DocFormat, DocumentInput, ParsedDocument

ROOT = Path(__file__).resolve().parents[2]
SAMPLE_KB = ROOT / "agent" / "sample_kb"
# ../shared/eval beside the clone (EVLOOP_EVAL_DIR overrides): the suite runs without it, skipping
# those cases and saying so, but a folder that is there and holds no corpus fails
EVAL_DIR = Path(os.environ.get("EVLOOP_EVAL_DIR") or Path(__file__).resolve().parents[3] / "shared" / "eval")


def _eval_cases() -> list[Any]:
    if not EVAL_DIR.is_dir():
        reason = f"no evaluation sets at {EVAL_DIR} (set EVLOOP_EVAL_DIR to check their corpora)"
        return [pytest.param(None, id="no-eval-dir", marks=pytest.mark.skip(reason=reason))]
    return sorted(EVAL_DIR.glob("*/corpus.jsonl")) or [pytest.param(None, id="no-corpus")]


EVAL_CASES = _eval_cases()

# -- checks --------------------------------------------------------------------------------------


def assert_units_are_exact(parsed: ParsedDocument) -> None:
    text = parsed.text
    for ordinal, unit in enumerate(parsed.units):
        assert unit.ordinal == ordinal
        assert text[unit.start : unit.end] == unit.text
        assert unit.text and unit.text == unit.text.strip(), unit
        assert unit.link is None or unit.link < ordinal


# Markdown's raw HTML that shows nothing (comments, lines of tags only) is no unit
SHOWS_NOTHING = re.compile(r"<!--.*?-->|</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>", re.DOTALL)


def assert_units_cover_text(parsed: ParsedDocument) -> None:
    """Units are in order, never overlap, and leave only whitespace between them (and, in Markdown,
    HTML that shows nothing)."""

    def blank(gap: str) -> bool:
        return not (SHOWS_NOTHING.sub("", gap) if parsed.format == "markdown" else gap).strip()

    pos = 0
    for unit in parsed.units:
        gap = parsed.text[pos : unit.start]
        assert unit.start >= pos and blank(gap), (unit, gap)
        pos = unit.end
    assert blank(parsed.text[pos:])


def assert_tree_is_consistent(parsed: ParsedDocument) -> None:
    sections = parsed.sections
    assert (sections[0].start, sections[0].end, sections[0].path) == (0, len(parsed.text), ())
    for index, section in enumerate(sections[1:], start=1):
        parent = sections[section.parent_id or 0]
        assert section.section_id == index and section.parent_id is not None and section.parent_id < index
        assert section.path == (*parent.path, section.title) and section.level == parent.level + 1
        assert parent.start <= section.start < section.end <= parent.end
    children: dict[int, list[int]] = {}
    for section in sections[1:]:
        children.setdefault(section.parent_id or 0, []).append(section.section_id)
    for unit in parsed.units:
        home = sections[unit.section_id]
        assert home.start <= unit.start and unit.end <= home.end, unit
        inner = [sections[c] for c in children.get(unit.section_id, [])]
        assert not any(c.start <= unit.start < c.end for c in inner), unit


def check(doc: DocumentInput) -> ParsedDocument:
    parsed = parse_document(doc)
    assert_units_are_exact(parsed)
    assert_tree_is_consistent(parsed)
    assert_units_cover_text(parsed)  # an HTML page's text is its clean text: covered as plain text is
    return parsed


# -- generated documents -------------------------------------------------------------------------

ZH = [
    "打开手机钉钉，点击工作台。",
    "他说：“好。”",
    "（详见第3条。）",
    "费用为3.5元",
    "真的吗？",
    "支持v2.1版本；",
    "请联系客服",
]
EN = [
    "Charge it fully.",
    "See e.g. the manual",
    "Dr. Smith said so!",
    "Visit https://a.example/b.c?d=1.",
    "Why?",
]
MARKERS = ["- ", "* ", "+ ", "1. ", "2) ", "(3) ", "①", "4、", "一、", "（二）", "• "]
HEADINGS = [
    "# 标题",
    "## Setup",
    "###### Deep",
    "1. Introduction",
    "1.2 Scope",
    "第一章 总则",
    "第二条　正文，继续。",
    "一、考勤",
    "（一）打卡",
]
SPACES = [" ", "  ", "\t", "\u3000", "\xa0", ""]
SOUP = [
    *"ab.。,，、!！?？;；:：-*+#|`~=_()（）“”\"'123 \t\n\n\u3000\xa0中文字Z",
    "1. ",
    "- ",
    "```",
    "    ",
    "\r\n",
]


def sentence(rng: random.Random) -> str:
    pool = ZH if rng.random() < 0.6 else EN
    return rng.choice(pool) + ("" if rng.random() < 0.7 else rng.choice(SPACES))


def paragraph(rng: random.Random) -> str:
    parts = [sentence(rng) for _ in range(rng.randint(1, 5))]
    glue = rng.choice([" ", "", "\n", "\u3000\u3000"])
    return glue.join(parts) * (40 if rng.random() < 0.05 else 1)


def text_block(rng: random.Random, markdown: bool) -> str:
    choice = rng.randrange(8 if markdown else 4)
    if choice == 0:
        return paragraph(rng)
    if choice == 1:
        return rng.choice(HEADINGS[3:] if not markdown else HEADINGS)
    if choice == 2:
        return "\n".join(
            rng.choice(["", "  ", "    "]) + rng.choice(MARKERS) + paragraph(rng) for _ in range(3)
        )
    if choice == 3:
        return rng.choice(["---", "***", "===", "- - -"])
    if choice == 4:
        return "| a | b |\n|---|:-:|\n" + "\n".join(
            f"| {sentence(rng)} | {i} |" for i in range(rng.randint(0, 3))
        )
    if choice == 5:
        return "```\n" + paragraph(rng) + "\n\n# x\n" + ("```" if rng.random() < 0.8 else "")
    if choice == 6:
        return "    " + paragraph(rng).replace("\n", "\n    ")
    return paragraph(rng) + "\n" + rng.choice(["=====", "-----"])


def generated_text(seed: int, markdown: bool) -> str:
    rng = random.Random(seed)
    blocks = [text_block(rng, markdown) for _ in range(rng.randint(1, 12))]
    text = "".join(b + rng.choice(["\n", "\n\n", "\n \n", "\n\t\n\n"]) for b in blocks)
    return text.replace("\n", "\r\n") if rng.random() < 0.1 else text


def soup(seed: int) -> str:
    rng = random.Random(seed)
    return "".join(rng.choice(SOUP) for _ in range(rng.randint(0, 400)))


def html_inline(rng: random.Random) -> str:
    text = paragraph(rng).replace("&", "&amp;").replace("<", "&lt;")
    words = text.split(" ")
    for _ in range(rng.randint(0, 3)):
        i = rng.randrange(len(words))
        words[i] = rng.choice(
            ["<b>{}</b>", "<a href='x.html?a=1&amp;b=2'>{}</a>", "{}&nbsp;", "{}<br>", "&#x4e2d;{}"]
        ).format(words[i])
    return " ".join(words)


def html_block(rng: random.Random, depth: int = 0) -> str:
    choice = rng.randrange(9)
    if choice == 0 or depth > 2:
        return f"<p>{html_inline(rng)}</p>"
    if choice == 1:
        return f"<h{rng.randint(1, 6)}>{html_inline(rng)}</h{rng.randint(1, 6)}>"
    if choice == 2:
        items = "".join(
            f"<li>{html_inline(rng)}{html_block(rng, depth + 1) if rng.random() < 0.3 else ''}"
            for _ in range(3)
        )
        return f"<ul>\n{items}</ul>"
    if choice == 3:
        cell = rng.choice(["th", "td"])
        rows = "".join(
            f"<tr><{cell}>{html_inline(rng)}</{cell}><td>{i}</td></tr>\n" for i in range(rng.randint(1, 4))
        )
        return f"<table>{rows}</table>"
    if choice == 4:
        return f"<pre><code>{html_inline(rng)}\n\n  x = 1</code></pre>"
    if choice == 5:
        return "<script>var p = '<p>no</p>';</script><style>p { x: 1 }</style><!-- hidden. -->"
    if choice == 6:
        return f"<div>{html_inline(rng)}<div>{html_block(rng, depth + 1)}</div>{html_inline(rng)}</div>"
    if choice == 7:
        return f"<p>&nbsp;</p>{html_inline(rng)}"
    return f"<ol><li><p>{html_inline(rng)}</p><p>{html_inline(rng)}</p></li></ol>"


def generated_html(seed: int) -> str:
    rng = random.Random(seed)
    body = "\n".join(html_block(rng) for _ in range(rng.randint(1, 10)))
    return f"<!DOCTYPE html>\n<html><head><title>T</title></head><body>\n{body}\n</body></html>"


SEEDS = range(150)


@pytest.mark.parametrize("seed", SEEDS)
def test_generated_plain_text_units_are_exact_and_cover_every_character(seed: int) -> None:
    check(DocumentInput("g", generated_text(seed, markdown=False), format="text"))


@pytest.mark.parametrize("seed", SEEDS)
def test_generated_markdown_units_are_exact_and_cover_every_character(seed: int) -> None:
    check(DocumentInput("g", generated_text(seed, markdown=True), format="markdown"))


@pytest.mark.parametrize("seed", SEEDS)
def test_character_soup_units_are_exact_and_cover_every_character(seed: int) -> None:
    for fmt in ("text", "markdown"):
        check(DocumentInput("g", soup(seed), format=fmt))


@pytest.mark.parametrize("seed", SEEDS)
def test_generated_html_units_are_exact_and_cover_the_clean_text(seed: int) -> None:
    check(DocumentInput("g", generated_html(seed), format="html"))


def test_parsing_is_deterministic() -> None:
    doc = DocumentInput("g", generated_text(7, markdown=True), format="markdown")
    assert parse_document(doc) == parse_document(doc)


# -- real documents ------------------------------------------------------------------------------


def sample_documents() -> list[DocumentInput]:
    manifest = SAMPLE_KB / "manifest.json"
    assert manifest.is_file(), f"the sample knowledge base is missing: no {manifest}"
    entries = json.loads(manifest.read_text(encoding="utf-8"))["documents"]
    return [
        DocumentInput(
            e["doc_id"], (SAMPLE_KB / e["file"]).read_text(encoding="utf-8"), e["version"], format=e["format"]
        )
        for e in entries
    ]


def test_sample_knowledge_base_documents_parse_exactly() -> None:
    docs = sample_documents()
    assert docs, f"{SAMPLE_KB / 'manifest.json'} lists no documents"
    for doc in docs:
        check(doc)


@pytest.mark.parametrize("corpus", EVAL_CASES, ids=lambda p: p.parent.name if isinstance(p, Path) else None)
def test_evaluation_corpus_documents_parse_exactly(corpus: Path | None) -> None:
    assert corpus is not None, f"{EVAL_DIR} holds no */corpus.jsonl"
    with corpus.open(encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            fmt: DocFormat = record.get("format", "text")
            check(DocumentInput(record["doc_id"], record["text"], record.get("version", "1"), format=fmt))
