"""The bilingual sentence splitter: spans of sentences inside one paragraph of text.

Rules (Chinese and English side by side):

- ``。！？；`` always end a sentence; closing quotes and brackets right after the mark stay with it
  (``他说：“好。”``, ``（详见第3条。）``).
- ``! ?`` end a sentence before whitespace + anything but a lower-case letter, before a CJK
  character, or at the end; ``;`` only in Chinese context (a CJK character on either side).
- ``.`` ends a sentence only before whitespace + an upper-case letter, digit, CJK character or
  opening quote/bracket, directly before a CJK character, or at the end. So decimals (``3.5``),
  versions (``v2.1``), URLs, e-mails and file names never split. Known abbreviations (``e.g.``,
  ``Dr.``, ``U.S.``, single initials, ``No.`` before a number) do not end a sentence either.
- Ellipses (``...``, ``…``) never end a sentence by themselves.
- A newline ends a sentence when the line before it is CJK-dominant (Chinese text is not
  hard-wrapped), or is a short title-like line ("Shipping") followed by a capital or a digit; in
  other text a single newline is a wrap and is joined. A blank line always ends. (Lines that open
  a list item, heading or table never reach the splitter: the format readers cut blocks first.)
- A wide gap after Chinese text (an ideographic space, or two spaces) ends a sentence: it is a
  line break flattened away, common in scraped Chinese articles.
- A sentence longer than :data:`MAX_SENTENCE_CHARS` is cut at the last ``，``/``,``/``、`` before
  the cap (else the last whitespace, else at the cap) so that recall units stay small.

Spans are relative to the string given, never include leading or trailing whitespace, and cover
every non-whitespace character of it exactly once.
"""

from __future__ import annotations

import re

from evidence_loop.tools.tokenize import CJK_CHARS

MAX_SENTENCE_CHARS = 300

_CLOSERS = "”’\"'）)\\]」』】》〉｝}"
_OPENERS = "“‘\"'（(\\[「『【《〈"

_CANDIDATE_RE = re.compile(
    rf"(?:[。！？；!?;]+|(?<![.．])[.．](?![.．]))[{_CLOSERS}]*"
    # A wide gap (two spaces, or an ideographic space) after Chinese text is a flattened line break.
    r"|(?:[ \t\xa0]*\u3000|[ \t\xa0]{2,})\s*"
)
_GAP_AFTER_RE = re.compile(rf"[{CJK_CHARS}）」』】》〉。！？；：]")
_FULL_WIDTH_END_RE = re.compile("[。！？；]")
_NEXT_VISIBLE_RE = re.compile(r"\s*(\S)")
_CJK_RE = re.compile(rf"[{CJK_CHARS}]")
_LATIN_RE = re.compile(r"[A-Za-z]")
_WORD_BEFORE_RE = re.compile(r"[A-Za-z][A-Za-z.]*$")
_DOTTED_ABBREV_RE = re.compile(r"(?:[a-z]\.)+[a-z]")
_SOFT_BREAKS = "，,、"
_MAX_LABEL_CHARS = 40
_WRAP_ENDS = ".,;:!?-–—([{/&"

# fmt: off
ABBREVIATIONS: frozenset[str] = frozenset({
    "e.g", "i.e", "etc", "dr", "mr", "mrs", "ms", "prof", "sr", "jr", "st", "vs", "approx", "inc", "ltd",
    "co", "corp", "dept", "fig", "figs", "vol", "vols", "pp", "cf", "al", "est", "misc", "jan", "feb",
    "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec", "mt", "ft", "op", "ref", "resp",
    "tel", "ca",
})
# fmt: on
# "No." is an abbreviation only when a number follows ("No. 5"); "No. That is wrong." ends.
_NUMBER_ABBREVIATIONS: frozenset[str] = frozenset({"no", "nos", "art", "p"})


def is_cjk_char(char: str) -> bool:
    """True for a CJK ideograph."""
    return bool(_CJK_RE.match(char))


def is_cjk_dominant(line: str) -> bool:
    """True when CJK characters outweigh Latin letters (one ideograph weighs two letters)."""
    cjk = len(_CJK_RE.findall(line))
    return cjk > 0 and 2 * cjk >= len(_LATIN_RE.findall(line))


def trim(text: str, start: int, end: int) -> tuple[int, int]:
    """Shrink ``[start, end)`` so that it neither starts nor ends with whitespace."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def split_sentences(text: str) -> list[tuple[int, int]]:
    """Sentence spans of ``text`` (relative offsets), in order."""
    spans: list[tuple[int, int]] = []
    for seg_start, seg_end in _line_segments(text):
        for start, end in _split_segment(text, seg_start, seg_end):
            spans.extend(cap_span(text, start, end))
    return spans


def cap_span(text: str, start: int, end: int, limit: int = MAX_SENTENCE_CHARS) -> list[tuple[int, int]]:
    """Cut a trimmed span longer than ``limit`` at soft breaks; shorter spans come back unchanged."""
    out: list[tuple[int, int]] = []
    while end - start > limit:
        cut = _soft_cut(text, start, start + limit)
        piece = trim(text, start, cut)
        if piece[0] < piece[1]:
            out.append(piece)
        start, end = trim(text, cut, end)
    if start < end:
        out.append((start, end))
    return out


def _soft_cut(text: str, start: int, limit_end: int) -> int:
    """Offset just after the last soft break in ``text[start:limit_end]``; whitespace, then the cap."""
    best = max(text.rfind(mark, start, limit_end) for mark in _SOFT_BREAKS)
    if best > start:
        return best + 1
    for pos in range(limit_end - 1, start, -1):
        if text[pos].isspace():
            return pos
    return limit_end


def _line_segments(text: str) -> list[tuple[int, int]]:
    """Cut the text at hard line breaks (see :func:`_hard_break`); other newlines are wraps."""
    if "\n" not in text:
        return [(0, len(text))]
    lines = text.split("\n")
    segments: list[tuple[int, int]] = []
    seg_start = 0
    pos = 0
    for index, line in enumerate(lines):
        line_end = pos + len(line)
        following = lines[index + 1] if index + 1 < len(lines) else ""
        if _hard_break(line, following):
            segments.append((seg_start, line_end))
            seg_start = line_end + 1
        pos = line_end + 1
    segments.append((seg_start, len(text)))
    return [span for span in (trim(text, a, b) for a, b in segments) if span[0] < span[1]]


def _hard_break(line: str, following: str) -> bool:
    """A newline ends a sentence after a blank or CJK-dominant line, or after a short title-like
    line ("Shipping", "Q&A") when the next line starts with a capital or a digit."""
    stripped = line.strip()
    if not stripped or is_cjk_dominant(stripped):
        return True
    nxt = following.lstrip()[:1]
    return (
        len(stripped) <= _MAX_LABEL_CHARS
        and stripped[-1] not in _WRAP_ENDS
        and (nxt.isupper() or nxt.isdigit())
    )


def _split_segment(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Split one segment (no hard line breaks) at its sentence ends."""
    spans: list[tuple[int, int]] = []
    sent_start = start
    for match in _CANDIDATE_RE.finditer(text, start, end):
        if _ends_sentence(text, match.start(), match.end(), end):
            span = trim(text, sent_start, match.end())
            if span[0] < span[1]:
                spans.append(span)
            sent_start = match.end()
    span = trim(text, sent_start, end)
    if span[0] < span[1]:
        spans.append(span)
    return spans


def _ends_sentence(text: str, mark: int, after: int, end: int) -> bool:
    """Decide whether the end-mark run ``text[mark:after]`` (closers included) ends a sentence."""
    if after >= end or _FULL_WIDTH_END_RE.search(text, mark, after):
        return True
    first = text[mark]
    if text[mark].isspace():
        return mark > 0 and _GAP_AFTER_RE.match(text, mark - 1) is not None
    nxt = text[after]
    if is_cjk_char(nxt):
        # "完成.下一步" ends, "说明：1.采样日期" (an inline list number) does not.
        return not text[mark - 1 : mark].isdigit()
    if not nxt.isspace():
        return False
    found = _NEXT_VISIBLE_RE.match(text, after, end)
    following = found.group(1) if found else ""
    if first == ";":
        return _cjk_before(text, mark) or is_cjk_char(following)
    if first in "!?":
        return not following.islower()
    return _period_ends(text, mark, following)


def _period_ends(text: str, mark: int, following: str) -> bool:
    """A period followed by whitespace: the next sentence must look like one; abbreviations do not end."""
    if not following:
        return True
    if not (following.isupper() or following.isdigit() or is_cjk_char(following) or following in _OPENERS):
        return False
    found = _WORD_BEFORE_RE.search(text, max(0, mark - 24), mark)
    if found is None:
        return True
    word = found.group().lstrip(".").lower()
    if word in ABBREVIATIONS or _DOTTED_ABBREV_RE.fullmatch(word):
        return False
    if word in _NUMBER_ABBREVIATIONS and following.isdigit():
        return False
    # A single capital before the period is an initial ("J. Smith"), not a sentence.
    return not (len(word) == 1 and text[found.start()].isupper())


def _cjk_before(text: str, mark: int) -> bool:
    return mark > 0 and is_cjk_char(text[mark - 1])
