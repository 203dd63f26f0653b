"""The parse of evidence-loop before clean HTML text (commit 75694be), to rebuild a store as it wrote it.

The golden and written traces were recorded against stores that held each HTML page as its source,
its units spans of that source (inline tags and entities inside them). A deployed store keeps such
versions as they are; a test that rebuilds the recorded store from the sample pages must parse them
as that evloop did, so ``legacy_parse`` is passed to ``Store.ingest(parse=...)``. The HTML reader
below is the one of ``tools/parse/html.py`` at that commit, unchanged; text and Markdown parse as
they still do.
"""

from __future__ import annotations

import html as _html
import re
from dataclasses import dataclass

from evidence_loop.tools.parse import parse_document
from evidence_loop.tools.parse.assemble import assemble_units
from evidence_loop.tools.parse.blocks import Block, BlockKind, HeadingMark, Span
from evidence_loop.tools.parse.lines import collapse
from evidence_loop.tools.parse.sections import build_sections
from evidence_loop.tools.parse.sentences import cap_span, split_sentences
from evidence_loop.tools.types import DocumentInput, ParsedDocument

_TOKEN_RE = re.compile(
    r"""<!--.*?(?:-->|\Z)
      | <(?P<raw>script|style)\b(?:"[^"]*"|'[^']*'|[^'">])*>.*?(?:</(?P=raw)\s*>|\Z)
      | <!\[CDATA\[.*?(?:\]\]>|\Z)
      | <[!?][^>]*(?:>|\Z)
      | <(?P<close>/?)(?P<name>[A-Za-z][A-Za-z0-9:-]*)(?:"[^"]*"|'[^']*'|[^'">])*?(?P<void>/?)>""",
    re.IGNORECASE | re.DOTALL | re.VERBOSE,
)
_ENTITY_RE = re.compile(r"&(?:#[0-9]{1,7};?|#[xX][0-9a-fA-F]{1,6};?|[A-Za-z][A-Za-z0-9]{1,31};?)")
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_STRUCTURAL = {"li", "tr", "pre", "table", "ul", "ol", *_HEADINGS}
_INNER = {"li", "tr", "pre", *_HEADINGS}  # contexts that hold one unit: paragraph tags do not split them
# A <br> is a line break; outside <pre> it becomes a blank line, where the splitter always ends a sentence.
_SEPARATORS = {("br", True): "\n", ("br", False): "\n\n"}
# fmt: off
_PARAGRAPH_TAGS = frozenset({
    "p", "div", "section", "article", "aside", "header", "footer", "nav", "main", "blockquote", "figure",
    "figcaption", "dl", "dt", "dd", "address", "details", "summary", "form", "fieldset", "legend", "hr",
    "center", "caption", "thead", "tbody", "tfoot", "title", "head", "body", "html", "option", "select",
    "textarea", "noscript", "hgroup", "menu", "dir", "iframe", "td", "th", "br",
})
_VOID = frozenset({
    "br", "hr", "img", "input", "meta", "link", "area", "base", "col", "embed", "param", "source", "track",
    "wbr",
})
# fmt: on


@dataclass(slots=True)
class _Context:
    """An open structural element (mutable while the document is read)."""

    tag: str
    start: int
    has_th: bool = False  # table: some row has th cells; tr: this row has th cells
    header_done: bool = False
    kind: BlockKind | None = None  # tr: the kind chosen at its first flush
    emitted: bool = False  # heading: its heading block was emitted


class _HtmlReader:
    """Turns one HTML source into blocks."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.blocks: list[Block] = []
        self.stack: list[_Context] = []
        self.chars: list[str] = []
        self.starts: list[int] = []
        self.ends: list[int] = []
        self.th_tables: set[int] = set()

    def read(self) -> list[Block]:
        """All blocks of the document in order."""
        tokens = list(_TOKEN_RE.finditer(self.text))
        self.th_tables = _tables_with_th(tokens)
        pos = 0
        for token in tokens:
            self.add_text(pos, token.start())
            if token.group("name"):
                self.tag(token)
            pos = token.end()
        self.add_text(pos, len(self.text))
        self.flush()
        return self.blocks

    # -- visible text ------------------------------------------------------------------------

    def add_text(self, start: int, end: int) -> None:
        """Append raw text ``[start, end)``: entities decoded, newlines as spaces outside ``pre``."""
        if start >= end:
            return
        in_pre = any(ctx.tag == "pre" for ctx in self.stack)
        pos = start
        for entity in _ENTITY_RE.finditer(self.text, start, end):
            self.add_plain(pos, entity.start(), in_pre)
            decoded = _html.unescape(entity.group())
            if decoded == entity.group():
                # Not a known entity: plain text, so that no span boundary can fall inside it.
                self.add_plain(entity.start(), entity.end(), in_pre)
            else:
                for char in decoded:
                    self.add_char(char, entity.start(), entity.end())
            pos = entity.end()
        self.add_plain(pos, end, in_pre)

    def add_plain(self, start: int, end: int, in_pre: bool) -> None:
        """Append entity-free raw text one character per raw offset."""
        chunk = self.text[start:end]
        self.chars.append(chunk if in_pre else chunk.replace("\n", " "))
        self.starts.extend(range(start, end))
        self.ends.extend(range(start + 1, end + 1))

    def add_char(self, char: str, start: int, end: int) -> None:
        """Append one visible character that stands for raw ``[start, end)``."""
        self.chars.append(char)
        self.starts.append(start)
        self.ends.append(end)

    # -- tags --------------------------------------------------------------------------------

    def tag(self, token: re.Match[str]) -> None:
        """React to one start or end tag."""
        name = token.group("name").lower()
        closing = bool(token.group("close"))
        if name in _STRUCTURAL:
            self.flush()
            if closing:
                self.close(name)
            elif name not in _VOID and not token.group("void"):
                self.open(name, token.start())
        elif name in _PARAGRAPH_TAGS:
            self.paragraph_tag(name, closing, token.start())
        if name == "th" and not closing:
            row = self.innermost({"tr", "table"})
            if row is not None and row.tag == "tr":
                row.has_th = True

    def paragraph_tag(self, name: str, closing: bool, at: int) -> None:
        """Paragraph tags end a paragraph, but only separate words inside an item, row or heading."""
        inner = self.innermost(_INNER | {"table", "ul", "ol"})
        if inner is None or inner.tag not in _INNER:
            self.flush()
            return
        separator = _SEPARATORS.get((name, inner.tag == "pre"), " ")
        for char in separator:
            self.add_char(char, at, at + 1)

    def open(self, name: str, at: int) -> None:
        """Push a structural element, closing what HTML closes implicitly before it."""
        implied = {"li": {"li", "ul", "ol", "table"}, "tr": {"tr", "table"}}.get(name)
        if implied is not None:
            found = self.innermost(implied)
            if found is not None and found.tag == name:
                self.close(name)
        elif name in _HEADINGS:
            found = self.innermost(set(_HEADINGS))
            if found is not None:
                self.close(found.tag)
        self.stack.append(_Context(name, at, has_th=name == "table" and at in self.th_tables))

    def close(self, name: str) -> None:
        """Pop up to and including the innermost open ``name``; stray end tags are ignored."""
        for index in range(len(self.stack) - 1, -1, -1):
            if self.stack[index].tag == name:
                del self.stack[index:]
                return

    def innermost(self, tags: set[str]) -> _Context | None:
        """The innermost open element whose tag is in ``tags``."""
        for ctx in reversed(self.stack):
            if ctx.tag in tags:
                return ctx
        return None

    # -- blocks ------------------------------------------------------------------------------

    def flush(self) -> None:
        """Turn the collected visible text into a block of the current context."""
        visible = "".join(self.chars)
        starts, ends = self.starts, self.ends
        self.chars, self.starts, self.ends = [], [], []
        if not visible.strip():
            return
        ctx = self.innermost(_INNER)
        kind: BlockKind = "paragraph"
        mark: HeadingMark | None = None
        if ctx is not None and ctx.tag in _HEADINGS and not ctx.emitted:
            ctx.emitted = True
            kind = "heading"
            mark = HeadingMark("html", _HEADINGS[ctx.tag], collapse(visible), ctx.start)
        elif ctx is not None and ctx.tag == "pre":
            kind = "code"
        elif ctx is not None and ctx.tag == "tr":
            kind = self.row_kind(ctx)
        elif ctx is not None and ctx.tag == "li":
            kind = "list_item"
        local = _local_spans(visible, kind)
        spans = tuple((starts[a], ends[b - 1]) for a, b in local)
        depth = max(0, sum(1 for c in self.stack if c.tag in ("ul", "ol")) - 1)
        self.blocks.append(Block(kind, spans, mark, depth if kind == "list_item" else 0))

    def row_kind(self, row: _Context) -> BlockKind:
        """Header, body row, or (before a ``th`` header) a caption-like paragraph."""
        if row.kind is not None:
            return row.kind
        table = self.innermost({"table"})
        kind: BlockKind = "table_row"
        if table is not None and not table.header_done:
            if row.has_th or not table.has_th:
                table.header_done = True
                kind = "table_header"
            else:
                kind = "paragraph"
        row.kind = kind
        return kind


def _local_spans(visible: str, kind: BlockKind) -> list[Span]:
    """Unit spans inside the visible text of one block."""
    stripped = visible.strip()
    start = len(visible) - len(visible.lstrip())
    whole = (start, start + len(stripped))
    if kind == "paragraph" or (kind == "list_item" and len(cap_span(visible, *whole)) > 1):
        return split_sentences(visible)
    return [whole]


def _tables_with_th(tokens: list[re.Match[str]]) -> set[int]:
    """Start offsets of the ``<table>`` tags whose own rows contain a ``th`` cell."""
    found: set[int] = set()
    open_tables: list[int] = []
    for token in tokens:
        name = (token.group("name") or "").lower()
        if name == "table":
            if token.group("close"):
                if open_tables:
                    open_tables.pop()
            else:
                open_tables.append(token.start())
        elif name == "th" and not token.group("close") and open_tables:
            found.add(open_tables[-1])
    return found


def scan_html(text: str) -> list[Block]:
    """Blocks of an HTML document."""
    return _HtmlReader(text).read()


def legacy_parse(doc: DocumentInput) -> ParsedDocument:
    """A document as evloop parsed it at 75694be: an HTML page stored as its source."""
    if doc.format != "html":
        return parse_document(doc)
    blocks = [block for block in scan_html(doc.text) if block.spans]
    sections, block_sections = build_sections(doc.text, doc.title, blocks)
    units = assemble_units(doc.doc_id, doc.version, doc.text, blocks, block_sections)
    return ParsedDocument(doc.doc_id, doc.version, doc.title, doc.format, doc.text, sections, units)
