"""What the HTML parse keeps and drops, and what it costs: the chosen reading against the regex reader of
75694be and the main-content extractors it was chosen over.

    OMP_NUM_THREADS=1 PYTHONPATH=. python benchmarks/bench_html.py [--pages 200] [--corpus CORPUS.jsonl ...]

Table 1, per candidate on the furnished pages of ``tests/html_pages.py``: furniture phrases left in
its text (of ``FURNITURE``: navigation, cookie banner, votes, related links, footer, title suffix,
script and style text), article phrases kept as a reader sees them (of ``CONTENT``), whether a div-only
article and a table-only page keep their text, and milliseconds per page over ``--pages`` generated
furnished pages. Candidates whose package is not installed are skipped (trafilatura, readability-lxml,
jusText, selectolax, BeautifulSoup with html5lib are not dependencies; install them to compare).

Table 2, per-page parse time (``parse_document``) of the 75694be reader (``tests/legacy_parse.py``)
and of the clean parse, alternating page by page, and the units holding markup or entities under
each, on the generated pages and on each ``--corpus`` file (e.g. ../shared/eval/emanual_en/corpus.jsonl).
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from evidence_loop.tools.parse import parse_document
from evidence_loop.tools.parse.html import read_html
from evidence_loop.tools.parse.sources import read_corpus_jsonl
from evidence_loop.tools.types import DocumentInput, ParsedDocument
from tests.html_pages import (
    CONTENT,
    FURNITURE,
    MARKUP_RE,
    div_page,
    furnished_page,
    generated_pages,
    table_page,
)
from tests.legacy_parse import legacy_parse

Extract = Callable[[str], str]


def _spaced(text: str) -> str:
    return " ".join(text.split())


def _legacy_text(page: str) -> str:
    parsed = legacy_parse(DocumentInput("p", page, format="html"))
    return "\n".join(u.text for u in parsed.units)


def _trafilatura(page: str) -> str:
    import trafilatura  # type: ignore[import-not-found]

    return str(trafilatura.extract(page, include_tables=True, include_comments=False) or "")


def _readability(page: str) -> str:
    from lxml import html as lxml_html
    from readability import Document  # type: ignore[import-not-found]

    summary = Document(page).summary(html_partial=True)
    return str(lxml_html.fromstring(summary).text_content()) if summary.strip() else ""


def _justext(page: str) -> str:
    import justext  # type: ignore[import-not-found]

    paragraphs = justext.justext(page.encode(), justext.get_stoplist("English"))
    return "\n".join(p.text for p in paragraphs if not p.is_boilerplate)


def _selectolax(page: str) -> str:
    from selectolax.lexbor import LexborHTMLParser  # type: ignore[import-not-found]

    tree = LexborHTMLParser(page)
    tree.strip_tags(["script", "style", "noscript", "head"])
    return str(tree.body.text(separator="\n")) if tree.body is not None else ""


def _bs4(page: str) -> str:
    from bs4 import BeautifulSoup  # type: ignore[import-not-found]

    soup = BeautifulSoup(page, "html5lib")
    for tag in soup(["script", "style", "noscript", "head"]):
        tag.decompose()
    return str(soup.get_text("\n"))


CANDIDATES: dict[str, tuple[str | None, Extract]] = {
    "evloop (lxml)": (None, lambda page: read_html(page).text),
    "regex 75694be": (None, _legacy_text),
    "trafilatura": ("trafilatura", _trafilatura),
    "readability-lxml": ("readability", _readability),
    "jusText": ("justext", _justext),
    "selectolax": ("selectolax", _selectolax),
    "bs4+html5lib": ("bs4", _bs4),
}


def _pieces(content: str) -> list[str]:
    """An article phrase without the clean text's own layout (list markers, table pipes), so that an
    extractor that lays text out otherwise is judged on the words it keeps."""
    bare = re.sub(r"^(?:\d+\. |- )", "", content)
    return [cell for cell in bare.strip("| ").split(" | ")] if bare.startswith("|") else [bare]


def _per_page_ms(extract: Extract, pages: Sequence[str]) -> float:
    times = []
    for page in pages:
        started = time.perf_counter()
        extract(page)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def candidates_table(pages: Sequence[str]) -> None:
    heads = f"{'furniture left':>16}{'content kept':>14}{'div page':>10}{'table page':>12}{'ms/page':>9}"
    print(f"{'candidate':<18}{heads}")
    for name, (module, extract) in CANDIDATES.items():
        if module is not None and importlib.util.find_spec(module) is None:
            print(f"{name:<18}  (not installed)")
            continue
        text = _spaced(extract(furnished_page()))
        left = sum(1 for f in FURNITURE if f in text)
        kept = sum(1 for c in CONTENT if all(_spaced(piece) in text for piece in _pieces(c)))
        div = "kept" if "Standard delivery takes 3 to 5" in extract(div_page()) else "lost"
        table = "kept" if "9:00-17:00 ET" in extract(table_page()) else "lost"
        ms = _per_page_ms(extract, pages)
        cells = f"{left:>9} of {len(FURNITURE)}{kept:>8} of {len(CONTENT)}{div:>10}{table:>12}{ms:>9.2f}"
        print(f"{name:<18}{cells}")


def _with_markup(parsed: ParsedDocument) -> int:
    return sum(1 for u in parsed.units if MARKUP_RE.search(u.text))


def parse_table(name: str, docs: Sequence[DocumentInput]) -> None:
    """Median ms per document and units with markup, old reader and clean parse alternating."""
    times: dict[str, list[float]] = {"old": [], "new": []}
    markup = {"old": 0, "new": 0}
    units = {"old": 0, "new": 0}
    for n, doc in enumerate(docs):
        order = [("old", legacy_parse), ("new", parse_document)]
        for label, parse in order if n % 2 == 0 else order[::-1]:
            started = time.perf_counter()
            parsed = parse(doc)
            times[label].append((time.perf_counter() - started) * 1000)
            markup[label] += _with_markup(parsed)
            units[label] += len(parsed.units)
    old, new = statistics.median(times["old"]), statistics.median(times["new"])
    print(
        f"{name:<28}{len(docs):>6}{old:>10.3f}{new:>10.3f}{new / old:>8.2f}x"
        f"{markup['old']:>8} of {units['old']:<6}{markup['new']:>6} of {units['new']}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pages", type=int, default=200, help="generated furnished pages to time")
    parser.add_argument(
        "--corpus", type=Path, action="append", default=[], help="a corpus.jsonl to parse too"
    )
    args = parser.parse_args()
    pages = generated_pages(args.pages)
    candidates_table(pages)
    heads = f"{'old ms':>10}{'new ms':>10}{'ratio':>9}{'markup units old':>18}{'new':>8}"
    print(f"\n{'documents':<28}{'n':>6}{heads}")
    parse_table(
        "generated furnished pages", [DocumentInput(f"p{n}", p, format="html") for n, p in enumerate(pages)]
    )
    tests = {"furnished": furnished_page(), "div page": div_page(), "table page": table_page()}
    parse_table("test pages", [DocumentInput(k, v, format="html") for k, v in tests.items()])
    for corpus in args.corpus:
        parse_table(corpus.parent.name or corpus.name, read_corpus_jsonl(corpus))


if __name__ == "__main__":
    main()
