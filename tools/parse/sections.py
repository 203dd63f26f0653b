"""The section tree built from heading blocks.

Nesting rule: headings of one family (``#`` levels, ``h1``-``h6``, ``1``/``1.2``/``1.2.3``,
``第X章``/``节``/``条``, ``一、``/``（一）``) compare by rank. A new heading closes the outermost open
section of its own family whose rank is the same or deeper (and everything inside it), then opens
under whatever is left open. A heading of a family not yet open nests under the current section, so
``一、总则`` followed by ``1. 适用范围`` puts the numbered heading inside the Chinese one, and a
Markdown ``## 用户协议`` followed by ``第一条`` puts the article under the Markdown heading.

``level`` is the depth in the tree (root 0, top headings 1), which equals the number of ``#`` for
well-formed Markdown. A section spans from its heading (for HTML its ``<hN>`` tag) up to the
heading that closes it or the end of the document, trailing whitespace excluded; the root spans the
whole text.
"""

from __future__ import annotations

from dataclasses import dataclass

from evidence_loop.tools.parse.blocks import Block, HeadingMark
from evidence_loop.tools.types import Section


@dataclass(slots=True)
class _Open:
    """A section whose end is not known yet (mutable while the tree is built)."""

    section_id: int
    parent_id: int | None
    level: int
    title: str
    start: int
    path: tuple[str, ...]
    family: str
    rank: int


def build_sections(text: str, title: str, blocks: list[Block]) -> tuple[tuple[Section, ...], list[int]]:
    """The section tree, and for each block the id of the innermost section holding it."""
    root = _Open(0, None, 0, title, 0, (), "", 0)
    stack = [root]
    done: dict[int, Section] = {}
    block_sections: list[int] = []
    for block in blocks:
        if block.heading is not None:
            for closed in _close_for(stack, block.heading):
                done[closed.section_id] = _finish(closed, text, block.heading.anchor)
            stack.append(_open_under(stack[-1], block.heading, len(done) + len(stack)))
        block_sections.append(stack[-1].section_id)
    for closed in stack[1:]:
        done[closed.section_id] = _finish(closed, text, len(text))
    done[0] = Section(0, None, 0, title, 0, len(text), ())
    return tuple(done[k] for k in sorted(done)), block_sections


def _close_for(stack: list[_Open], mark: HeadingMark) -> list[_Open]:
    """Pop and return the sections the heading ``mark`` closes (see the module docstring)."""
    for depth in range(1, len(stack)):
        entry = stack[depth]
        if entry.family == mark.family and entry.rank >= mark.rank:
            closed = stack[depth:]
            del stack[depth:]
            return closed
    return []


def _open_under(parent: _Open, mark: HeadingMark, section_id: int) -> _Open:
    return _Open(
        section_id,
        parent.section_id,
        parent.level + 1,
        mark.title,
        mark.anchor,
        (*parent.path, mark.title),
        mark.family,
        mark.rank,
    )


def _finish(entry: _Open, text: str, end: int) -> Section:
    """Freeze an open section ending at ``end``, trailing whitespace dropped."""
    end = len(text[entry.start : end].rstrip()) + entry.start
    return Section(entry.section_id, entry.parent_id, entry.level, entry.title, entry.start, end, entry.path)
