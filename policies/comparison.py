"""Comparisons: the named sides of a question that compares things, and which evidence speaks for each.

"What is the difference between the Standard and the Premium plan", "标准会员和尊享会员有什么区别",
"compare A with B", "A vs B", "A 与 B 哪个更划算": an answer needs evidence for every side, and one
page about one side is half an answer. This module reads the sides off the question's text
(:func:`comparison_sides`) and says which window speaks for which side (:func:`covers`); selection
pins a window for a side the evidence lacks, the decision names a side nothing covers as an
``uncovered_slot``, and the wider recall searches for that side's name with the question's other words
(:func:`side_query`).

A window speaks for a side when its document's title or its section path names the side, or, when
those name no side, when one of its units names it: a Standard-plan page that says once "upgrade to
Premium" is no evidence about Premium; a page or a table about both speaks for both. A page whose
title names the kind of thing compared but none of the sides ("Premium plan" when the Standard and the
Family plan are compared) is about another one of that kind and speaks for none.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from evidence_loop.policies.coverage import covered_terms
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
from evidence_loop.tools.types import ParsedDocument
from evidence_loop.tools.windows import Window, units_of

if TYPE_CHECKING:
    from evidence_loop.policies.completeness import Checked
    from evidence_loop.policies.config import Policy
    from evidence_loop.policies.question import Question


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


# --- reading the sides ------------------------------------------------------------------------------

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


# --- which evidence speaks for which side -----------------------------------------------------------


def sides_to_cover(question: Question, policy: Policy) -> tuple[Side, ...]:
    """The sides the loop reads evidence for: the question's, none while ``compare_sides`` is off."""
    return question.sides if policy.compare_sides else ()


def names_side(side: Side, text: str) -> bool:
    """The text holds every term of the side (CJK terms as substrings, as coverage reads them)."""
    return _holds(side.terms, text)


def _holds(terms: Sequence[str], text: str) -> bool:
    return len(covered_terms(terms, (text,))) == len(terms)


def _labels(window: Window, doc: ParsedDocument) -> list[str]:
    sections = {u.section_id for u in units_of(window, doc)}
    return [doc.title, *(" ".join(doc.sections[s].path) for s in sorted(sections))]


def covers(side: Side, sides: Sequence[Side], window: Window, doc: ParsedDocument) -> bool:
    """Whether the window speaks for the side: its title or section path names it; or, when those
    name no side nor the kind compared, one of its units names it."""
    labels = _labels(window, doc)
    labelled = [s for s in sides if any(names_side(s, label) for label in labels)]
    if labelled:
        return side in labelled
    if side.head and any(_holds(side.head, label) for label in labels):
        return False  # a page about another one of the kind compared ("Premium plan" for Standard and Family)
    return any(names_side(side, u.text) for u in units_of(window, doc))


def sides_of(sides: Sequence[Side], item: Checked) -> tuple[Side, ...]:
    """The sides one window speaks for."""
    return tuple(s for s in sides if covers(s, sides, item.window, item.doc))


def uncovered_sides(sides: Sequence[Side], items: Sequence[Checked]) -> tuple[Side, ...]:
    """The sides no window of ``items`` speaks for."""
    covered = {s.name for item in items for s in sides_of(sides, item)}
    return tuple(s for s in sides if s.name not in covered)


def side_query(text: str, sides: Sequence[Side], missing: Collection[str]) -> str:
    """The question searched again for the ``missing`` sides: the names of the sides already found
    taken out, so that the question's other words and the missing side's name lead the recall."""
    for side in sides:
        if side.name not in missing:
            text = text.replace(side.name, " ")
    return " ".join(text.split())


def __getattr__(name: str) -> object:
    """Names renamed in 0.2, kept for one release with a DeprecationWarning."""
    if name == "compared":  # deprecated alias
        message = f"{__name__}.{name} is renamed sides_to_cover; the old name goes in the next release"
        warnings.warn(message, DeprecationWarning, stacklevel=2)
        return sides_to_cover
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
