"""Line-level recognisers shared by the plain-text and Markdown readers.

Numbered and Chinese headings are told apart from list items by these rules:

- ``第X章`` / ``第X节`` / ``第X条`` (ranks 1, 2, 3 of family ``cn_legal``) are headings at a line
  start. When a long body follows the marker on the same line after whitespace
  (``第一条　为规范……，制定本办法。``), only the marker is the heading; the body is a paragraph.
- ``1.2`` / ``1.2.3`` (family ``numbered``, rank = number of parts) are headings when followed by a
  title: short (at most 60 columns, an ideograph counting two), no sentence punctuation inside,
  no ``. : ,`` at the end, not starting with a lower-case letter.
- ``1.``, ``一、`` and ``（一）`` need the same title test and must stand alone: when the previous or
  next non-blank line carries the same kind of marker, or the previous line ends with a colon, the
  lines form a list and are list items. "1. Press the power button for 3 seconds." is therefore a
  list item (sentence punctuation), and so is a run of ``1. … 2. …`` lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from evidence_loop.tools.tokenize import CJK_CHARS

_CN_NUM = "一二三四五六七八九十百千零〇两"
_TITLE_STOP_RE = re.compile(r"[。！？；!?;]")
_TITLE_BAD_END = ".,:，：、…"
_WIDE_RE = re.compile(rf"[{CJK_CHARS}\u3000-\u303f\uff00-\uffef]")
MAX_TITLE_COLUMNS = 60

_CN_LEGAL_RE = re.compile(rf"第[{_CN_NUM}\d]{{1,6}}([章节節条條])")
_CN_LEGAL_RANK = {"章": 1, "节": 2, "節": 2, "条": 3, "條": 3}
_MULTI_NUM_RE = re.compile(rf"(\d{{1,2}}(?:[.．]\d{{1,2}}){{1,5}})[.．]?(?:[ \t\u3000]+|(?=[{CJK_CHARS}]))")
_SINGLE_NUM_RE = re.compile(rf"\d{{1,2}}[.．](?:[ \t\u3000]+|(?=[{CJK_CHARS}]))")
_CN_OUTLINE_RE = re.compile(rf"[{_CN_NUM}]{{1,3}}、\s*")
_CN_PAREN_RE = re.compile(rf"[(（][{_CN_NUM}]{{1,3}}[)）]\s*")

LIST_MARKER_RE = re.compile(
    rf"""(?:
        (?P<bullet>[-*+](?:[ \t]+|$)|[•·◦▪][ \t]*)
      | (?P<num>\d{{1,3}}(?:[.．)）](?:[ \t]+|$|(?=[{CJK_CHARS}]))|、[ \t]*)|[(（]\d{{1,3}}[)）][ \t]*)
      | (?P<cn>[{_CN_NUM}]{{1,3}}、[ \t]*)
      | (?P<cnp>[(（][{_CN_NUM}]{{1,3}}[)）][ \t]*)
      | (?P<circled>[①-⑳][ \t]*)
    )""",
    re.VERBOSE,
)
BREAK_RE = re.compile(r"(?:([-*_])(?:[ \t]*\1){2,}|={3,}|~{3,})[ \t]*")


@dataclass(frozen=True, slots=True)
class Line:
    """One line of the document: ``lead``/``tail`` bound its non-whitespace content."""

    start: int
    end: int
    lead: int
    tail: int
    indent: int
    ascii_indent: bool

    @property
    def blank(self) -> bool:
        """True when the line holds only whitespace."""
        return self.lead == self.tail


@dataclass(frozen=True, slots=True)
class HeadingCandidate:
    """A heading found at a line start; ``length`` is how much of the content it spans."""

    family: str
    rank: int
    title: str
    length: int
    style: str | None  # the list-marker style that would make it a list item instead


def split_lines(text: str) -> list[Line]:
    """Every ``\\n``-separated line with its content bounds and indentation."""
    lines: list[Line] = []
    pos = 0
    for raw in text.split("\n"):
        stripped_left = raw.lstrip()
        lead = pos + len(raw) - len(stripped_left)
        tail = lead + len(stripped_left.rstrip())
        prefix = raw[: lead - pos]
        indent = sum(4 if c == "\t" else 2 if c == "\u3000" else 1 for c in prefix)
        ascii_indent = prefix.strip(" \t") == ""
        lines.append(Line(pos, pos + len(raw), lead, tail, indent, ascii_indent))
        pos += len(raw) + 1
    return lines


def marker_style(content: str) -> str | None:
    """The kind of list marker a line's content opens with, if any."""
    found = LIST_MARKER_RE.match(content)
    return found.lastgroup if found else None


def is_title(title: str) -> bool:
    """Short, no sentence punctuation, no trailing ``. : ,``, not starting lower-case."""
    if not title or title[0].islower() or title[-1] in _TITLE_BAD_END:
        return False
    if _TITLE_STOP_RE.search(title):
        return False
    return len(title) + len(_WIDE_RE.findall(title)) <= MAX_TITLE_COLUMNS


def match_heading(content: str) -> HeadingCandidate | None:
    """A numbered or Chinese heading at the start of a stripped line, before any list check."""
    legal = _CN_LEGAL_RE.match(content)
    if legal:
        return _legal_heading(content, legal.end(), _CN_LEGAL_RANK[legal.group(1)])
    multi = _MULTI_NUM_RE.match(content)
    if multi:
        rank = multi.group(1).replace("．", ".").count(".") + 1
        return _titled(content, multi.end(), "numbered", rank, None)
    for regex, family, rank, style in (
        (_SINGLE_NUM_RE, "numbered", 1, "num"),
        (_CN_OUTLINE_RE, "cn_outline", 1, "cn"),
        (_CN_PAREN_RE, "cn_outline", 2, "cnp"),
    ):
        found = regex.match(content)
        if found:
            return _titled(content, found.end(), family, rank, style)
    return None


def _titled(
    content: str, marker_end: int, family: str, rank: int, style: str | None
) -> HeadingCandidate | None:
    if not is_title(content[marker_end:].strip()):
        return None
    return HeadingCandidate(family, rank, collapse(content), len(content), style)


def _legal_heading(content: str, marker_end: int, rank: int) -> HeadingCandidate | None:
    rest = content[marker_end:]
    if not rest or is_title(rest.strip()):
        return HeadingCandidate("cn_legal", rank, collapse(content), len(content), None)
    if rest[0].isspace():
        marker = content[:marker_end]
        return HeadingCandidate("cn_legal", rank, marker, marker_end, None)
    return None


def collapse(text: str) -> str:
    """Whitespace runs to one space: the form a title is stored in."""
    return " ".join(text.split())
