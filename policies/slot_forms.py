"""Spellings of one value: Chinese numerals and digits, units in Chinese and English, date layouts.

``policies.slots`` builds a slot's alternatives from these. Every function returns surface forms
(not yet normalised); only translations that hold one to one are produced: "3年" <-> "三年" <->
"3 years" <-> "3-year", "5次" <-> "五次" <-> "5 times", "¥299" <-> "299元", "15%" <-> "百分之十五",
"第3条" <-> "第三条" <-> "article 3", "2021-03-05" <-> "2021年3月5日" <-> "March 5, 2021".
"""

from __future__ import annotations

CN_DIGITS: dict[str, int] = {
    "零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3,
    "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9,
}  # fmt: skip
CN_UNITS: dict[str, int] = {"十": 10, "百": 100, "千": 1000, "万": 10000}
CN_NUMERAL_CHARS = "".join(CN_DIGITS) + "".join(CN_UNITS)
_CN_DIGIT_BY_VALUE = "零一二三四五六七八九"
CN_MAX = 10000  # Chinese spellings are produced for whole numbers below this

EN_NUMBER_WORDS: dict[str, int] = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
}  # fmt: skip
_EN_WORD_BY_VALUE = {v: k for k, v in EN_NUMBER_WORDS.items()}
MONTH_NAMES = "january february march april may june july august september october november december".split()
MONTHS: dict[str, int] = {
    **{name: i for i, name in enumerate(MONTH_NAMES, 1)},
    **{name[:3]: i for i, name in enumerate(MONTH_NAMES, 1)},
    "sept": 9,
}

# canonical unit -> (Chinese spellings, English (singular, plural) pairs)
DURATIONS: dict[str, tuple[tuple[str, ...], tuple[tuple[str, str], ...]]] = {
    "year": (("年",), (("year", "years"),)),
    "month": (("个月",), (("month", "months"),)),
    "week": (("周", "个星期"), (("week", "weeks"),)),
    "day": (("天",), (("day", "days"),)),
    "hour": (("小时", "个小时"), (("hour", "hours"),)),
    "minute": (("分钟",), (("minute", "minutes"),)),
    "second": (("秒", "秒钟"), (("second", "seconds"),)),
    "workday": (("个工作日", "工作日"), (("business day", "business days"), ("working day", "working days"))),
}
_DURATION_ZH: dict[str, str] = {
    "年": "year", "月": "month", "周": "week", "星期": "week", "天": "day", "小时": "hour",
    "分钟": "minute", "秒": "second", "秒钟": "second", "工作日": "workday",
}  # fmt: skip

CURRENCY_OF: dict[str, str] = {
    "¥": "CNY", "元": "CNY", "块钱": "CNY", "rmb": "CNY", "cny": "CNY", "yuan": "CNY",
    "$": "USD", "us$": "USD", "usd": "USD", "美元": "USD", "美金": "USD", "dollar": "USD", "dollars": "USD",
    "€": "EUR", "eur": "EUR", "欧元": "EUR", "euro": "EUR", "euros": "EUR",
    "£": "GBP", "gbp": "GBP", "英镑": "GBP",
    "hk$": "HKD", "hkd": "HKD", "港币": "HKD", "港元": "HKD",
    "jpy": "JPY", "日元": "JPY", "yen": "JPY",
}  # fmt: skip
CURRENCY_FORMS: dict[str, tuple[str, ...]] = {
    "CNY": ("{n}元", "¥{n}", "{n}rmb", "rmb{n}", "{n}cny", "cny{n}", "{n}块", "{n}块钱", "{n}yuan"),
    "USD": ("${n}", "{n}usd", "usd{n}", "{n}美元", "{n}美金", "{n} dollars"),
    "EUR": ("€{n}", "{n}eur", "eur{n}", "{n}欧元", "{n} euros"),
    "GBP": ("£{n}", "{n}gbp", "gbp{n}", "{n}英镑"),
    "HKD": ("hk${n}", "{n}hkd", "hkd{n}", "{n}港币", "{n}港元"),
    "JPY": ("{n}jpy", "jpy{n}", "{n}日元", "{n} yen"),
}

_CLAUSE_WORDS: dict[str, str] = {
    "section": "section", "sec.": "section", "§": "section", "clause": "clause", "article": "article",
    "art.": "article", "chapter": "chapter", "ch.": "chapter", "part": "part",
}  # fmt: skip
_CLAUSE_EN_TO_ZH: dict[str, str] = {
    "section": "节",
    "article": "条",
    "clause": "条",
    "chapter": "章",
    "part": "部分",
}
_CLAUSE_ZH_TO_EN: dict[str, str] = {"条": "article", "章": "chapter", "节": "section", "部分": "part"}
_MEASURE_ZH_TO_EN: dict[str, str] = {
    "米": "m", "公里": "km", "千米": "km", "厘米": "cm", "毫米": "mm", "公斤": "kg", "千克": "kg",
    "英寸": "inch", "寸": "inch",
}  # fmt: skip
_MEASURE_EN_TO_ZH: dict[str, tuple[str, ...]] = {
    "cm": ("厘米",), "mm": ("毫米",), "km": ("公里", "千米"), "kg": ("公斤", "千克"),
    "inch": ("英寸", "寸"), "inches": ("英寸", "寸"),
}  # fmt: skip


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
            parts.append(("零" if zero else "") + _CN_DIGIT_BY_VALUE[digit] + name)
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
    return _DURATION_ZH.get(unit)


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
    return head + ("点" + "".join(_CN_DIGIT_BY_VALUE[int(c)] for c in fraction) if fraction else "")


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
    if unit.lower() not in _CLAUSE_WORDS:
        forms = [f"第{n}{unit}" for n in zh_numerals(number, cardinal=False)]
        value, english = to_int(number), _CLAUSE_ZH_TO_EN.get(unit)
        return [*forms, f"{english} {value}"] if english and value is not None else forms
    word = _CLAUSE_WORDS[unit.lower()]
    forms = [f"{word} {number}", *([f"§{number}", f"sec. {number}"] if word == "section" else [])]
    if "." in number:
        return [*forms, number]  # a numbered heading "3.2 Refunds" states the section id bare
    return [*forms, f"第{number}{_CLAUSE_EN_TO_ZH[word]}"]


def count_forms(number: str, unit: str, ordinal: bool = False) -> list[str]:
    """Spellings of a count: "5次" -> 五次, 5 times; "2个" -> 两个; "1500米" -> 1500m; "55 inch" -> 55英寸."""
    if ordinal:
        return [f"第{n}{unit}" for n in zh_numerals(number, cardinal=False)]
    lowered = unit.lower()
    if lowered == "times" or unit == "次":
        return [*(f"{n}次" for n in zh_numerals(number)), *(f"{n} times" for n in en_numerals(number))]
    if lowered in _MEASURE_EN_TO_ZH:
        return [f"{number} {lowered}", *(f"{number}{zh}" for zh in _MEASURE_EN_TO_ZH[lowered])]
    if not unit.isascii():
        forms = [f"{n}{unit}" for n in zh_numerals(number)]
        return [*forms, f"{number}{_MEASURE_ZH_TO_EN[unit]}"] if unit in _MEASURE_ZH_TO_EN else forms
    return [f"{number}{lowered}", f"{number} {lowered}"]


def quarter_forms(quarter: str) -> list[str]:
    """A quarter "Q2", "2", "二" is also "second quarter", "2nd quarter", "第二季度", "二季度"; else none."""
    n = to_int(quarter.upper().removeprefix("Q"))
    if n is None or not 1 <= n <= 4:
        return []
    ordinal, chinese = ("first", "second", "third", "fourth")[n - 1], _CN_DIGIT_BY_VALUE[n]
    forms = [f"q{n}", f"{ordinal} quarter", f"{n}{_ordinal_suffix(n)} quarter"]
    return [*forms, f"第{chinese}季度", f"{chinese}季度", f"第{n}季度", f"{n}季度"]


def _ordinal_suffix(day: int) -> str:
    if 10 <= day % 100 <= 20:
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")


def month_number(month: str) -> int | None:
    """A month as 1..12, from digits or an English name or abbreviation."""
    month = month.strip().lower().rstrip(".")
    value = int(month) if month.isdigit() else MONTHS.get(month)
    return value if value is not None and 1 <= value <= 12 else None


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
