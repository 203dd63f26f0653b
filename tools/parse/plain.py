"""Plain text into blocks: numbered and Chinese headings, list items, paragraphs.

The scanner walks the lines once. At each block start it tries the readers in order (a separator
line, a heading, a list item, a paragraph); the Markdown reader (``markdown.py``) subclasses it
and adds fences, ``#`` headings, tables and indented code in front of them.

List items: a marker line (``-``, ``*``, ``+``, ``1.``, ``1)``, ``(1)``, ``①``, ``1、``, and
``一、``/``（一）`` lines that fail the heading test) plus its continuation lines: lines indented to
the item's content column (also after blank lines), and unindented wrapped lines right after it
when the item is not Chinese (Chinese text is not hard-wrapped, so a new line is a new block).
A marker indented deeper than the open item starts a nested item (``depth`` + 1).
"""

from __future__ import annotations

from collections.abc import Callable

from evidence_loop.tools.parse.blocks import Block, HeadingMark, Span
from evidence_loop.tools.parse.lines import (
    BREAK_RE,
    LIST_MARKER_RE,
    HeadingCandidate,
    marker_style,
    match_heading,
    split_lines,
)
from evidence_loop.tools.parse.sentences import cap_span, is_cjk_dominant, split_sentences, trim

Reader = Callable[[int], int | None]


class TextScanner:
    """Splits plain text into blocks; one instance per document."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = split_lines(text)
        self.blocks: list[Block] = []
        # Open list items as (marker column, content column), outermost first.
        self.items: list[tuple[int, int]] = []

    def scan(self) -> list[Block]:
        """All blocks of the document in order."""
        readers = self.readers()
        i = 0
        while i < len(self.lines):
            if self.lines[i].blank:
                i += 1
                continue
            for reader in readers:
                nxt = reader(i)
                if nxt is not None:
                    i = nxt
                    break
        return self.blocks

    def readers(self) -> list[Reader]:
        """Block readers tried in order at a block start; the last one always succeeds."""
        return [self.read_break, self.read_text_heading, self.read_list_item, self.read_paragraph]

    # -- helpers -----------------------------------------------------------------------------

    def content(self, i: int) -> str:
        """The stripped content of line ``i``."""
        line = self.lines[i]
        return self.text[line.lead : line.tail]

    def neighbour(self, i: int, step: int) -> int | None:
        """Index of the nearest non-blank line before (``step=-1``) or after (``+1``) line ``i``."""
        j = i + step
        while 0 <= j < len(self.lines):
            if not self.lines[j].blank:
                return j
            j += step
        return None

    def interrupts(self, i: int) -> bool:
        """True when line ``i`` starts a new block even right after a paragraph line."""
        content = self.content(i)
        return bool(BREAK_RE.fullmatch(content) or LIST_MARKER_RE.match(content) or self.heading_at(i))

    def emit(self, block: Block) -> None:
        """Append a block; anything but a list item closes the open list."""
        if block.kind != "list_item":
            self.items.clear()
        self.blocks.append(block)

    def emit_paragraph(self, start: int, end: int) -> None:
        """A paragraph ``text[start:end]`` split into sentences."""
        spans = tuple((start + a, start + b) for a, b in split_sentences(self.text[start:end]))
        if spans:
            self.emit(Block("paragraph", spans))

    # -- readers -----------------------------------------------------------------------------

    def read_break(self, i: int) -> int | None:
        """A separator line (``---``, ``***``, ``===``): kept as a one-sentence paragraph."""
        line = self.lines[i]
        if not BREAK_RE.fullmatch(self.content(i)):
            return None
        self.emit(Block("paragraph", ((line.lead, line.tail),)))
        return i + 1

    def heading_at(self, i: int) -> HeadingCandidate | None:
        """The numbered or Chinese heading on line ``i``, unless the line belongs to a list."""
        content = self.content(i)
        found = match_heading(content)
        if found is None or found.style is None:
            return found
        for j in (self.neighbour(i, -1), self.neighbour(i, 1)):
            if j is not None and marker_style(self.content(j)) == found.style:
                return None
        before = self.neighbour(i, -1)
        if before is not None and self.content(before).endswith((":", "：")):
            return None
        return found

    def read_text_heading(self, i: int) -> int | None:
        """A numbered (``1.2 Title``) or Chinese (``第一章``, ``一、``, ``（一）``) heading line."""
        found = self.heading_at(i)
        if found is None:
            return None
        line = self.lines[i]
        end = line.lead + found.length
        mark = HeadingMark(found.family, found.rank, found.title, line.lead)
        self.emit(Block("heading", ((line.lead, end),), mark))
        if end < line.tail:
            # "第一条　body…": the body after the marker opens a paragraph on the same line.
            return self.read_paragraph(i, first_start=trim(self.text, end, line.tail)[0])
        return i + 1

    def read_list_item(self, i: int) -> int | None:
        """A list item: its marker line and continuation lines, one unit unless very long."""
        line = self.lines[i]
        marker = LIST_MARKER_RE.match(self.text, line.lead, line.tail)
        if marker is None:
            return None
        content_col = line.indent + max(1, marker.end() - line.lead)
        while self.items and self.items[-1][0] >= line.indent:
            self.items.pop()
        depth = len(self.items)
        last = self.item_extent(i, content_col)
        span = trim(self.text, line.lead, self.lines[last].tail)
        self.emit(Block("list_item", tuple(self.item_spans(span)), depth=depth))
        self.items.append((line.indent, content_col))
        return last + 1

    def item_extent(self, i: int, content_col: int) -> int:
        """Index of the last line that belongs to the item opened on line ``i``."""
        last = i
        j = i + 1
        while j < len(self.lines):
            line = self.lines[j]
            if line.blank:
                k = self.neighbour(j, 1)
                if k is None or self.lines[k].indent < content_col or self.is_marker(k):
                    break
                last = j = k
            elif self.is_marker(j) or self.fence_at(j):
                break
            elif line.indent >= content_col or self.lazy_continues(last, j):
                last = j
            else:
                break
            j += 1
        return last

    def is_marker(self, i: int) -> bool:
        """True when line ``i`` opens with a list marker."""
        line = self.lines[i]
        return LIST_MARKER_RE.match(self.text, line.lead, line.tail) is not None

    def fence_at(self, i: int) -> bool:
        """Markdown code fences end list items; plain text has none."""
        return False

    def lazy_continues(self, last: int, j: int) -> bool:
        """An unindented line right after a non-Chinese item line wraps that item."""
        return last == j - 1 and not is_cjk_dominant(self.content(last)) and not self.interrupts(j)

    def item_spans(self, span: Span) -> list[Span]:
        """The item as one span, or its sentences when it is longer than a sentence may be."""
        start, end = span
        if len(cap_span(self.text, start, end)) == 1:
            return [span]
        return [(start + a, start + b) for a, b in split_sentences(self.text[start:end])]

    def read_paragraph(self, i: int, first_start: int | None = None) -> int:
        """Consecutive lines up to a blank line or a line that starts another block."""
        start = self.lines[i].lead if first_start is None else first_start
        j = i + 1
        while j < len(self.lines) and not self.lines[j].blank and not self.interrupts(j):
            j += 1
        return self.finish_paragraph(start, i, j)

    def finish_paragraph(self, start: int, first: int, stop: int) -> int:
        """Emit the paragraph of lines ``first..stop-1``; return the next line to read."""
        self.emit_paragraph(start, self.lines[stop - 1].tail)
        return stop


def scan_plain(text: str) -> list[Block]:
    """Blocks of a plain-text document."""
    return TextScanner(text).scan()
