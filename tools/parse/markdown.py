"""Markdown into blocks: everything plain text has, plus the Markdown block syntax.

Added in front of the plain-text readers: fenced code (```` ``` ```` / ``~~~``, one code unit
including both fences; an unclosed fence runs to the end), ATX headings (``#`` .. ``######``, the
unit is the whole line with its markers), setext headings (a paragraph underlined with ``===`` or
``---``), pipe tables (header line + ``|---|`` delimiter line = one ``table_header`` unit, then one
``table_row`` per following line that contains ``|``), and indented code (lines indented four
spaces after a blank line, outside a list). Inline markup stays inside the units as written.

Raw HTML that shows nothing is not a unit: a line holding only HTML comments or tags (``<!-- note
-->``, ``<br>``, ``<div align="center">``), and a comment over several lines, are passed over, as a
Markdown renderer shows them (as nothing). The stored text stays the source, so the offsets of the
other units do not move; a tag inside a line of text stays in its unit.
"""

from __future__ import annotations

import re

from evidence_loop.tools.parse.blocks import Block, HeadingMark
from evidence_loop.tools.parse.lines import collapse
from evidence_loop.tools.parse.plain import Reader, TextScanner

_FENCE_RE = re.compile(r"(`{3,}|~{3,})")
_ATX_RE = re.compile(r"(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT_RE = re.compile(r"(=+|-+)[ \t]*")
_DELIMITER_RE = re.compile(r"\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?")
# A line of HTML comments and tags only: nothing of it shows when the Markdown is rendered.
_MARKUP_LINE_RE = re.compile(r"(?:<!--.*?-->|</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>|\s)+", re.DOTALL)
_CODE_INDENT = 4
_MAX_BLOCK_INDENT = 3


class MarkdownScanner(TextScanner):
    """Splits Markdown into blocks."""

    def readers(self) -> list[Reader]:
        """Markdown block syntax first, then the plain-text readers."""
        markdown = [
            self.read_fence,
            self.read_atx,
            self.read_table,
            self.read_indented_code,
            self.read_markup,
        ]
        return [*markdown, *super().readers()]

    def interrupts(self, i: int) -> bool:
        """Fences, ``#`` headings, tables and HTML comment lines also end a paragraph."""
        if self.fence_at(i) or self.atx_at(i) or self.table_at(i) or self.markup_end(i, comments_only=True):
            return True
        return super().interrupts(i)

    def markup_end(self, i: int, *, comments_only: bool = False) -> int | None:
        """The line after the HTML that shows nothing starting at line ``i`` (one line of comments
        and tags, or a comment over several lines); None when line ``i`` shows text."""
        content = self.content(i)
        last = i
        if content.startswith("<!--") and "-->" not in content:
            ends = (j for j in range(i + 1, len(self.lines)) if "-->" in self.content(j))
            last = next(ends, -1)
            if last < 0:
                return None
            content = self.text[self.lines[i].lead : self.lines[last].tail]
        if comments_only and not content.startswith("<!--"):
            return None
        return last + 1 if _MARKUP_LINE_RE.fullmatch(content) else None

    def read_markup(self, i: int) -> int | None:
        """HTML that shows nothing: passed over, no unit."""
        return self.markup_end(i)

    def fence_at(self, i: int) -> bool:
        """True when line ``i`` opens (or closes) a code fence."""
        line = self.lines[i]
        return (
            line.indent <= _MAX_BLOCK_INDENT and _FENCE_RE.match(self.text, line.lead, line.tail) is not None
        )

    def atx_at(self, i: int) -> re.Match[str] | None:
        """The ``#`` heading on line ``i``, if any."""
        line = self.lines[i]
        if line.indent > _MAX_BLOCK_INDENT:
            return None
        return _ATX_RE.match(self.text, line.lead, line.tail)

    def table_at(self, i: int) -> bool:
        """True when line ``i`` holds a ``|`` and the next line is a delimiter row."""
        if i + 1 >= len(self.lines) or "|" not in self.content(i):
            return False
        delimiter = self.content(i + 1)
        return "|" in delimiter and _DELIMITER_RE.fullmatch(delimiter) is not None

    def read_fence(self, i: int) -> int | None:
        """A fenced code block, fences included, as one code unit."""
        if not self.fence_at(i):
            return None
        opening = self.lines[i]
        fence = _FENCE_RE.match(self.text, opening.lead, opening.tail)
        assert fence is not None
        marker = fence.group(1)
        last = len(self.lines) - 1
        for j in range(i + 1, len(self.lines)):
            closing = self.content(j)
            if closing.startswith(marker[0] * len(marker)) and not closing.strip(marker[0]):
                last = j
                break
        end = max(self.lines[k].tail for k in range(i, last + 1) if not self.lines[k].blank)
        self.emit(Block("code", ((opening.lead, end),)))
        return last + 1

    def read_atx(self, i: int) -> int | None:
        """A ``#`` heading: the unit is the whole line, the title its text without markers."""
        found = self.atx_at(i)
        if found is None:
            return None
        line = self.lines[i]
        title = collapse(found.group(2) or "")
        mark = HeadingMark("atx", len(found.group(1)), title, line.lead)
        self.emit(Block("heading", ((line.lead, line.tail),), mark))
        return i + 1

    def read_table(self, i: int) -> int | None:
        """A pipe table: header + delimiter as one unit, then one unit per row line."""
        if not self.table_at(i):
            return None
        self.emit(Block("table_header", ((self.lines[i].lead, self.lines[i + 1].tail),)))
        j = i + 2
        while j < len(self.lines) and "|" in self.content(j) and not self.starts_other_block(j):
            self.emit(Block("table_row", ((self.lines[j].lead, self.lines[j].tail),)))
            j += 1
        return j

    def starts_other_block(self, i: int) -> bool:
        """Lines that end a table even though they contain a ``|``."""
        return bool(self.fence_at(i) or self.atx_at(i) or self.table_at(i))

    def read_indented_code(self, i: int) -> int | None:
        """Lines indented four spaces after a blank line (or at the start), outside any list."""
        line = self.lines[i]
        if line.indent < _CODE_INDENT or not line.ascii_indent or self.items:
            return None
        if i > 0 and not self.lines[i - 1].blank and self.atx_at(i - 1) is None:
            # Indented code cannot interrupt a paragraph; it may follow a heading line directly.
            return None
        last = i
        j = i + 1
        while j < len(self.lines):
            nxt = self.lines[j]
            if not nxt.blank and (nxt.indent < _CODE_INDENT or not nxt.ascii_indent):
                break
            if not nxt.blank:
                last = j
            j += 1
        self.emit(Block("code", ((line.lead, self.lines[last].tail),)))
        return last + 1

    def finish_paragraph(self, start: int, first: int, stop: int) -> int:
        """A paragraph underlined by ``===``/``---`` is a setext heading instead."""
        if stop < len(self.lines) and not self.lines[stop].blank:
            under = self.lines[stop]
            if under.indent <= _MAX_BLOCK_INDENT and _SETEXT_RE.fullmatch(self.text, under.lead, under.tail):
                rank = 1 if self.text[under.lead] == "=" else 2
                title = collapse(self.text[start : self.lines[stop - 1].tail])
                mark = HeadingMark("atx", rank, title, start)
                self.emit(Block("heading", ((start, under.tail),), mark))
                return stop + 1
        return super().finish_paragraph(start, first, stop)


def scan_markdown(text: str) -> list[Block]:
    """Blocks of a Markdown document."""
    return MarkdownScanner(text).scan()
