"""Check the help-centre set: every gold span is in what a reader sees, every refusal is truly unanswerable.

    python benchmarks/helpcentre/check_set.py [SET_DIR]

Reads ``kb/`` (doc_id = path relative to ``kb/`` without the extension, as ``evloop ingest`` derives it)
and ``questions.jsonl``. A document's visible text is, for HTML, the text of ``<body>`` without
``<script>``/``<style>`` (entities decoded, block elements on their own lines); for Markdown, the source
with emphasis, heading and table markers removed (a gold span must also occur in the source itself, so
no span straddles markup); for plain text, the file. Spans are compared with runs of whitespace
(no-break spaces included) collapsed to one space, case and everything else kept.

Checks, each an error that makes the exit status 1:
- fields: unique ids, a known ``expect`` and ``metadata.kind``, ``lang`` matching the script of the
  question, gold doc ids that exist, ``history`` a list of strings;
- ``expect=answer``: each gold answer occurs in the visible text of at least one gold document;
- ``expect=conflict``: two gold documents, and ``metadata.conflict_values`` gives each one a value
  that occurs in that document's visible text;
- ``expect=refuse``: no gold answers, and no term of ``metadata.absent`` occurs anywhere in the kb
  (raw files, page furniture included; ASCII terms as whole words, case-insensitive);
- HTML pages carry their furniture (title, style, script, nav, footer, feedback, related links).

Then prints counts by kind, outcome, language and format. Standard library only.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

ANSWER_KINDS = "fact table_cell procedure yes_no list informal typo extra_context title_nav_words"
REFUSE_KINDS = "deferred_reference unanswerable_model unanswerable_attribute neighbour_model not_mentioned"
KINDS = {
    "answer": {*ANSWER_KINDS.split(), "dangling_reference_answerable", "near_conflict", "followup"},
    "refuse": {*REFUSE_KINDS.split(), "followup"},
    "conflict": {"conflict", "followup"},
}
BLOCK_TAGS = {*"p div br li ul ol table thead tbody tr td th".split(), "h1", "h2", "h3", "h4", "h5", "h6"}
BLOCK_TAGS |= set("section article aside nav header footer main".split())
FURNITURE = {
    "title": re.compile(r"<title>[^<]+\|[^<]+</title>"),
    "style": re.compile(r"<style>"),
    "script": re.compile(r"<script>"),
    "nav breadcrumb": re.compile(r"<nav[^>]*>.*&gt;", re.S),
    "cookie banner": re.compile(r"[Cc]ookie"),
    "footer": re.compile(r"All rights reserved|版权所有"),
    "feedback": re.compile(r"Was this article helpful\?|这篇文章对您有帮助吗"),
    "related links": re.compile(r"Related articles|相关文章"),
}
CJK = re.compile(r"[\u4e00-\u9fff]")
Docs = dict[str, tuple[str, str, str]]  # doc_id -> (format, raw text, visible text)
Question = dict[str, Any]


class _Visible(HTMLParser):
    """Collects the text of <body>, without script and style, one line per block element."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._in_body = False
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "body":
            self._in_body = True
        elif tag in {"script", "style"}:
            self._skip += 1
        elif tag in BLOCK_TAGS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in {"script", "style"}:
            self._skip -= 1
        elif tag in BLOCK_TAGS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self._in_body and not self._skip:
            self.parts.append(data)


def squash(text: str) -> str:
    return " ".join(text.split())


def html_visible(source: str) -> str:
    parser = _Visible()
    parser.feed(source)
    parser.close()
    return "".join(parser.parts)


def markdown_visible(source: str) -> str:
    lines = []
    for line in source.splitlines():
        if re.fullmatch(r"\s*\|?[\s:|-]+\|?\s*", line) and "-" in line:
            continue  # a table's separator row
        line = re.sub(r"^\s*#+\s*", "", line)
        line = line.replace("**", "").replace("__", "").replace("`", "")
        line = line.replace("|", " ")
        lines.append(line)
    return "\n".join(lines)


def read_kb(kb: Path) -> Docs:
    """Every file below ``kb``, by doc_id."""
    docs = {}
    for path in sorted(kb.rglob("*")):
        if not path.is_file() or any(p.startswith(".") for p in path.relative_to(kb).parts):
            continue
        raw = path.read_text(encoding="utf-8")
        fmt = path.suffix.lstrip(".")
        visible = {"html": html_visible, "md": markdown_visible}.get(fmt, lambda s: s)(raw)
        docs[path.relative_to(kb).with_suffix("").as_posix()] = (fmt, raw, visible)
    return docs


def in_doc(span: str, doc: tuple[str, str, str]) -> bool:
    fmt, raw, visible = doc
    found = squash(span) in squash(visible)
    return found and (fmt != "md" or squash(span) in squash(raw))


def term_present(term: str, raw_texts: list[str]) -> bool:
    if term.isascii():
        pattern = re.compile(r"(?<![A-Za-z0-9])" + re.escape(term) + r"(?![A-Za-z0-9])", re.I)
        return any(pattern.search(t) for t in raw_texts)
    return any(term in t for t in raw_texts)


def check_fields(q: Question, seen: set[str], docs: Docs) -> list[str]:
    errors = []
    meta = q.get("metadata") or {}
    if q["id"] in seen:
        errors.append("duplicate id")
    seen.add(q["id"])
    if q["expect"] not in KINDS:
        return [*errors, f"unknown expect {q['expect']!r}"]
    if meta.get("kind") not in KINDS[q["expect"]]:
        errors.append(f"kind {meta.get('kind')!r} with expect {q['expect']}")
    want_lang = "zh" if CJK.search(q["question"]) else "en"
    if q.get("lang") != want_lang:
        errors.append(f"lang {q.get('lang')!r}, question reads {want_lang}")
    errors += [f"unknown gold doc {d}" for d in q.get("gold_doc_ids", []) if d not in docs]
    errors += [f"unknown tempting doc {d}" for d in meta.get("tempting_doc_ids", []) if d not in docs]
    history = q.get("history")
    if history is not None and not (isinstance(history, list) and all(isinstance(h, str) for h in history)):
        errors.append("history is not a list of strings")
    return errors


def check_outcome(q: Question, docs: Docs, raw_texts: list[str]) -> list[str]:
    meta = q.get("metadata") or {}
    gold_docs = [docs[d] for d in q.get("gold_doc_ids", []) if d in docs]
    if q["expect"] == "answer":
        if not q.get("gold_answers") or not gold_docs:
            return ["answerable without gold answers or gold docs"]
        return [
            f"gold {g!r} is in no gold document"
            for g in q["gold_answers"]
            if not any(in_doc(g, d) for d in gold_docs)
        ]
    if q["expect"] == "conflict":
        values = meta.get("conflict_values") or {}
        if len(set(q.get("gold_doc_ids", []))) != 2 or set(values) != set(q["gold_doc_ids"]):
            return ["a conflict needs two gold docs, each with its value in metadata.conflict_values"]
        return [f"conflict value {v!r} is not in {d}" for d, v in values.items() if not in_doc(v, docs[d])]
    errors = ["a refusal has gold answers"] if q.get("gold_answers") else []
    return errors + [
        f"'absent' term {t!r} occurs in the kb" for t in meta.get("absent", []) if term_present(t, raw_texts)
    ]


def check_furniture(docs: Docs) -> list[str]:
    errors = []
    for doc_id, (fmt, raw, _) in docs.items():
        if fmt == "html":
            errors += [f"{doc_id}: no {name}" for name, rx in FURNITURE.items() if not rx.search(raw)]
    return errors


def print_counts(questions: list[Question], docs: Docs) -> None:
    by_kind = Counter((q["metadata"]["kind"], q["expect"], q["lang"]) for q in questions)
    kinds = sorted({k for k, _, _ in by_kind})
    print(f"{'kind':32}{'expect':>10}{'en':>5}{'zh':>5}{'all':>6}")
    for kind in kinds:
        for expect in ("answer", "refuse", "conflict"):
            en, zh = by_kind[(kind, expect, "en")], by_kind[(kind, expect, "zh")]
            if en + zh:
                print(f"{kind:32}{expect:>10}{en:>5}{zh:>5}{en + zh:>6}")
    outcomes = Counter(q["expect"] for q in questions)
    langs = Counter(q["lang"] for q in questions)
    n = len(questions)
    print(f"\nquestions {n}: " + ", ".join(f"{k} {v} ({v / n:.0%})" for k, v in sorted(outcomes.items())))
    print("languages: " + ", ".join(f"{k} {v}" for k, v in sorted(langs.items())))
    print(f"with history: {sum(1 for q in questions if q.get('history'))}")
    pairs = {tuple(sorted(q["gold_doc_ids"])) for q in questions if q["expect"] == "conflict"}
    print(f"planted conflicts (distinct document pairs): {len(pairs)}")
    fmts = Counter((doc_id.split("/")[0], fmt) for doc_id, (fmt, _, _) in docs.items())
    shares = ", ".join(f"{lang}/{fmt} {v}" for (lang, fmt), v in sorted(fmts.items()))
    print(f"\narticles {len(docs)}: {shares}")


def main(argv: list[str]) -> int:
    set_dir = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parent
    docs = read_kb(set_dir / "kb")
    raw_texts = [raw for _, raw, _ in docs.values()]
    with (set_dir / "questions.jsonl").open(encoding="utf-8") as f:
        questions = [json.loads(line) for line in f if line.strip()]
    errors = check_furniture(docs)
    seen: set[str] = set()
    for q in questions:
        problems = check_fields(q, seen, docs)
        problems += [] if problems else check_outcome(q, docs, raw_texts)
        errors += [f"{q['id']}: {p}" for p in problems]
    print_counts(questions, docs)
    for e in errors:
        print("ERROR", e)
    print(f"\n{len(errors)} error(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
