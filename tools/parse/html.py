"""HTML into blocks, with offsets into the raw source.

A regex tokenizer splits the source into tags, comments, ``<script>``/``<style>`` elements (dropped
with their content) and text. Visible text is collected character by character together with the
raw offsets each character came from, so every unit span starts at a visible character and ends
after one: it may contain inline tags (``<b>``, ``<a href>``) but never starts or ends in a tag.
Entities are decoded for the splitter's sake (``&nbsp;`` is whitespace) while spans keep the raw
entity text. Source newlines are spaces, as a browser shows them; ``<br>`` is a line break that
ends a sentence.

Blocks: ``h1``-``h6`` headings (section anchor = the ``<hN`` tag), ``li`` items (nested lists
raise ``depth``), ``pre`` code, ``tr`` rows and paragraphs for everything else. Inside an item,
row, heading or ``pre``, paragraph tags (``p``, ``div``, cells, ...) do not split the unit. A
table's header is its first row with ``th`` cells; rows before it are read as paragraphs. A table
without ``th`` cells takes its first non-empty row as header.
"""

from __future__ import annotations

import html as _html
import re
from dataclasses import dataclass

from evidence_loop.tools.parse.blocks import Block, BlockKind, HeadingMark, Span
from evidence_loop.tools.parse.lines import collapse
from evidence_loop.tools.parse.sentences import cap_span, split_sentences

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


def visible_text(raw: str) -> str:
    """The text a reader sees in a slice of HTML source (a unit's text): tags, comments, scripts
    and styles removed, block-level tags read as spaces, entities decoded."""

    def replace(token: re.Match[str]) -> str:
        name = (token.group("name") or "").lower()
        return "" if name and name not in _STRUCTURAL and name not in _PARAGRAPH_TAGS else " "

    return _html.unescape(_TOKEN_RE.sub(replace, raw))


def scan_html(text: str) -> list[Block]:
    """Blocks of an HTML document."""
    return _HtmlReader(text).read()
