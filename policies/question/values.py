"""Values in text: atoms, statements, numbers, the canonical form of a value, and what a text states.

Every check that reads a value reads it here, so "七十", "70" and "seventy" are one number
everywhere and a Chinese numeral is parsed by one parser.

- An **atom** is a whole number ("1361", "10.48", "1,015,986"), a word of a script with spaces
  ("Kerber", "not"), one CJK character, or one other visible character. Whole numbers as atoms
  make "70" and "170" differ as values rather than by one inserted digit. Atoms keep absolute
  document offsets.
- A **statement** is a piece of text up to an end mark; :data:`SENTENCE_ENDS` also end one at a
  table bar and at a Latin full stop before a capital, :data:`STATEMENT_ENDS` keep a table row's
  cells ("高级 | 200元") one statement.
- A **number** is written in digits, Chinese numerals (:func:`cn_to_int`: "十五", "一万二千",
  "二〇二一") or an English word ("three").
- A value's **canonical form** (:func:`canonical`) makes one value written two ways compare equal.
- What a text **states** (:func:`stated_values`) is each number of its statements with its kind.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise
from typing import Literal

from evidence_loop.policies.lexicon import (
    AMOUNT_CUES,
    CJK_FUNCTION_CHARS,
    CN_DIGIT_BY_VALUE,
    CN_DIGITS,
    CN_NUMERAL_CHARS,
    CN_UNITS,
    CONNECTORS,
    CURRENCY_SIGNS,
    DATE_CUES,
    DURATION_CUES,
    EN_NUMBER_WORDS,
    MONTHS,
    PERCENT_CUES,
    UNIT_ATOMS,
)
from evidence_loop.tools.tokenize import CJK_CHARS, index_tokens, normalize

ValueKind = Literal["percentage", "amount", "duration", "date", "count", "named", "polarity"]
NUMERIC_KINDS: frozenset[ValueKind] = frozenset({"percentage", "amount", "duration", "date", "count"})
ALL_KINDS: frozenset[ValueKind] = NUMERIC_KINDS | {"named", "polarity"}

_LETTER = rf"(?:(?![{CJK_CHARS}])[^\W\d_])"
_ATOM_RE = re.compile(rf"\d+(?:[.,]\d+)*|{_LETTER}+(?:['’]{_LETTER}+)*|[{CJK_CHARS}]|\S")
# A statement ends at CJK or Latin end punctuation, an ellipsis (the "..." of a clipped snippet) or a
# line break. A sentence also ends at a bar, and at a Latin full stop only between a lower-case
# letter or digit and a capital, so "U.S. Open" and "WhatsApp Inc. of" stay whole.
_END_MARKS = "。！？!?；;"
_CLIPPED = r"\.{3}|…+"
SENTENCE_ENDS = re.compile(rf"[{_END_MARKS}|]+|{_CLIPPED}|(?<=[a-z0-9)])\.(?=\s+[A-Z])|\n+")
STATEMENT_ENDS = re.compile(rf"[{_END_MARKS}]+|{_CLIPPED}|\n+")

CN_MAX = 10000  # Chinese spellings are produced for whole numbers below this
# Numerals read within compared text; 万 is a unit atom there, so "1361万" and "一千三百六十一万" agree.
_SMALL_NUMERALS = frozenset(CN_DIGITS) | (frozenset(CN_UNITS) - {"万"})
# Atoms a written number is made of besides its digits: units, months, separators.
_NUMBER_PARTS = (
    UNIT_ATOMS
    | CURRENCY_SIGNS
    | set(MONTHS)
    | frozenset(", . - – / : st nd rd th am pm us ( ) （ ）".split())
)
_KIND_CUES: tuple[tuple[ValueKind, tuple[frozenset[str], tuple[str, ...]]], ...] = (
    ("percentage", PERCENT_CUES),
    ("amount", AMOUNT_CUES),
    ("duration", DURATION_CUES),
    ("date", DATE_CUES),
)
# Atoms besides the values: "Aug 23, 2020 ..." alone states nothing; "高级 | 200元" does.
MIN_STATEMENT_ATOMS = 2
_UNIT_WORD_ATOMS = 3  # a unit word after the number may be three CJK atoms: "7个" + "工作日"


@dataclass(frozen=True, slots=True)
class Atom:
    """One comparable piece of text: its surface, its normalised form, and absolute offsets."""

    surface: str
    norm: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Sentence:
    """A sentence of an evidence window, with absolute offsets and its atoms."""

    start: int
    end: int
    atoms: tuple[Atom, ...]


_normalized_atom = lru_cache(maxsize=50_000)(normalize)  # atoms repeat: CJK characters, common words


def atoms(text: str, offset: int = 0) -> tuple[Atom, ...]:
    """The atoms of ``text``; offsets are shifted by ``offset`` so they stay absolute."""
    out = []
    for m in _ATOM_RE.finditer(text):
        surface = m.group()
        out.append(Atom(surface, _normalized_atom(surface), offset + m.start(), offset + m.end()))
    return tuple(out)


def statements(text: str, ends: re.Pattern[str] = STATEMENT_ENDS) -> Iterator[tuple[int, int]]:
    """Offsets of the statements of ``text``, each with its end mark, trimmed of blanks, none empty."""
    for start, end in pairwise([0, *(m.end() for m in ends.finditer(text)), len(text)]):
        piece = text[start:end]
        stripped = piece.strip()
        if stripped:
            lead = start + len(piece) - len(piece.lstrip())
            yield lead, lead + len(stripped)


@lru_cache(maxsize=20_000)
def sentences(text: str, offset: int = 0) -> tuple[Sentence, ...]:
    """Sentences of ``text`` (absolute offsets) with their atoms."""
    return tuple(
        Sentence(offset + start, offset + end, atoms(text[start:end], offset + start))
        for start, end in statements(text, SENTENCE_ENDS)
    )


def cn_to_int(text: str) -> int | None:
    """A Chinese numeral as a number ("十五" -> 15, "一百零五" -> 105, "二〇二一" -> 2021); None otherwise.

    Runs of digits without units are read positionally only when they contain a zero ("二〇二一");
    "三五" is a range ("three to five"), not 35.
    """
    if not text or any(c not in CN_NUMERAL_CHARS for c in text):
        return None
    if all(c in CN_DIGITS for c in text) and len(text) > 1:
        return int("".join(str(CN_DIGITS[c]) for c in text)) if set(text) & {"零", "〇"} else None
    total, section, digit = 0, 0, None
    for char in text:
        if char in CN_DIGITS:
            if digit:
                return None
            digit = CN_DIGITS[char]
        elif CN_UNITS[char] == 10000:
            total, section, digit = (total + section + (digit or 0)) * 10000, 0, None
        else:
            section, digit = section + (1 if digit is None else digit) * CN_UNITS[char], None
    return total + section + (digit or 0)


def int_to_cn(value: int) -> str | None:
    """A whole number below ``CN_MAX`` in Chinese numerals (15 -> "十五", 105 -> "一百零五")."""
    if not 0 < value < CN_MAX:
        return None
    parts: list[str] = []
    zero = False
    for unit, name in ((1000, "千"), (100, "百"), (10, "十"), (1, "")):
        digit, value = divmod(value, unit)
        if digit:
            parts.append(("零" if zero else "") + CN_DIGIT_BY_VALUE[digit] + name)
            zero = False
        elif parts:
            zero = True
    text = "".join(parts)
    return text[1:] if text.startswith("一十") else text


def to_int(number: str) -> int | None:
    """A whole number written in digits, Chinese numerals or an English word; None for decimals."""
    number = number.strip().lower().replace(",", "")
    if number.isascii() and number.isdigit():
        return int(number)
    return EN_NUMBER_WORDS.get(number, cn_to_int(number))


def month_number(month: str) -> int | None:
    """A month as 1..12, from digits or an English name or abbreviation."""
    month = month.strip().lower().rstrip(".")
    value = int(month) if month.isdigit() else MONTHS.get(month)
    return value if value is not None and 1 <= value <= 12 else None


def canonical(norms: Sequence[str]) -> str:
    """A span's value in its comparable form (see ``_canonical``); cached, spans repeat across pairs."""
    return _canonical(tuple(norms))


@lru_cache(maxsize=100_000)
def _canonical(norms: tuple[str, ...]) -> str:
    """A span's value in a form where one value written two ways compares equal.

    Numbers lose thousands separators and trailing decimal zeros; Chinese numerals and month names
    become numbers; connecting punctuation and CJK particles are left out. So "Oct 19, 2021" equals
    "October 19 2021", and "在男子3" equals "男子三".
    """
    parts: list[str] = []
    numeral = ""  # CJK numerals are one atom per character: "七", "十" make 70 together
    for norm in [*norms, ""]:
        if norm in _SMALL_NUMERALS:
            numeral += norm
            continue
        if numeral:
            value = cn_to_int(numeral)
            parts.append(numeral if value is None else str(value))  # "三五" is a range, not a number
            numeral = ""
        if not norm:
            continue
        if norm[0].isdigit():
            number = norm.replace(",", "")
            parts.append(number.rstrip("0").rstrip(".") if "." in number else number)
        elif norm in MONTHS:
            parts.append(f"m{MONTHS[norm]}")
        elif norm not in CONNECTORS and norm not in CJK_FUNCTION_CHARS:
            parts.append(norm)
    return "|".join(parts)


@lru_cache(maxsize=65536)
def stem(norm: str) -> str:
    """An English word's stem, so "Presidents" meets "president"; any other atom as it is."""
    if not norm.isascii() or not norm.isalpha():
        return norm
    stems = index_tokens(norm)
    return stems[0] if stems else norm


def has_number(norm: str) -> bool:
    """An atom that is a number: digits first, or Chinese numerals (below ten thousand)."""
    return norm[0].isdigit() or all(c in _SMALL_NUMERALS for c in norm)


def is_number_part(norm: str) -> bool:
    """An atom a written number is made of: digits, a numeral, a unit, a month, a separator."""
    return has_number(norm) or norm in _NUMBER_PARTS


def number_kind(norms: Sequence[str], following: Sequence[str] = ()) -> ValueKind:
    """Which kind of number a value (with its unit) is; a bare year is a date.

    ``following`` is the word right after the value, which may name its unit ("7个" + "工作日").
    """
    words, text = set(norms) | set(following), "".join([*norms, *following])
    for kind, (unit_words, unit_chars) in _KIND_CUES:
        if words & unit_words or any(char in text for char in unit_chars):
            return kind
    if not words & UNIT_ATOMS and any(n.isdigit() and len(n) == 4 and 1000 <= int(n) <= 2100 for n in norms):
        return "date"
    return "count"


@lru_cache(maxsize=200_000)
def stated_values(text: str) -> tuple[tuple[ValueKind, frozenset[str]], ...]:
    """Each number the text's statements state, with its unit words: its kind and its digits.

    A statement that says too little besides its numbers (a date line) states nothing.
    """
    return tuple(
        value for start, end in statements(text) for value in _statement_values(atoms(text[start:end]))
    )


def _statement_values(statement: Sequence[Atom]) -> list[tuple[ValueKind, frozenset[str]]]:
    """The numbers of one statement (a run of number atoms with its units); none if it says little else."""
    norms = [a.norm for a in statement]
    values: list[tuple[ValueKind, frozenset[str]]] = []
    i, besides = 0, 0
    while i < len(norms):
        if not norms[i][0].isdigit():
            besides += norms[i].isalnum()  # a unit right after a number went with it
            i += 1
            continue
        j = i
        while j < len(norms) and is_number_part(norms[j]):
            j += 1
        run = norms[i:j]
        digits = frozenset(n.replace(",", "") for n in run if n[0].isdigit())
        values.append((number_kind(run, norms[j : j + _UNIT_WORD_ATOMS]), digits))
        i = j
    return values if besides >= MIN_STATEMENT_ATOMS else []


def states(kinds: frozenset[ValueKind], own: frozenset[str], text: str) -> bool:
    """True when the text states a value of an asked kind that is not one of the question's numbers."""
    return any(kind in kinds and not digits <= own for kind, digits in stated_values(text))


def window_states(
    kinds: frozenset[ValueKind], own: frozenset[str], texts: Sequence[str], is_about: Callable[[str], bool]
) -> bool:
    """True when a unit about the question (``is_about``), or one right beside it, states an asked value.

    A value far from every unit that names the question's subject is a value of something else.
    Whether a unit is about the question is asked only around the units that state a value.
    """
    for i, text in enumerate(texts):
        if states(kinds, own, text) and any(is_about(t) for t in texts[max(0, i - 1) : i + 2]):
            return True
    return False
