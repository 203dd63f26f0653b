"""Slots: what a question names that the evidence must contain, and whether a text contains it.

A slot is a model or part number, an amount, a duration, a date, a percentage, a count or
quantity, a clause or section id, or a quoted name. Each has a ``norm`` (NFKC, lower case, no
whitespace) and ``alternatives``: other spellings of the same value that also count ("三年" and
"3年" and "3 years"; "¥299" and "299元"; "2021-03-05" and "2021年3月5日"). Cross-language forms are
generated only for units that translate one to one; "30天" is not equated with "30日" because
"3月30日" is a date.

Matching (:func:`slot_in_text`) works on the text normalised with whitespace removed, and a hit
must sit on a boundary: a number does not match inside a longer number ("3年" is not in "13年",
"70" not in "170", "三年" not in "十三年", "$49" not in "$49.99"), and a code does not match inside a
longer code ("X200" is not in "X2000"). Whitespace in the original text is a boundary, so a bare
model in the question matches a longer variant only when a hyphen, space or non-alphanumeric
character follows: "X200" matches "X200-Pro" and "X200 Pro" but not "X200Pro".
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from evidence_loop.policies.lexicon import (
    CN_NUMERAL_CHARS,
    EN_NUMBER_WORDS,
    MODEL_EDITION_WORDS,
    MONTHS,
    NOT_BEFORE_CN_NUMBER,
    NOT_MODEL_NAMES,
)
from evidence_loop.policies.question.places import alternation
from evidence_loop.policies.question.value_forms import (
    amount_forms,
    clause_forms,
    count_forms,
    date_forms,
    duration_forms,
    percent_forms,
    quarter_forms,
)
from evidence_loop.policies.question.values import to_int
from evidence_loop.policies.types import Slot, SlotKind
from evidence_loop.tools.tokenize import STOPWORDS_EN, normalize

Forms = tuple[str, list[str]]  # the surface value and every spelling that counts (norm first)
Builder = Callable[[re.Match[str]], Forms | None]

_CN = f"[{CN_NUMERAL_CHARS}]+"
_EN_NUM = "|".join(EN_NUMBER_WORDS)
_MON = "|".join(sorted(MONTHS, key=len, reverse=True))
_YEAR = "(?:19|20)[0-9]{2}"
_LB = rf"(?<![A-Za-z0-9.{CN_NUMERAL_CHARS}])"  # a number starts here, not inside another one
_QUOTES: tuple[tuple[str, str], ...] = (
    ("“", "”"), ('"', '"'), ("《", "》"), ("「", "」"), ("『", "』"), ("【", "】"), ("‘", "’"),
)  # fmt: skip
QUOTED_MAX_CHARS = 40
CN_COUNT_MIN = 10  # counts in Chinese numerals below this are words ("两个企业"), not asked values
_UNIT_AHEAD_RE = re.compile(
    r"\s*-?\s*(?:%|percent|years?|months?|weeks?|days?|hours?|minutes?|seconds?|times|usd|dollars?|"
    r"euros?|inch(?:es)?|cm|mm|km|kg|gb|mb|tb|st|nd|rd|th)\b",
    re.IGNORECASE,
)
IDENTIFIER_KINDS = frozenset({"model", "clause"})


@dataclass(frozen=True, slots=True)
class _Rule:
    kind: SlotKind
    pattern: re.Pattern[str]
    build: Builder


def _whole(match: re.Match[str]) -> str:
    return " ".join(match.group(0).split())


def _model_token(match: re.Match[str]) -> Forms | None:
    """A token mixing letters and digits; a hyphen between them is optional ("GPT4" = "GPT-4")."""
    token = match.group(0)
    if not (re.search("[A-Za-z]", token) and re.search("[0-9]", token)):
        return None
    joined = re.sub(r"(?<=[A-Za-z])-(?=[0-9])|(?<=[0-9])-(?=[A-Za-z])", "", token)
    forms = [token, joined, re.sub(r"(?<=[A-Za-z])(?=[0-9])", "-", joined, count=1)]
    return token, forms + (quarter_forms(token) if re.fullmatch("[Qq][1-4]", token) else [])


def _count(match: re.Match[str]) -> Forms | None:
    """A number with a measure word; small counts in Chinese numerals ("两个", "三项") are ordinary words."""
    number, unit = match.group("n"), match.group("u")
    if not number.isascii() and (to_int(number) or 0) < CN_COUNT_MIN:
        return None
    return _whole(match), [_whole(match), *count_forms(number, unit)]


def _upper_code(match: re.Match[str]) -> Forms | None:
    """An upper-case code joined by hyphens or underscores: "HDMI-CEC", "TRADE_NOT_EXIST"."""
    token = match.group(0)
    return (token, [token]) if len(token) >= 4 and re.search("[-_]", token) else None


def _named_number(match: re.Match[str]) -> Forms | None:
    """A capitalised name and a number that is no year or amount: "iPhone 14", "Windows 10", "Season 17"."""
    name, number = match.group("w"), match.group("n")
    if name.islower() or name.lower() in STOPWORDS_EN | NOT_MODEL_NAMES or name.lower() in MONTHS:
        return None
    if re.fullmatch(_YEAR, number) or _UNIT_AHEAD_RE.match(match.string, match.end()):
        return None
    return f"{name} {number}", [f"{name} {number}"]


def _quoted(match: re.Match[str]) -> Forms | None:
    inner = match.group("q").strip()
    return (inner, [inner]) if 0 < len(inner) <= QUOTED_MAX_CHARS else None


def _date(match: re.Match[str]) -> Forms | None:
    groups = match.groupdict()
    month = groups.get("mon") or groups.get("m")
    return _whole(match), [_whole(match), *date_forms(groups.get("y"), month, groups.get("d"))]


def _with(make: Callable[..., list[str]], *names: str) -> Builder:
    """A builder that passes the named groups to a forms function."""

    def build(match: re.Match[str]) -> Forms | None:
        return _whole(match), [_whole(match), *make(*(match.group(n) for n in names))]

    return build


def _rule(kind: SlotKind, pattern: str, build: Builder, flags: int = re.IGNORECASE) -> _Rule:
    return _Rule(kind, re.compile(pattern, flags), build)


# Order matters only for ties (same start, same length): the earlier rule wins.
_RULES: tuple[_Rule, ...] = (
    _rule(
        "date",
        rf"(?<![0-9])(?P<y>{_YEAR})\s*年\s*(?P<m>[0-9]{{1,2}})\s*月(?:\s*(?P<d>[0-9]{{1,2}})\s*[日号])?",
        _date,
    ),
    _rule("date", r"(?<![0-9年])(?P<m>[0-9]{1,2})\s*月\s*(?P<d>[0-9]{1,2})\s*[日号]", _date),
    _rule("date", rf"(?<![0-9.])(?P<y>{_YEAR})\s*年", _date),
    _rule(
        "date",
        rf"(?<![0-9.])(?P<y>{_YEAR})(?P<s>[-/.])(?P<m>0?[1-9]|1[0-2])(?:(?P=s)(?P<d>0?[1-9]|[12][0-9]|3[01]))?(?![0-9])",
        _date,
    ),
    _rule(
        "date",
        rf"\b(?P<mon>{_MON})\.?\s+(?P<d>[0-9]{{1,2}})(?:st|nd|rd|th)?(?:,?\s+(?P<y>{_YEAR}))?(?![0-9])",
        _date,
    ),
    _rule(
        "date",
        rf"\b(?P<d>[0-9]{{1,2}})(?:st|nd|rd|th)?\s+(?P<mon>{_MON})\b\.?(?:,?\s+(?P<y>{_YEAR}))?(?![0-9])",
        _date,
    ),
    _rule("date", rf"\b(?P<mon>{_MON})\.?,?\s+(?P<y>{_YEAR})(?![0-9])", _date),
    _rule("date", rf"(?<![0-9.,])(?P<y>{_YEAR})(?![0-9]|\.[0-9])", _date),
    _rule("date", r"第?(?P<n>[一二三四1-4])\s*季度", _with(quarter_forms, "n")),
    _rule(
        "amount",
        r"(?<![A-Za-z0-9])(?P<c>us\$|hk\$|[¥$€£]|(?:usd|rmb|cny|eur|gbp|hkd|jpy)(?=\s?[0-9]))\s?"
        r"(?P<n>[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]+)?|[0-9]+(?:\.[0-9]+)?)",
        _with(amount_forms, "n", "c"),
    ),
    _rule(
        "amount",
        r"(?<![A-Za-z0-9.])(?P<n>[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]+)?|[0-9]+(?:\.[0-9]+)?)\s*"
        r"(?P<c>万元|亿元|块钱|元|美元|美金|欧元|英镑|港币|港元|日元|(?:usd|rmb|cny|eur|gbp|hkd|jpy|yuan|dollars?|euros?|yen)\b)",
        _with(amount_forms, "n", "c"),
    ),
    _rule(
        "percentage", r"(?<![0-9.])(?P<n>[0-9]+(?:\.[0-9]+)?)\s*(?:%|per\s?cent\b)", _with(percent_forms, "n")
    ),
    _rule("percentage", rf"百分之(?P<n>{_CN}(?:点[{CN_NUMERAL_CHARS}]+)?)", _with(percent_forms, "n")),
    _rule(
        "duration",
        rf"{_LB}(?!{_YEAR}\s*年)(?P<n>[0-9]+(?:\.[0-9]+)?|(?<![{NOT_BEFORE_CN_NUMBER}]){_CN})\s*"
        r"(?P<u>个月|个?小时|个?工作日|个?星期|周(?!年)|天|年|分钟|秒钟?)",
        _with(duration_forms, "n", "u"),
    ),
    _rule(
        "duration",
        rf"(?<![A-Za-z0-9.])(?P<n>[0-9]+(?:\.[0-9]+)?|{_EN_NUM})\s*-?\s*"
        r"(?P<u>(?:business|working)\s+days?|years?|months?|weeks?|days?|hours?|minutes?|seconds?)(?![A-Za-z])",
        _with(duration_forms, "n", "u"),
    ),
    _rule(
        "clause", rf"第\s*(?P<n>[0-9]+|{_CN})\s*(?P<u>条|章|节|款|项|篇|部分)", _with(clause_forms, "n", "u")
    ),
    _rule(
        "clause",
        r"\b(?P<u>section|sec\.|clause|article|art\.|chapter|ch\.|part)\s*(?P<n>[0-9]+(?:\.[0-9]+)*)",
        _with(clause_forms, "n", "u"),
    ),
    _rule("clause", r"(?P<u>§)\s*(?P<n>[0-9]+(?:\.[0-9]+)*)", _with(clause_forms, "n", "u")),
    _rule("clause", r"(?<![0-9.])[0-9]+\.[0-9]+\.[0-9]+(?:\.[0-9]+)*(?!\.?[0-9])", _with(lambda: [])),
    _rule(
        "count",
        rf"第\s*(?P<n>[0-9]+|{_CN})\s*(?P<u>届|季|任|艘|代|集|期|轮|批|名|版|场)",
        _with(lambda n, u: count_forms(n, u, ordinal=True), "n", "u"),
    ),
    _rule("count", r"(?<![A-Za-z0-9])[0-9]+(?:st|nd|rd|th)\b", _with(lambda: [])),
    _rule(
        "count",
        rf"{_LB}(?P<n>[0-9]+(?:\.[0-9]+)?|(?<![{NOT_BEFORE_CN_NUMBER}]){_CN})\s*"
        r"(?P<u>平方米|公里|千米|厘米|毫米|公斤|千克|毫升|英寸|次|遍|个|位|名|人|台|张|份|件|笔|条|项|种|家|款|部|篇|场|辆|架|本|页|米|克|吨|升|寸)",
        _count,
    ),
    _rule(
        "count",
        rf"(?<![A-Za-z0-9.])(?P<n>[0-9]+(?:\.[0-9]+)?|{_EN_NUM})\s*-?\s*"
        r"(?P<u>times|inch(?:es)?|cm|mm|km|kg|gb|mb|tb|kb|mah|ghz|mhz|hz|mbps)\b",
        _count,
    ),
    _rule("model", r"(?<![A-Za-z0-9])[A-Za-z0-9]+(?:[-_./][A-Za-z0-9]+)*(?![A-Za-z0-9])", _model_token),
    _rule("model", r"(?<![A-Za-z0-9])[A-Z][A-Z0-9]*(?:[-_.][A-Z0-9]+)+(?![A-Za-z0-9])", _upper_code, 0),
    _rule(
        "model",
        r"(?<![A-Za-z0-9])(?P<w>[A-Za-z]+) (?P<n>[0-9]+(?:\.[0-9]+)?)(?![0-9A-Za-z]|\.[0-9])",
        _named_number,
        0,
    ),
    _rule("model", r"(?<![0-9月])[0-9]+号(?:线|楼|门|店|院|厅|馆)", _with(lambda: [])),
    *(
        _rule(
            "quoted",
            rf"{re.escape(o)}(?P<q>[^{re.escape(c)}\n]{{1,{QUOTED_MAX_CHARS + 10}}}?){re.escape(c)}",
            _quoted,
        )
        for o, c in _QUOTES
    ),
)


def compact(text: str) -> str:
    """NFKC, lower case, whitespace removed: the form slots are compared in."""
    return "".join(normalize(text).split())


def _slot(kind: SlotKind, value: str, spellings: list[str]) -> Slot:
    norm = compact(spellings[0])
    return Slot(
        kind, value, norm, tuple(dict.fromkeys(f for f in map(compact, spellings) if f and f != norm))
    )


def _candidates(text: str) -> list[tuple[int, int, int, Slot]]:
    """Every rule's matches as (start, -length, rule order, slot), leftmost and longest first."""
    found: list[tuple[int, int, int, Slot]] = []
    for order, rule in enumerate(_RULES):
        for match in rule.pattern.finditer(text):
            if built := rule.build(match):
                found.append((match.start(), match.start() - match.end(), order, _slot(rule.kind, *built)))
    return sorted(found, key=lambda c: c[:3])


def extract_slots(question: str) -> tuple[Slot, ...]:
    """The question's slots in order of appearance, without overlaps (leftmost, then longest wins) or repeats.

    ``value`` is the matched text after NFKC (full-width digits become ASCII). A slot whose
    norm is already one of an earlier slot's spellings ("三年" after "3年") is a repeat.
    """
    text = " ".join(unicodedata.normalize("NFKC", question).split())
    slots: list[Slot] = []
    seen: set[str] = set()
    taken_until = 0
    for start, negative_length, _order, slot in _candidates(text):
        if start < taken_until:
            continue
        taken_until = start - negative_length
        if slot.norm in seen:
            continue
        seen.update((slot.norm, *slot.alternatives))
        slots.append(slot)
    return tuple(slots)


_MARKS = str.maketrans("", "", "™®©")  # "Chronicles™ 2" is "Chronicles 2"; NFKC would make ™ "tm"


@lru_cache(maxsize=65536)
def _compact_with_gaps(text: str) -> tuple[str, frozenset[int]]:
    """The compact form of a text and the positions in it where whitespace was removed."""
    chars: list[str] = []
    gaps: set[int] = set()
    for char in normalize(text.translate(_MARKS)):
        if char.isspace():
            gaps.add(len(chars))
        else:
            chars.append(char)
    return "".join(chars), frozenset(gaps)


def _glued(left: str, right: str) -> bool:
    """True when two adjacent characters belong to one number or one code."""
    if left.isascii() and right.isascii():
        return left.isalnum() and right.isalnum()
    return left in CN_NUMERAL_CHARS and right in CN_NUMERAL_CHARS


def _on_boundary(form: str, text: str, gaps: frozenset[int], start: int) -> bool:
    """A hit at ``start`` neither continues a number/code on the left nor on the right."""
    end = start + len(form)
    left = "" if start == 0 or start in gaps else text[start - 1]
    right = "" if end == len(text) or end in gaps else text[end]
    if (left and _glued(left, form[0])) or (right and _glued(form[-1], right)):
        return False
    # A decimal point glues numbers too: "3年" is not in "1.3年", "$49" is not in "$49.99".
    if left == "." and form[0].isdigit() and start >= 2 and text[start - 2].isdigit():
        return False
    return not (right == "." and form[-1].isdigit() and end + 1 < len(text) and text[end + 1].isdigit())


def _occurs(form: str, text: str, gaps: frozenset[int]) -> bool:
    start = text.find(form)
    while start != -1:
        if _on_boundary(form, text, gaps, start):
            return True
        start = text.find(form, start + 1)
    return False


def slot_in_text(slot: Slot, text: str) -> bool:
    """True when the text contains the slot's norm or one of its alternatives, on a boundary."""
    compacted, gaps = _compact_with_gaps(text)
    return any(_occurs(form, compacted, gaps) for form in (slot.norm, *slot.alternatives) if form)


def identifiers(slots: Sequence[Slot]) -> tuple[Slot, ...]:
    """The identifiers among slots: model or part numbers, clause ids, versions (a digit in each)."""
    return tuple(
        s for s in slots if s.kind in IDENTIFIER_KINDS and any(map(_has_digit, (s.norm, *s.alternatives)))
    )


def _has_digit(form: str) -> bool:
    return any(c.isdigit() for c in form)


_EDITION_RE = re.compile(rf"\s*(?:{alternation(MODEL_EDITION_WORDS)})\b|\+", re.IGNORECASE)


def model_spans(text: str) -> list[tuple[int, int]]:
    """Where ``text`` names a model number, with an edition word after it ("C200 Pro" is no "C200")."""
    spans: list[tuple[int, int]] = []
    if not any(c.isdigit() for c in text):
        return spans  # a model number has a digit
    at = 0
    for slot in identifiers(extract_slots(text)):
        start = text.find(slot.value, at)
        if start < 0:
            continue
        end = start + len(slot.value)
        edition = _EDITION_RE.match(text, end)
        at = end = edition.end() if edition is not None else end
        spans.append((start, end))
    return spans
