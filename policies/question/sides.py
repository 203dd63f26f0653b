"""The sides of a comparison question, read off its text with the rest of the question.

"What is the difference between the Standard and the Premium plan", "标准会员和尊享会员有什么区别",
"compare A with B", "A vs B", "A 与 B 哪个更划算": :func:`comparison_sides` gives the named things
compared, each told apart by its own words; one thing and its complement ("专业版和非专业版") has
none. Which evidence speaks for a side is the evidence's question (``policies/evidence/comparison.py``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from evidence_loop.policies.lexicon import (
    COMPARE_LINKS_ZH,
    COMPARE_NOUNS_ZH,
    COMPARE_VERBS_ZH,
    COMPARE_WHICH_ZH,
    COMPLEMENT_PREFIXES,
    SIDE_FILLERS_EN,
    SIDE_PREFIXES_ZH,
    SIDE_SUFFIXES_ZH,
)
from evidence_loop.tools.tokenize import index_tokens


@dataclass(frozen=True, slots=True)
class Side:
    """One named thing a question compares: its name as the question writes it (framing words
    dropped) and the index terms that tell it from the other sides (the words every side shares,
    "plan", "版", left out)."""

    name: str
    terms: tuple[str, ...]
    head: tuple[str, ...] = ()  # the terms every side shares: what kind of thing is compared


def _alt(words: Sequence[str]) -> str:
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


# A side is a run of words inside one clause; lists of sides are joined by commas (en) or "、" (zh).
_S_EN = r"[^\W_][^,;:?!，。？！；：]*?"
_LIST_EN = rf"{_S_EN}(?:\s*,\s*{_S_EN})*,?"
# where the last side ends: the clause ends, or the question goes on about an aspect
_END_EN = (
    r"(?=\s*(?:[?!,;:，。？！；：]|\.(?:\s|$)|$)|\s+(?:in|for|when|regarding|about|on|if|which|while|so|because"
    r"|in terms of|and (?:what|which|how|why))\b)"
)
_S_ZH = r"[^，。？！?!,;；:：、\s][^，。？！?!,;；:：、]*?"
_LIST_ZH = rf"{_S_ZH}(?:、{_S_ZH})*"
_LINK_ZH = f"(?:{_alt(COMPARE_LINKS_ZH)})"
_WHICH_ZH = _alt(COMPARE_WHICH_ZH)
_PATTERNS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        # English
        rf"\bdiff(?:erences?|er|erence)\s+between\s+(?P<a>{_LIST_EN})\s+and\s+(?P<b>{_S_EN}){_END_EN}",
        rf"\bdistinguish\s+between\s+(?P<a>{_LIST_EN})\s+and\s+(?P<b>{_S_EN}){_END_EN}",
        rf"\b(?:compare|comparing|comparison\s+(?:of|between))\s+(?P<a>{_LIST_EN})\s+"
        rf"(?:and|with|to|against|vs\.?|versus)\s+(?P<b>{_S_EN}){_END_EN}",
        rf"\bhow\s+(?:does|do|did|is|are)\s+(?P<a>{_S_EN})\s+(?:compare|stack\s+up)\s+(?:to|with|against)\s+"
        rf"(?P<b>{_S_EN}){_END_EN}",
        rf"\b(?:how\s+(?:does|do|is|are)|is|are)\s+(?P<a>{_S_EN})\s+(?:differ|different)\s+from\s+"
        rf"(?P<b>{_S_EN}){_END_EN}",
        rf"(?P<a>{_S_EN})\s+(?:vs\.?|versus)\s+(?P<b>{_S_EN}){_END_EN}",
        rf"\bwhich\b[^?]*?(?:,|:|\bbetween\b)\s*(?P<a>{_LIST_EN})\s+(?:or|and)\s+(?P<b>{_S_EN}){_END_EN}",
        rf"(?P<a>{_S_EN})\s+or\s+(?P<b>{_S_EN})\s*[,:?]\s*which\b",
        rf"(?P<a>{_LIST_EN})\s+and\s+(?P<b>{_S_EN})\s*[:,]?\s*what(?:'s|\s+is|\s+are)\s+the\s+differences?",
        # Chinese
        rf"(?P<a>{_LIST_ZH}){_LINK_ZH}(?P<b>{_S_ZH})(?:之间|两者|二者)?(?:的|有|有着|存在)?"
        rf"(?:什么|哪些|啥|何|些)*(?:{_alt(COMPARE_NOUNS_ZH)})",
        rf"(?:{_alt(COMPARE_VERBS_ZH)})(?:一下)?(?P<a>{_LIST_ZH}){_LINK_ZH}(?P<b>{_S_ZH})"
        r"(?=的|在|之间|[，,?？。!！]|$)",
        rf"(?P<a>{_LIST_ZH}){_LINK_ZH}(?P<b>{_S_ZH})(?:{_alt(COMPARE_VERBS_ZH)})",
        rf"(?P<a>{_LIST_ZH}){_LINK_ZH}(?P<b>{_S_ZH})(?:之间|两者|二者|这两[个款种])?[，,]?\s*(?:{_WHICH_ZH})",
    )
)
_SPLIT_LIST = re.compile(r"\s*(?:,|、)\s*(?:and\s+|or\s+)?")
_WORD_EDGE = re.compile(r"^\W+|\W+$")


def _clean_en(name: str) -> str:
    """A side's name without the framing words it opens or ends with ("is the Premium plan")."""
    words = name.split()
    while words and _WORD_EDGE.sub("", words[0]).lower() in SIDE_FILLERS_EN:
        words.pop(0)
    while words and _WORD_EDGE.sub("", words[-1]).lower() in SIDE_FILLERS_EN:
        words.pop()
    return " ".join(words)


def _clean_zh(name: str, first: bool, owner: str = "") -> str:
    """A Chinese side without its framing: the first side is what follows its last "的" ("你们的基础版"),
    a later one what comes before its first ("高级版的价格" compares the plans, not their prices),
    unless it opens with what the first side's "的" followed ("离职员工的考勤证明和离职员工的月度汇总")."""
    name = name.strip()
    for prefix in SIDE_PREFIXES_ZH:
        if name.startswith(prefix) and len(name) > len(prefix):
            name = name[len(prefix) :]
            break
    if "的" in name:
        if first:
            name = name.rsplit("的", 1)[1]
        elif owner and name.startswith(owner + "的"):
            name = name[len(owner) + 1 :]
        else:
            name = name.split("的", 1)[0]
    for suffix in SIDE_SUFFIXES_ZH:
        if name.endswith(suffix) and len(name) > len(suffix):
            name = name[: -len(suffix)]
            break
    return _clean_en(name)


def _side_names(match: re.Match[str]) -> list[str]:
    cjk = bool(re.search(r"[\u3400-\u9fff]", match.group(0)))
    firsts = [n for n in _SPLIT_LIST.split(match.group("a")) if n.strip()]
    names = [*firsts, match.group("b")]
    if cjk:
        head = firsts[0].strip()
        owner = head.rsplit("的", 1)[0] if "的" in head else ""
        for prefix in SIDE_PREFIXES_ZH:
            owner = owner.removeprefix(prefix)
        return [_clean_zh(n, i < len(firsts), owner) for i, n in enumerate(names)]
    return [_clean_en(n) for n in names]


def comparison_sides(text: str) -> tuple[Side, ...]:
    """The sides a comparison question names, in order; empty when the question compares nothing, or
    compares one thing with its complement ("专业版和非专业版").

    The first pattern that finds two or more sides, each with a word of its own, decides. A side's
    terms are its index terms less those every side has (the shared "plan" of "the Standard and the
    Premium plan" tells nothing apart).
    """
    for pattern in _PATTERNS:
        match = pattern.search(text)
        if match is None:
            continue
        names = list(dict.fromkeys(n for n in _side_names(match) if n))
        if len(names) < 2:
            continue
        if any(n.lower().startswith(COMPLEMENT_PREFIXES) for n in names):
            return ()  # one thing and its complement: the evidence about the one is the comparison
        tokens = [tuple(dict.fromkeys(index_tokens(n))) for n in names]
        shared = set.intersection(*(set(t) for t in tokens))
        head = tuple(t for t in tokens[-1] if t in shared)
        sides = [
            Side(n, tuple(t for t in ts if t not in shared), head)
            for n, ts in zip(names, tokens, strict=True)
        ]
        if all(s.terms for s in sides) and len({s.terms for s in sides}) == len(sides):
            return tuple(sides)
    return ()
