"""The corpus model as frozen values: documents in, sections and units out, hits from recall.

Offsets are character offsets into the exact document text of one version:
``text[unit.start:unit.end] == unit.text`` for every unit.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from evidence_loop.tools.printable import CONTROL_AND_BIDI

DocFormat = Literal["text", "markdown", "html"]
UnitKind = Literal["heading", "sentence", "list_item", "table_header", "table_row", "code"]

DOC_FORMATS: tuple[DocFormat, ...] = ("text", "markdown", "html")

# What a doc_id may not hold: control characters (NUL, newline, tab, escape, C1), lone surrogates (bytes
# that were not UTF-8), line and paragraph separators, and the direction marks and overrides that make an
# id display as another. Each would forge or hide a line where an id is printed or logged.
_UNSAFE_ID = re.compile(f"[{CONTROL_AND_BIDI}]")
# Code points that print nothing: the format characters (Unicode category Cf: zero-width space and
# joiners, word joiner, BOM, soft hyphen, direction marks, tags ...) and the other default-ignorable
# ones (variation selectors, fillers). Text that holds them reads as text without them, so a screen of
# what text says reads it without them (tools.tokenize.visible). tests/tools holds the class to Cf.
INVISIBLE_CHARS = (
    "\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160\u17b4\u17b5"
    "\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufffb"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0000-\U000e0fff"
)


_INVISIBLE_ID = re.compile(f"[{INVISIBLE_CHARS}]")
# Letters of a script that writes look-alikes of Latin ones ("а" U+0430, "ο" U+03BF): not in one
# doc_id with Latin letters. Fullwidth ASCII ("ｃａｆｅ"): never, the plain letters say the same.
_CONFUSABLE_SCRIPTS = ("CYRILLIC", "GREEK")
_WORD = re.compile(r"[^\W\d_]+")  # a run of letters (and their marks)
_FULLWIDTH_ASCII = re.compile("[\uff10-\uff19\uff21-\uff3a\uff41-\uff5a]")


def doc_id_form(doc_id: str) -> str:
    """The form a doc_id is stored and looked up in: NFC ("cafe\u0301" is "café")."""
    return doc_id if doc_id.isascii() else unicodedata.normalize("NFC", doc_id)


def doc_id_fault(doc_id: str, *, new: bool = True) -> str | None:
    """Why ``doc_id`` cannot name a document, or None if it can: blank, or holding a character
    ``_UNSAFE_ID`` lists; and (``new``: for a document written now, not one looked up) a character
    that prints nothing, fullwidth ASCII, or Latin letters mixed with Cyrillic or Greek ones."""
    if not doc_id.strip():
        return "a doc_id must not be empty"
    found = _UNSAFE_ID.search(doc_id)
    if found is not None:
        code, shown = ord(found.group()), shown_doc_id(doc_id)
        if 0xD800 <= code <= 0xDFFF:
            return f"doc_id '{shown}' is not valid UTF-8 (U+{code:04X}); a doc_id must be printable text"
        return f"doc_id '{shown}' holds a control character (U+{code:04X}); a doc_id must be printable text"
    if not new or doc_id.isascii():
        return None
    return _look_alike_fault(doc_id)


def _look_alike_fault(doc_id: str) -> str | None:
    shown = shown_doc_id(doc_id)
    if (hidden := _hidden_char(doc_id)) is not None:
        return (
            f"doc_id '{shown}' holds a character that prints nothing (U+{ord(hidden):04X}); "
            "it would look the same as another doc_id"
        )
    if (found := _FULLWIDTH_ASCII.search(doc_id)) is not None:
        char = found.group()
        plain = unicodedata.normalize("NFKC", char)
        return f"doc_id '{shown}' holds the fullwidth U+{ord(char):04X}; write it as '{plain}'"
    for word in _WORD.findall(doc_id):
        scripts = _letter_scripts(word)
        if "LATIN" in scripts and (mixed := scripts.intersection(_CONFUSABLE_SCRIPTS)):
            return (
                f"doc_id '{shown}' mixes Latin letters with {' and '.join(sorted(s.title() for s in mixed))} "
                "ones that look alike in one word; write each word in one script"
            )
    return None


def _hidden_char(doc_id: str) -> str | None:
    """The first character of ``doc_id`` that prints nothing, save the joiner inside an emoji
    ("👩\u200d💻" prints as one picture) and the emoji presentation selector after one ("❤\ufe0f")."""
    for found in _INVISIBLE_ID.finditer(doc_id):
        at, char = found.start(), found.group()
        before = unicodedata.category(doc_id[at - 1]) if at else ""
        after = unicodedata.category(doc_id[at + 1]) if at + 1 < len(doc_id) else ""
        if char == "\u200d" and before in _EMOJI and after in _EMOJI:
            continue
        if char in "\ufe0e\ufe0f" and before in _EMOJI:
            continue
        return char
    return None


_EMOJI = ("So", "Sk")  # pictographs, and the skin-tone modifiers after one


def _letter_scripts(text: str) -> set[str]:
    """The first word of the Unicode name of each letter (LATIN, CYRILLIC, GREEK, CJK, ...)."""
    return {unicodedata.name(c, "?").split(" ", 1)[0] for c in text if c.isalpha()}


def shown_doc_id(doc_id: str) -> str:
    """``doc_id`` as text that shows what it holds: every character that does not print as itself
    (a control, a character that prints nothing, a combining mark of a doc_id not in NFC, fullwidth
    ASCII, a Cyrillic or Greek letter among Latin ones) as its escape (\\u200b, \\u0430)."""
    if doc_id.isascii() and doc_id.isprintable():
        return doc_id
    nfc = unicodedata.is_normalized("NFC", doc_id)
    mixed: set[int] = set()  # where a word mixes Latin letters with others
    for word in _WORD.finditer(doc_id):
        if "LATIN" in _letter_scripts(word.group()):
            mixed.update(range(word.start(), word.end()))
    out: list[str] = []
    for at, c in enumerate(doc_id):
        hidden = not c.isprintable() or bool(_FULLWIDTH_ASCII.match(c))
        if not hidden and not nfc:
            hidden = unicodedata.combining(c) != 0
        if not hidden and at in mixed:
            hidden = unicodedata.name(c, "?").split(" ", 1)[0] in _CONFUSABLE_SCRIPTS
        out.append(ascii(c)[1:-1] if hidden else c)
    return "".join(out)


@dataclass(frozen=True, slots=True)
class DocumentInput:
    """One document version as handed to ingestion."""

    doc_id: str
    text: str
    version: str = "1"
    title: str = ""
    format: DocFormat = "text"
    acl: tuple[str, ...] = ()
    metadata: Mapping[str, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # Every way in takes a doc_id in NFC: "café" typed and "café" from a macOS file name are one.
        if not self.doc_id.isascii():
            object.__setattr__(self, "doc_id", doc_id_form(self.doc_id))


@dataclass(frozen=True, slots=True)
class Section:
    """A node of a document's section tree. Section 0 is the root (the whole document)."""

    section_id: int
    parent_id: int | None
    level: int
    title: str
    start: int
    end: int
    path: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Unit:
    """The smallest thing recall can hit: a sentence, list item, table row, code block or heading.

    ``link`` is the ordinal of the unit this one depends on to be read: a list item's intro
    sentence, a table row's header row; ``None`` when there is none.
    """

    doc_id: str
    version: str
    ordinal: int
    kind: UnitKind
    section_id: int
    start: int
    end: int
    text: str
    link: int | None = None


@dataclass(frozen=True, slots=True)
class ParsedDocument:
    """A document version split into its section tree and its units, in document order."""

    doc_id: str
    version: str
    title: str
    format: DocFormat
    text: str
    sections: tuple[Section, ...]
    units: tuple[Unit, ...]


@dataclass(frozen=True, slots=True)
class Hit:
    """A unit found by recall, with its lexical (BM25) score, rank (0 = best) and, with dense recall,
    the cosine similarity of its vector to the question's (None: lexical recall only)."""

    unit: Unit
    score: float
    rank: int
    similarity: float | None = None


# The recall settings, defined once: ``policies.config.Policy`` takes its defaults from here, the loop
# passes its policy's values to ``Snapshot.search``, and a search that names none (a test, a
# benchmark) runs with these.
DENSE_K = 50  # units taken by BM25 and by cosine before fusing
RRF_CONSTANT = 60  # reciprocal rank fusion's constant
FUSION_WEIGHT = 1.5  # a passage's BM25 share in its units' recall score
TYPO_MIN_CHARS = 5  # an unknown Latin word this long is read as the known word one edit away
