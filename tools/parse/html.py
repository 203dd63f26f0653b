"""HTML into its clean text and blocks: what a reader sees of the main content, offsets exact on it.

The page is read with lxml and its main content chosen in ``html_page.py`` (why lxml, and what is
page furniture). Its blocks are written out as a new text, the version's stored text, so that every
unit is clean (no tag, entity, script or style text) and ``text[start:end]`` of it is what the answer
shows and quotes:

- a heading (``h1``-``h6``) on its own line; it opens a section as before (family "html");
- a paragraph (``p``, ``div``, ``section``, a run of inline text, ...) with its spaces collapsed and
  entities decoded; ``<br>`` ends it (a line break ends a sentence); inline elements (``b``, ``a``,
  ``code``, ...) are read as their text;
- a list item (``li``) on its own line, as ``1. `` (an ``ol``, its ``start`` and ``value`` kept) or
  ``- `` (a ``ul``) and its text, nested lists indented two spaces per level;
- a table as a pipe table: the header row (the first row with ``th`` cells, else the first row)
  followed by ``| --- |`` is one ``table_header`` unit, each later row one ``table_row``
  (``| cell | cell |``, a ``|`` inside a cell written ``\\|``), as a Markdown table reads; rows before
  a ``th`` header and the ``caption`` are paragraphs; a table whose cells hold headings or tables
  lays a page out and is read as its cells' content;
- ``pre`` as one code block, its lines as written.

Blocks are separated by a blank line; the items of one list and the rows of one table by a newline.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from evidence_loop.tools.parse.blocks import Block, BlockKind, HeadingMark, Span
from evidence_loop.tools.parse.html_page import (
    HEADINGS,
    INLINE,
    HtmlElement,
    Skip,
    collapse_space,
    element_text,
    page_title,
    read_tree,
    readings,
)
from evidence_loop.tools.parse.sentences import cap_span, split_sentences

_LISTS = ("ul", "ol")
_LAYOUT_CELL = ".//table | .//h1 | .//h2 | .//h3 | .//h4 | .//h5 | .//h6"
_INT_RE = re.compile(r"-?\d{1,9}")


@dataclass(frozen=True, slots=True)
class CleanPage:
    """An HTML page's clean text and its blocks (spans into that text)."""

    text: str
    blocks: tuple[Block, ...]


@dataclass(slots=True)
class _Writer:
    """The clean text as it is written, block by block (mutable while one page is read)."""

    parts: list[str] = field(default_factory=list)
    length: int = 0
    blocks: list[Block] = field(default_factory=list)
    group: int | None = None  # the list or table the last block belongs to

    def add(
        self,
        kind: BlockKind,
        text: str,
        local: list[Span],
        *,
        group: int | None = None,
        rank: int = 0,
        depth: int = 0,
    ) -> None:
        """Append one block's text and its spans (``local`` into ``text``); ``group`` numbers the list or
        table it belongs to, ``rank`` a heading's level, ``depth`` a list item's nesting."""
        if self.parts:
            separator = "\n" if group is not None and group == self.group else "\n\n"
            self.parts.append(separator)
            self.length += len(separator)
        start = self.length
        self.parts.append(text)
        self.length += len(text)
        self.group = group
        spans = tuple((start + a, start + b) for a, b in local)
        heading = HeadingMark("html", rank, text, start) if kind == "heading" else None
        self.blocks.append(Block(kind, spans, heading, depth))


class _Reader:
    """Walks one reading of a page (a root and what to skip) into the writer."""

    def __init__(self, skip: Skip) -> None:
        self.skip = skip
        self.out = _Writer()
        self.buffer: list[str] = []
        self.groups = 0

    def read(self, root: HtmlElement) -> CleanPage:
        self.flow(root)
        self.paragraph()
        return CleanPage("".join(self.out.parts), tuple(self.out.blocks))

    def flow(self, el: HtmlElement) -> None:
        """An element's content: inline text gathers into the open paragraph, blocks end it."""
        if el.text:
            self.buffer.append(el.text)
        for child in el:
            if isinstance(child.tag, str) and not self.skip(child):
                self.element(child)
            if child.tail:
                self.buffer.append(child.tail)

    def element(self, el: HtmlElement) -> None:
        tag = el.tag
        if tag in INLINE:
            self.flow(el)
            return
        self.paragraph()
        if tag in HEADINGS:
            self.heading(el, HEADINGS[tag])
        elif tag in _LISTS:
            self.groups += 1
            self.read_list(el, 0)
        elif tag == "table":
            self.table(el)
        elif tag == "pre":
            self.code(el)
        elif tag != "br":
            self.flow(el)
            self.paragraph()

    # -- blocks --------------------------------------------------------------------------------

    def paragraph(self) -> None:
        """The gathered inline text as a paragraph of sentences."""
        text = collapse_space("".join(self.buffer))
        self.buffer = []
        if text:
            self.out.add("paragraph", text, split_sentences(text))

    def heading(self, el: HtmlElement, rank: int) -> None:
        text = element_text(el, self.skip)
        if text:
            self.out.add("heading", text, [(0, len(text))], rank=rank)

    def code(self, el: HtmlElement) -> None:
        """A ``pre`` block as written: its first newline and trailing blanks dropped."""
        text = "".join(el.itertext()).replace("\r\n", "\n").removeprefix("\n").rstrip()
        lead = len(text) - len(text.lstrip())
        if text.strip():
            self.out.add("code", text, [(lead, len(text))])

    def read_list(self, el: HtmlElement, depth: int) -> None:
        """The items of a ``ul``/``ol``, numbered as the page numbers them."""
        number = _int(el.get("start"), 1)
        for child in el:
            if not isinstance(child.tag, str) or self.skip(child):
                continue
            if child.tag in _LISTS:
                self.read_list(child, depth + 1)
                continue
            number = _int(child.get("value"), number)
            marker = f"{number}. " if el.tag == "ol" else "- "
            self.item(child, depth, marker)
            number += 1

    def item(self, li: HtmlElement, depth: int, marker: str) -> None:
        """One item on its own line; a nested list inside it follows as deeper items."""
        pieces: list[str] = [li.text or ""]
        for child in li:
            if isinstance(child.tag, str) and not self.skip(child):
                if child.tag in _LISTS:
                    self.item_line(pieces, depth, marker)
                    pieces, marker = [], "  "
                    self.read_list(child, depth + 1)
                else:
                    pieces.append(" " if child.tag not in INLINE else "")
                    pieces.append(element_text(child, self.skip))
                    pieces.append(" " if child.tag not in INLINE else "")
            pieces.append(child.tail or "")
        self.item_line(pieces, depth, marker)

    def item_line(self, pieces: list[str], depth: int, marker: str) -> None:
        text = collapse_space("".join(pieces))
        if not text:
            return
        line = "  " * depth + marker.strip() + " " + text if marker.strip() else "  " * depth + text
        lead = 2 * depth
        whole = (lead, len(line))
        spans = split_sentences(line) if len(cap_span(line, *whole)) > 1 else [whole]
        self.out.add("list_item", line, spans, group=self.groups, depth=depth)

    def table(self, table: HtmlElement) -> None:
        """A data table as pipe rows under its header; a layout table as its cells' content."""
        rows = table.xpath("./tr | ./thead/tr | ./tbody/tr | ./tfoot/tr")
        cells = [[c for c in row if c.tag in ("td", "th") and not self.skip(c)] for row in rows]
        if any(c.xpath(_LAYOUT_CELL) for row in cells for c in row):
            for row in cells:
                for cell in row:
                    self.flow(cell)
                    self.paragraph()
            return
        for caption in table.iterchildren("caption"):
            self.flow(caption)
            self.paragraph()
        self.groups += 1
        self.rows(cells)

    def rows(self, cells: list[list[HtmlElement]]) -> None:
        has_th = any(c.tag == "th" for row in cells for c in row)
        header_done = False
        for row in cells:
            texts = [element_text(c, self.skip).replace("|", "\\|") for c in row]
            if not any(texts):
                continue
            line = "| " + " | ".join(texts) + " |"
            if header_done:
                self.out.add("table_row", line, [(0, len(line))], group=self.groups)
            elif has_th and not any(c.tag == "th" for c in row):
                caption = " ".join(t for t in texts if t)
                self.out.add("paragraph", caption, [(0, len(caption))])
            else:
                header_done = True
                line += "\n| " + " | ".join("---" for _ in texts) + " |"
                self.out.add("table_header", line, [(0, len(line))], group=self.groups)


def _int(value: str | None, default: int) -> int:
    found = _INT_RE.fullmatch((value or "").strip())
    return int(found.group()) if found else default


def read_html(source: str) -> CleanPage:
    """The clean text and blocks of an HTML page: its main content, else its body (``html_page``)."""
    page = read_tree(source)
    if page is None:
        return CleanPage("", ())
    for root, skip in readings(page):
        clean = _Reader(skip).read(root)
        if clean.blocks:
            return clean
    return CleanPage("", ())


def html_title(source: str) -> str:
    """A page's title: its main content's first ``<h1>``, else its ``<title>`` without the site's
    name ("Reset your password | Acme Help" -> "Reset your password"), else its first heading, else ""."""
    page = read_tree(source)
    return page_title(page) if page is not None else ""
