"""Spellings of one value: Chinese numerals and digits, units in Chinese and English, date layouts.

``policies.question.values`` reads a value; this module writes it every way it may be written, because a
slot is matched by its spellings (``policies.question.slots`` builds a slot's alternatives from these). Every
function returns surface forms (not yet normalised); only translations that hold one to one are
produced: "3年" <-> "三年" <-> "3 years" <-> "3-year", "5次" <-> "五次" <-> "5 times", "¥299" <->
"299元", "15%" <-> "百分之十五", "第3条" <-> "第三条" <-> "article 3", "2021-03-05" <-> "2021年3月5日"
<-> "March 5, 2021".
"""

from __future__ import annotations

from evidence_loop.policies.lexicon import (
    CLAUSE_EN_TO_ZH,
    CLAUSE_WORDS,
    CLAUSE_ZH_TO_EN,
    CN_DIGIT_BY_VALUE,
    CN_DIGITS,
    CURRENCY_FORMS,
    CURRENCY_OF,
    DURATION_ZH,
    DURATIONS,
    EN_NUMBER_WORDS,
    EN_ORDINAL_QUARTERS,
    MEASURE_EN_TO_ZH,
    MEASURE_ZH_TO_EN,
    MONTH_NAMES,
)
from evidence_loop.policies.question.values import int_to_cn, month_number, to_int

_EN_WORD_BY_VALUE = {v: k for k, v in EN_NUMBER_WORDS.items()}


def zh_numerals(number: str, cardinal: bool = True) -> list[str]:
    """Ways Chinese text writes the number: digits and Chinese numerals.

    A cardinal 2 before a measure word is "两" ("两年", "两次"); "二次" means "secondary", so "二"
    is kept only for ordinals ("第二条").
    """
    value = to_int(number)
    if value is None:
        return [number]
    chinese = "两" if cardinal and value == 2 else int_to_cn(value)
    return [str(value), *filter(None, [chinese])]


def en_numerals(number: str) -> list[str]:
    """Ways English text writes the number: digits, and the word for one to twelve."""
    value = to_int(number)
    if value is None:
        return [number]
    return [str(value), *filter(None, [_EN_WORD_BY_VALUE.get(value)])]


def _duration_unit(unit: str) -> str | None:
    unit = " ".join(unit.lower().split()).removeprefix("个")
    if unit.startswith(("business", "working")):
        return "workday"
    for canonical, (_zh, english) in DURATIONS.items():
        if any(unit in pair for pair in english):
            return canonical
    return DURATION_ZH.get(unit)


def duration_forms(number: str, unit: str) -> list[str]:
    """Spellings of a duration: "3年" -> 三年, 3 years, 3-year; "30 days" -> 30天, 三十天."""
    canonical = _duration_unit(unit)
    if canonical is None:
        return []
    zh_units, en_units = DURATIONS[canonical]
    forms = [n + u for n in zh_numerals(number) for u in zh_units]
    one = to_int(number) == 1
    for n in en_numerals(number):
        for singular, plural in en_units:
            forms += [f"{n} {singular if one else plural}", f"{n}-{singular}"]
    return forms


def _grouped(plain: str) -> str:
    whole, dot, fraction = plain.partition(".")
    return f"{int(whole):,}{dot}{fraction}"


def amount_forms(number: str, currency: str) -> list[str]:
    """Spellings of an amount: "299元" -> ¥299, 299rmb; "$1,299" -> 1299usd (none for 万元/亿元)."""
    code = CURRENCY_OF.get(currency.lower())
    if code is None:
        return []
    plain = number.replace(",", "")
    numbers = dict.fromkeys([plain, _grouped(plain)])
    return [template.format(n=n) for template in CURRENCY_FORMS[code] for n in numbers]


def _decimal_to_cn(value: str) -> str | None:
    whole, _, fraction = value.partition(".")
    head = "零" if whole == "0" else int_to_cn(int(whole))
    if head is None:
        return None
    return head + ("点" + "".join(CN_DIGIT_BY_VALUE[int(c)] for c in fraction) if fraction else "")


def percent_forms(number: str) -> list[str]:
    """Spellings of a percentage: "15" -> 15%, 15 percent, 百分之十五; "三点五" (after 百分之) -> 3.5%."""
    if not number.isascii():
        whole, _, fraction = number.partition("点")
        value = to_int(whole)
        if value is None or any(c not in CN_DIGITS for c in fraction):
            return []
        number = str(value) + ("." + "".join(str(CN_DIGITS[c]) for c in fraction) if fraction else "")
    forms = [f"{number}%", f"{number} percent", f"{number} per cent"]
    chinese = _decimal_to_cn(number)
    return [*forms, f"百分之{chinese}"] if chinese else forms


def clause_forms(number: str, unit: str) -> list[str]:
    """Spellings of a clause id: "第3条" -> 第三条, article 3; "section 3.2" -> §3.2, 3.2; "§4" -> 第4节."""
    if unit.lower() not in CLAUSE_WORDS:
        forms = [f"第{n}{unit}" for n in zh_numerals(number, cardinal=False)]
        value, english = to_int(number), CLAUSE_ZH_TO_EN.get(unit)
        return [*forms, f"{english} {value}"] if english and value is not None else forms
    word = CLAUSE_WORDS[unit.lower()]
    forms = [f"{word} {number}", *([f"§{number}", f"sec. {number}"] if word == "section" else [])]
    if "." in number:
        return [*forms, number]  # a numbered heading "3.2 Refunds" states the section id bare
    return [*forms, f"第{number}{CLAUSE_EN_TO_ZH[word]}"]


def count_forms(number: str, unit: str, ordinal: bool = False) -> list[str]:
    """Spellings of a count: "5次" -> 五次, 5 times; "2个" -> 两个; "1500米" -> 1500m; "55 inch" -> 55英寸."""
    if ordinal:
        return [f"第{n}{unit}" for n in zh_numerals(number, cardinal=False)]
    lowered = unit.lower()
    if lowered == "times" or unit == "次":
        return [*(f"{n}次" for n in zh_numerals(number)), *(f"{n} times" for n in en_numerals(number))]
    if lowered in MEASURE_EN_TO_ZH:
        return [f"{number} {lowered}", *(f"{number}{zh}" for zh in MEASURE_EN_TO_ZH[lowered])]
    if not unit.isascii():
        forms = [f"{n}{unit}" for n in zh_numerals(number)]
        return [*forms, f"{number}{MEASURE_ZH_TO_EN[unit]}"] if unit in MEASURE_ZH_TO_EN else forms
    return [f"{number}{lowered}", f"{number} {lowered}"]


def quarter_forms(quarter: str) -> list[str]:
    """A quarter "Q2", "2", "二" is also "second quarter", "2nd quarter", "第二季度", "二季度"; else none."""
    n = to_int(quarter.upper().removeprefix("Q"))
    if n is None or not 1 <= n <= 4:
        return []
    ordinal, chinese = EN_ORDINAL_QUARTERS[n - 1], CN_DIGIT_BY_VALUE[n]
    forms = [f"q{n}", f"{ordinal} quarter", f"{n}{_ordinal_suffix(n)} quarter"]
    return [*forms, f"第{chinese}季度", f"{chinese}季度", f"第{n}季度", f"{n}季度"]


def _ordinal_suffix(day: int) -> str:
    if 10 <= day % 100 <= 20:
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")


def date_forms(year: str | None, month: str | None, day: str | None) -> list[str]:
    """The layouts a date is written in, for whichever of year, month and day are given."""
    y = int(year) if year else None
    m = month_number(month) if month else None
    d = int(day) if day else None
    if (month and m is None) or (d is not None and not 1 <= d <= 31):
        return []
    names = (MONTH_NAMES[m - 1], MONTH_NAMES[m - 1][:3]) if m else ()
    if y and m and d:
        return [
            f"{y}年{m}月{d}日", f"{y}年{m}月{d}号", f"{y}年{m:02d}月{d:02d}日", f"{y}-{m:02d}-{d:02d}",
            f"{y}-{m}-{d}", f"{y}/{m}/{d}", f"{y}/{m:02d}/{d:02d}", f"{y}.{m:02d}.{d:02d}", f"{y}.{m}.{d}",
            *(f for n in names for f in (f"{n} {d}, {y}", f"{n} {d} {y}", f"{d} {n} {y}",
                                         f"{n} {d}{_ordinal_suffix(d)}, {y}")),
        ]  # fmt: skip
    if y and m:
        return [
            f"{y}年{m}月", f"{y}年{m:02d}月", f"{y}-{m:02d}", f"{y}-{m}", f"{y}/{m}", f"{y}/{m:02d}",
            *(f for n in names for f in (f"{n} {y}", f"{n}, {y}")),
        ]  # fmt: skip
    if m and d:
        return [
            f"{m}月{d}日", f"{m}月{d}号",
            *(f for n in names for f in (f"{n} {d}", f"{n} {d}{_ordinal_suffix(d)}", f"{d} {n}")),
        ]  # fmt: skip
    return [f"{y}年", f"{y}"] if y else []
