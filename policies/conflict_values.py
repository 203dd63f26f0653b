"""Values inside evidence text: atoms, sentences, what a question asks for, and what kind of value a span is.

The conflict check compares texts atom by atom. An atom is a whole number ("1361", "10.48",
"1,015,986"), a word of a script with spaces ("Kerber", "not"), one CJK character, or one other
visible character. Whole numbers as atoms are what make "70" and "170" differ as values rather
than by one inserted digit. Every atom and sentence keeps absolute document offsets.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Literal

ValueKind = Literal["percentage", "amount", "duration", "date", "count", "named", "polarity"]
NUMERIC_KINDS: frozenset[ValueKind] = frozenset({"percentage", "amount", "duration", "date", "count"})
ALL_KINDS: frozenset[ValueKind] = NUMERIC_KINDS | {"named", "polarity"}

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_LETTER = rf"(?:(?![{_CJK}])[^\W\d_])"
_ATOM_RE = re.compile(rf"\d+(?:[.,]\d+)*|{_LETTER}+(?:['’]{_LETTER}+)*|[{_CJK}]|\S")
# A sentence ends at CJK or Latin end punctuation, an ellipsis, a bar, or a line break. A Latin
# full stop ends one only between a lower-case letter or digit and a capital ("U.S. Open" and
# "Inc. of" stay whole).
_SENTENCE_END_RE = re.compile(r"[。！？!?；;|]+|\.{3}|…+|(?<=[a-z0-9)])\.(?=\s+[A-Z])|\n+")
_CJK_RE = re.compile(rf"^[{_CJK}]$")

_ZH_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_ZH_UNITS = {"十": 10, "百": 100, "千": 1000}
_ZH_NUMERAL_RE = re.compile(r"^[零〇一二两三四五六七八九十百千]+$")

NEGATIONS: frozenset[str] = frozenset(
    {"不", "没", "没有", "无", "未", "非", "禁止", "勿", "not", "no", "never", "cannot", "can't", "isn't",
     "aren't", "doesn't", "don't", "won't", "without", "non"}
)
# Opposite words, normalised; either order counts.
OPPOSITES: frozenset[frozenset[str]] = frozenset(
    frozenset(pair)
    for pair in (
        ("free", "charged"), ("free", "paid"), ("free", "fee"), ("allowed", "prohibited"),
        ("allowed", "forbidden"), ("permitted", "prohibited"), ("yes", "no"), ("enabled", "disabled"),
        ("免费", "收费"), ("可以", "不能"), ("可以", "禁止"), ("允许", "禁止"), ("支持", "不支持"), ("能", "不能"),
        ("开启", "关闭"),
    )
)
MONTHS: dict[str, int] = {
    name: number
    for number, names in enumerate(
        (("jan", "january"), ("feb", "february"), ("mar", "march"), ("apr", "april"), ("may",),
         ("jun", "june"), ("jul", "july"), ("aug", "august"), ("sep", "sept", "september"),
         ("oct", "october"), ("nov", "november"), ("dec", "december")),
        start=1,
    )
    for name in names
}
_PERCENT_UNITS = frozenset({"%", "‰", "percent", "个百分点"})
_AMOUNT_UNITS = frozenset({"元", "块", "$", "¥", "￥", "€", "£", "usd", "rmb", "dollars", "yuan", "美元", "欧元"})
_DURATION_UNITS = frozenset(
    {"天", "小时", "分钟", "秒", "周", "days", "day", "hours", "hour", "minutes", "weeks", "months", "seconds"}
)
_DATE_UNITS = frozenset({"年", "月", "日", "号"})
UNIT_ATOMS: frozenset[str] = frozenset(
    {"万", "亿", "千", "百", "个", "人", "次", "位", "名", "席", "届", "级", "%", "‰", "元", "年", "月", "日", "号",
     "天", "时", "分", "秒", "周", "km", "kg", "million", "billion", "thousand", "percent", "$", "¥", "€", "£"}
)
_NUMBER_PARTS = UNIT_ATOMS | _PERCENT_UNITS | _AMOUNT_UNITS | _DURATION_UNITS | set(MONTHS) | frozenset(
    {",", ".", "-", "–", "/", ":", "st", "nd", "rd", "th", "am", "pm", "us", "(", ")", "（", "）"}
)
_CONNECTORS = frozenset({"·", "•", "-", "'", "’", ".", ",", "&"})
_NAME_JOINERS = frozenset({"·", "•", "-", "'", "’", ".", "&"})
_MAX_CJK_NAME = 8
_NAME_LINKS = frozenset({"of", "the", "de", "da", "van", "von", "der", "la", "le", "and", "&", "ii", "iii"})
# Single CJK characters that are grammar, not names: a variant of "与" is no other value.
_CJK_FUNCTION = frozenset("的了之与與和及或在于於是為为由被把将將也都又而其这這那此该該")


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


def normalize(text: str) -> str:
    """NFKC and lower case, as everywhere in the project."""
    return unicodedata.normalize("NFKC", text).lower()


def atoms(text: str, offset: int = 0) -> tuple[Atom, ...]:
    """The atoms of ``text``; offsets are shifted by ``offset`` so they stay absolute."""
    return tuple(
        Atom(m.group(), normalize(m.group()), offset + m.start(), offset + m.end()) for m in _ATOM_RE.finditer(text)
    )


def sentences(text: str, offset: int = 0) -> tuple[Sentence, ...]:
    """Sentences of ``text`` (absolute offsets), each trimmed of surrounding blanks, none empty."""
    out: list[Sentence] = []
    cursor = 0
    for match in _SENTENCE_END_RE.finditer(text):
        out.extend(_sentence(text, cursor, match.end(), offset))
        cursor = match.end()
    out.extend(_sentence(text, cursor, len(text), offset))
    return tuple(out)


def _sentence(text: str, start: int, end: int, offset: int) -> list[Sentence]:
    piece = text[start:end]
    stripped = piece.strip()
    if not stripped:
        return []
    lead = start + (len(piece) - len(piece.lstrip()))
    return [Sentence(offset + lead, offset + lead + len(stripped), atoms(stripped, offset + lead))]


def zh_numeral(text: str) -> int | None:
    """The value of a Chinese numeral under ten thousand ("七十" -> 70), or None."""
    if not _ZH_NUMERAL_RE.match(text):
        return None
    total, digit = 0, 0
    for char in text:
        if char in _ZH_DIGITS:
            digit = _ZH_DIGITS[char]
        else:
            total += (digit or 1) * _ZH_UNITS[char]
            digit = 0
    return total + digit


def canonical(norms: tuple[str, ...]) -> str:
    """A span's value in a form where one value written two ways compares equal.

    Numbers lose thousands separators and trailing decimal zeros, Chinese numerals and month names
    become digits, and connecting punctuation and CJK particles are ignored: "Oct 19, 2021" equals
    "October 19 2021", "在男子3" equals "男子三".
    """
    parts: list[str] = []
    for norm in norms:
        if norm[0].isdigit():
            number = norm.replace(",", "")
            parts.append(number.rstrip("0").rstrip(".") if "." in number else number)
        elif (value := zh_numeral(norm)) is not None:
            parts.append(str(value))
        elif norm in MONTHS:
            parts.append(f"m{MONTHS[norm]}")
        elif norm not in _CONNECTORS and norm not in _CJK_FUNCTION:
            parts.append(norm)
    return "|".join(parts)


def is_polarity_pair(left: tuple[str, ...], right: tuple[str, ...]) -> bool:
    """True when two spans say yes and no about one thing: a negation added, or opposite words."""
    if frozenset({"".join(left), "".join(right)}) in OPPOSITES:
        return True
    shorter, longer = (left, right) if len(left) <= len(right) else (right, left)
    if len(longer) <= len(shorter) or longer[len(longer) - len(shorter) :] != shorter:
        return False
    return "".join(longer[: len(longer) - len(shorter)]) in NEGATIONS


def value_kind(left: tuple[Atom, ...], right: tuple[Atom, ...], after: tuple[str, ...]) -> ValueKind | None:
    """What kind of value two differing spans are, or None when they are not values.

    ``after`` holds the atoms that follow both spans (the "万" of "1361万"), which name the unit.
    """
    lnorms, rnorms = tuple(a.norm for a in left), tuple(a.norm for a in right)
    if is_polarity_pair(lnorms, rnorms):
        return "polarity"
    if _is_number(lnorms) and _is_number(rnorms):
        return _number_kind(lnorms + rnorms + after)
    if _is_named(left) and _is_named(right):
        return "named"
    return None


def _has_number(norm: str) -> bool:
    return norm[0].isdigit() or zh_numeral(norm) is not None


def _is_number(norms: tuple[str, ...]) -> bool:
    """A span made of numbers and what goes with them (units, months, separators), with a number in it."""
    return any(_has_number(n) for n in norms) and all(_has_number(n) or n in _NUMBER_PARTS for n in norms)


def _number_kind(norms: tuple[str, ...]) -> ValueKind:
    words = set(norms)
    if words & _PERCENT_UNITS:
        return "percentage"
    if words & _AMOUNT_UNITS:
        return "amount"
    if words & _DURATION_UNITS:
        return "duration"
    if words & (_DATE_UNITS | set(MONTHS)) or any(n.isdigit() and len(n) == 4 and 1000 <= int(n) <= 2100 for n in norms):
        return "date"
    return "count"


def _is_named(span: tuple[Atom, ...]) -> bool:
    """A name: CJK characters that are not mere grammar, or capitalised words (with "of", "de", ...)."""
    cjk = [a for a in span if _CJK_RE.match(a.norm)]
    words = [a for a in span if a.norm.isalpha() and not _CJK_RE.match(a.norm)]
    if not cjk and not words:
        return False
    if cjk and (span[0].norm in _CJK_FUNCTION or span[-1].norm in _CJK_FUNCTION or len(cjk) > _MAX_CJK_NAME):
        return False
    if any(not (a.surface[0].isupper() or a.norm in _NAME_LINKS) for a in words):
        return False
    return all(a in cjk or a in words or a.norm in _NAME_JOINERS or a.norm.isdigit() for a in span)


_ASKS: tuple[tuple[re.Pattern[str], frozenset[ValueKind]], ...] = (
    (
        re.compile(
            r"什么时候|何时|哪一?年|哪天|几月|几号|日期|时间|\bwhen\b|\bwhat (?:year|date|day|time)\b"
            r"|\bwhich year\b|\bdate\b",
            re.IGNORECASE,
        ),
        frozenset({"date", "count"}),
    ),
    (
        re.compile(
            r"多少|几|多[大长久高重远]|比例|比率|[率额]|\bhow (?:many|much|long|old|far|big)\b"
            r"|\bwhat (?:percentage|amount|number|price|rate)\b|\bcosts?\b",
            re.IGNORECASE,
        ),
        NUMERIC_KINDS,
    ),
    (re.compile(r"谁|哪里|哪儿|在哪|哪个?(?:城市|国家|地方|国)|\b(?:who|whom|whose|where)\b", re.IGNORECASE), frozenset({"named"})),
    (
        re.compile(
            r"是否|能否|可否|能不能|可不可以|是不是|有没有|吗[？?]?$|^(?:can|could|is|are|does|do|will|may|should)\b",
            re.IGNORECASE,
        ),
        frozenset({"polarity"}),
    ),
)


def asked_kinds(question: str) -> frozenset[ValueKind]:
    """The kinds of value a question asks for; every kind when it does not say.

    "When"/"什么时候" asks for a date (or a bare year, which reads as a count), "how many"/"多少"
    for a number, "who"/"where"/"谁"/"在哪" for a name, a yes/no question for a polarity; a
    question with several cues asks for all of them, and "what"/"什么" alone says nothing.
    """
    kinds: frozenset[ValueKind] = frozenset()
    for pattern, asked in _ASKS:
        if pattern.search(question.strip()):
            kinds |= asked
    return kinds or ALL_KINDS
