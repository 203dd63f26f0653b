"""Values in evidence text for the conflict check: atoms, sentences, what a question asks, what a span is.

Texts are compared atom by atom. An atom is a whole number ("1361", "10.48", "1,015,986"), a word
of a script with spaces ("Kerber", "not"), one CJK character, or one other visible character.
Whole numbers as atoms are what make "70" and "170" differ as values rather than by one inserted
digit. Every atom and sentence keeps absolute document offsets.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise
from typing import Literal

from tools.tokenize import STOPWORDS_EN, STOPWORDS_ZH, index_tokens, normalize, words

ValueKind = Literal["percentage", "amount", "duration", "date", "count", "named", "polarity"]
NUMERIC_KINDS: frozenset[ValueKind] = frozenset({"percentage", "amount", "duration", "date", "count"})
ALL_KINDS: frozenset[ValueKind] = NUMERIC_KINDS | {"named", "polarity"}

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_LETTER = rf"(?:(?![{_CJK}])[^\W\d_])"
_ATOM_RE = re.compile(rf"\d+(?:[.,]\d+)*|{_LETTER}+(?:['’]{_LETTER}+)*|[{_CJK}]|\S")
_CJK_RE = re.compile(rf"^[{_CJK}]$")
_CJK_RUN_RE = re.compile(rf"[{_CJK}]+")
# Digits and CJK characters written together ("2018年") are two words to the segmenter.
_SCRIPT_BOUNDARY = re.compile(rf"(?<=[{_CJK}])(?=[^\W{_CJK}])|(?<=[^\W{_CJK}])(?=[{_CJK}])")
_QUESTION_WORDS = frozenset(
    "多少 多久 多长 多大 几 几个 几次 什么 哪 哪里 哪个 哪些 哪年 谁 是否 时候 何时 为什么".split()
)
# A sentence ends at CJK or Latin end punctuation, an ellipsis, a bar, or a line break. A Latin
# full stop ends one only between a lower-case letter or digit and a capital, so "U.S. Open" and
# "WhatsApp Inc. of" stay whole.
_END_MARKS = "。！？!?；;"
_CLIPPED = r"\.{3}|…+"  # the "..." of a clipped snippet
_SENTENCE_END_RE = re.compile(rf"[{_END_MARKS}|]+|{_CLIPPED}|(?<=[a-z0-9)])\.(?=\s+[A-Z])|\n+")
# Where a statement ends for reading its values: the same ends but the bar and the Latin full stop,
# so a table row's cells ("高级 | 200元") stay one statement.
STATEMENT_END_RE = re.compile(rf"[{_END_MARKS}]+|{_CLIPPED}|\n+")

_ZH_DIGITS = dict(zip("零〇一二两三四五六七八九", (0, 0, 1, 2, 2, 3, 4, 5, 6, 7, 8, 9), strict=True))
_ZH_UNITS = {"十": 10, "百": 100, "千": 1000}
_ZH_NUMERAL_RE = re.compile(r"^[零〇一二两三四五六七八九十百千]+$")

NEGATIONS = frozenset(
    "不 没 没有 无 未 非 禁止 勿 not no never cannot can't isn't aren't doesn't don't won't".split()
)
# Opposite words (normalised); either order counts.
OPPOSITES = frozenset(
    frozenset(pair.split("/"))
    for pair in (
        "free/charged free/paid free/fee allowed/prohibited allowed/forbidden permitted/prohibited yes/no "
        "enabled/disabled 免费/收费 可以/不能 可以/禁止 允许/禁止 支持/不支持 能/不能 开启/关闭"
    ).split()
)
MONTHS: dict[str, int] = {
    name: number
    for number, names in enumerate(
        "jan,january feb,february mar,march apr,april may jun,june jul,july aug,august "
        "sep,sept,september oct,october nov,november dec,december".split(),
        start=1,
    )
    for name in names.split(",")
}
# Atoms that follow a number as its unit; a shared one is taken into the value ("1361" + "万").
UNIT_ATOMS = frozenset(
    "万 亿 千 百 个 人 次 位 名 席 届 级 % ‰ 元 年 月 日 号 天 时 分 秒 周".split()
    + "km kg million billion thousand percent".split()
)
CURRENCIES = frozenset("$ ¥ ￥ € £".split())
_NUMBER_PARTS = (
    UNIT_ATOMS | CURRENCIES | set(MONTHS) | frozenset(", . - – / : st nd rd th am pm us ( ) （ ）".split())
)
_UNIT_CUES: tuple[tuple[ValueKind, frozenset[str], tuple[str, ...]], ...] = (
    ("percentage", frozenset("% ‰ percent".split()), ("百分点",)),
    ("amount", CURRENCIES | frozenset("usd rmb dollars yuan".split()), ("元",)),
    (
        "duration",
        frozenset("days day hours hour minutes weeks months seconds".split()),
        ("工作日", "天", "小时", "分钟", "秒", "个月", "周"),
    ),
    ("date", frozenset(MONTHS), ("年", "月", "日", "号")),
)
_CONNECTORS = frozenset("· • - ' ’ . , &".split())
_NAME_JOINERS = _CONNECTORS - {","}
_NAME_LINKS = frozenset("of the de da van von der la le and & ii iii".split())
_MAX_CJK_NAME = 8
# Particles a name neither starts nor ends with: "报表的", "或应用网关" are phrases, not names.
_CJK_EDGE_PARTICLES = frozenset("的了或与與及在把被将將")
# CJK grammar characters a value is compared without: "与" / "與" and "在男子3" / "男子三" are no new value.
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


_normalized_atom = lru_cache(maxsize=50_000)(normalize)  # atoms repeat: CJK characters, common words


def atoms(text: str, offset: int = 0) -> tuple[Atom, ...]:
    """The atoms of ``text``; offsets are shifted by ``offset`` so they stay absolute."""
    out = []
    for m in _ATOM_RE.finditer(text):
        surface = m.group()
        out.append(Atom(surface, _normalized_atom(surface), offset + m.start(), offset + m.end()))
    return tuple(out)


@lru_cache(maxsize=20_000)
def sentences(text: str, offset: int = 0) -> tuple[Sentence, ...]:
    """Sentences of ``text`` (absolute offsets), each trimmed of surrounding blanks, none empty."""
    bounds = [0, *(m.end() for m in _SENTENCE_END_RE.finditer(text)), len(text)]
    out: list[Sentence] = []
    for start, end in pairwise(bounds):
        piece = text[start:end]
        stripped = piece.strip()
        if stripped:
            lead = offset + start + len(piece) - len(piece.lstrip())
            out.append(Sentence(lead, lead + len(stripped), atoms(stripped, lead)))
    return tuple(out)


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
        if _CJK_RE.match(norm) and zh_numeral(norm) is not None:
            numeral += norm
            continue
        if numeral:
            parts.append(str(zh_numeral(numeral)))
            numeral = ""
        if not norm:
            continue
        if norm[0].isdigit():
            number = norm.replace(",", "")
            parts.append(number.rstrip("0").rstrip(".") if "." in number else number)
        elif norm in MONTHS:
            parts.append(f"m{MONTHS[norm]}")
        elif norm not in _CONNECTORS and norm not in _CJK_FUNCTION:
            parts.append(norm)
    return "|".join(parts)


def is_polarity_pair(left: Sequence[str], right: Sequence[str]) -> bool:
    """True when two spans say yes and no about one thing: a negation put in front, or opposite words."""
    if frozenset({"".join(left), "".join(right)}) in OPPOSITES:
        return True
    shorter, longer = (tuple(left), tuple(right)) if len(left) <= len(right) else (tuple(right), tuple(left))
    cut = len(longer) - len(shorter)
    return cut > 0 and longer[cut:] == shorter and "".join(longer[:cut]) in NEGATIONS


def value_kind(left: Sequence[Atom], right: Sequence[Atom]) -> ValueKind | None:
    """What kind of value two differing spans are, or None when they are not values of one kind."""
    lnorms, rnorms = [a.norm for a in left], [a.norm for a in right]
    if is_polarity_pair(lnorms, rnorms):
        return "polarity"
    if _is_number(lnorms) and _is_number(rnorms):
        return number_kind([*lnorms, *rnorms])
    if _measured(lnorms) != _measured(rnorms):
        return None  # a date or quantity on one side only: "所以" against "1月5日" is no value of one kind
    if _is_named(left) and _is_named(right):
        return "named"
    return None


def number_kind(norms: Sequence[str], following: Sequence[str] = ()) -> ValueKind:
    """Which kind of number a value (with its unit) is; a bare year is a date.

    ``following`` is the word right after the value, which may name its unit ("7个" + "工作日").
    """
    words, text = set(norms) | set(following), "".join([*norms, *following])
    for kind, unit_words, unit_chars in _UNIT_CUES:
        if words & unit_words or any(char in text for char in unit_chars):
            return kind
    if not words & UNIT_ATOMS and any(n.isdigit() and len(n) == 4 and 1000 <= int(n) <= 2100 for n in norms):
        return "date"
    return "count"


def _has_number(norm: str) -> bool:
    return norm[0].isdigit() or zh_numeral(norm) is not None


def is_number_part(norm: str) -> bool:
    """An atom a written number is made of: digits, a numeral, a unit, a month, a separator."""
    return _has_number(norm) or norm in _NUMBER_PARTS


def _is_number(norms: Sequence[str]) -> bool:
    """A span of numbers and what goes with them (units, months, separators), with a number in it."""
    return any(_has_number(n) for n in norms) and all(_has_number(n) or n in _NUMBER_PARTS for n in norms)


def _measured(norms: Sequence[str]) -> bool:
    """A number followed by its unit ("1月", "5日", "3 years"): a date or a quantity, not part of a name."""
    return any(_has_number(n) and following in UNIT_ATOMS for n, following in pairwise(norms))


def _is_named(span: Sequence[Atom]) -> bool:
    """A name: up to eight CJK characters not framed by particles, or capitalised words ("of" allowed)."""
    cjk = [a for a in span if _CJK_RE.match(a.norm)]
    words = [a for a in span if a.norm.isalpha() and not _CJK_RE.match(a.norm)]
    if not cjk and not words:
        return False
    edges = {span[0].norm, span[-1].norm}
    if cjk and (edges & _CJK_EDGE_PARTICLES or len(cjk) > _MAX_CJK_NAME):
        return False
    if any(not (a.surface[0].isupper() or a.norm in _NAME_LINKS) for a in words):
        return False
    return all(a in cjk or a in words or a.norm in _NAME_JOINERS or a.norm.isdigit() for a in span)


def cjk_word_bounds(text: str, offset: int = 0) -> frozenset[int]:
    """Offsets (shifted by ``offset``) where the segmenter starts or ends a CJK word in ``text``."""
    bounds: set[int] = set()
    for run in _CJK_RUN_RE.finditer(text):
        position = offset + run.start()
        bounds.add(position)
        for word in words(run.group()):
            position += len(word)  # NFKC keeps CJK ideographs one character long
            bounds.add(position)
    return frozenset(bounds)


@lru_cache(maxsize=65536)
def stem(norm: str) -> str:
    """An English word's stem, so "Presidents" meets "president"; any other atom as it is."""
    if not norm.isascii() or not norm.isalpha():
        return norm
    stems = index_tokens(norm)
    return stems[0] if stems else norm


def question_terms(question: str) -> frozenset[str]:
    """Content words of a question: segmented CJK words and stemmed English words, numbers apart.

    Stop words, question words ("多少", "谁") and single CJK characters are left out.
    """
    terms: set[str] = set()
    for word in words(_SCRIPT_BOUNDARY.sub(" ", question)):
        if _CJK_RE.match(word[0]):
            if len(word) > 1 and word not in STOPWORDS_ZH and word not in _QUESTION_WORDS:
                terms.add(word)
        elif word.isalnum() and word not in STOPWORDS_EN:
            terms.add(stem(word))
    return frozenset(terms)


def terms_in(norms: Sequence[str], terms: frozenset[str]) -> frozenset[str]:
    """The question terms that occur in a run of atoms."""
    joined = "".join(norms)
    words = {stem(norm) for norm in norms}
    return frozenset(term for term in terms if term in words or (not term.isascii() and term in joined))


def is_scope(span: Sequence[Atom], terms: frozenset[str]) -> bool:
    """True when a side's value is made of the question's own terms: "2018" against the asked "2019"."""
    norms = [atom.norm for atom in span if atom.norm.isalnum() and atom.norm not in UNIT_ATOMS]
    cjk_terms = {term for term in terms if not term.isascii()}
    joined = "".join(norms)
    covered = {i for term in cjk_terms for i in _positions(joined, term)}
    offset, inside = 0, []
    for norm in norms:
        inside.append(stem(norm) in terms or all(i in covered for i in range(offset, offset + len(norm))))
        offset += len(norm)
    return bool(norms) and all(inside)


def _positions(text: str, term: str) -> Iterator[int]:
    start = text.find(term)
    while start >= 0:
        yield from range(start, start + len(term))
        start = text.find(term, start + 1)


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
    (
        re.compile(
            r"谁|哪里|哪儿|在哪|哪个?(?:城市|国家|地方|国)|\b(?:who|whom|whose|where)\b", re.IGNORECASE
        ),
        frozenset({"named"}),
    ),
    (
        re.compile(
            r"是否|能否|可否|能不能|可不可以|是不是|有没有|吗[？?]?$|^(?:can|could|is|are|does|do|will|may|should)\b",
            re.IGNORECASE,
        ),
        frozenset({"polarity"}),
    ),
)
_HOW_TO_RE = re.compile(r"如何|怎么|怎样|怎麼|\bhow (?:to|do|does|can|should)\b", re.IGNORECASE)


@lru_cache(maxsize=4096)  # read by the question analysis and again by the conflict scan
def asked_kinds(question: str) -> frozenset[ValueKind]:
    """The kinds of value a question asks for.

    "When"/"什么时候" asks for a date (or a bare year, read as a count), "how many"/"多少" for a
    number, "who"/"where"/"谁"/"在哪" for a name, a yes/no question for a polarity; with several
    cues, all of them. A how-to question with none of these asks for a procedure, no value; any
    other question ("what"/"什么" alone) may ask for any kind.
    """
    text = question.strip()
    kinds: frozenset[ValueKind] = frozenset()
    for pattern, asked in _ASKS:
        if pattern.search(text):
            kinds |= asked
    if kinds:
        return kinds
    return frozenset() if _HOW_TO_RE.search(text) else ALL_KINDS
