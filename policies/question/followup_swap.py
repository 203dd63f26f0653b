"""What "what about X" / "and the X one?" / "X 的呢" / "那 X 呢" asks: the earlier question again, X in
the place of the thing of its kind (a plan for a plan, a model for a model, a place for a place), the
attribute asked kept. ``policies.question.followup`` calls it for an ellipsis.

X is read first (``read_named``): determiners, a trailing "one" ("the Starter one") and a trailing 的
("入门版的") go, and so does a preposition before it ("how about in Hong Kong?", "在香港呢"), which
makes X a place or a scope. X is *said as a thing* when one of these marks it, or it is a name (a
capital, a model number, a known place); otherwise it may be an attribute ("what about the warranty?",
"那售价呢"), which the caller asks of the earlier subject instead.

The thing of X's kind in the earlier question (``target``), in this order: a model number for a model
number; a known place for a place (or, after a preposition, the capitalised words after the same
kind of preposition); a phrase with X's head noun ("Premium plan" for "Basic plan", "企业版" for
"基础版"); the earlier phrase's capitalised modifier for a bare name ("Starter" in "Enterprise plan",
"Enterprise 套餐"); and for a thing said as one, the earlier subject phrase as a whole. A place with
nothing of its kind to replace is added to the question as its scope ("... take in Hong Kong?").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from evidence_loop.policies.lexicon import (
    DETERMINERS_EN,
    ONE_WORDS_EN,
    SCOPE_PREPOSITIONS_EN,
    SCOPE_PREPOSITIONS_ZH,
)
from evidence_loop.policies.question.places import (
    PLACE_EN_RE,
    PLACE_ZH_RE,
    alternation,
    is_place,
)
from evidence_loop.policies.question.slots import extract_slots, identifiers, model_spans
from evidence_loop.tools.tokenize import CJK_CHARS, normalize, words

_CJK_RE = re.compile(f"[{CJK_CHARS}]")
_THE_PLACE_RE = re.compile(r"[A-Z]{2,4}\b|United\b|Netherlands\b|Philippines\b|Middle East\b")
_LATIN_NAME_RE = re.compile(r"\b[A-Z][\w&+-]*(?:\s+[A-Z][\w&+-]*)*")
_AFTER_PREPOSITION_EN_RE = re.compile(
    rf"\b(?:{alternation(SCOPE_PREPOSITIONS_EN)})\s+(?:the\s+)?(?P<x>[A-Z][\w-]*(?:\s+[A-Z][\w-]*)*)"
)


@dataclass(frozen=True, slots=True)
class Named:
    """What an ellipsis names: the thing itself, the preposition it came with, and whether it is said as
    a thing (``entity``) rather than maybe an attribute."""

    text: str
    preposition: str = ""
    entity: bool = False

    @property
    def place(self) -> bool:
        return is_place(self.text)


@dataclass(frozen=True, slots=True)
class Swap:
    """The earlier question with X in its place (``text``), and what of it was kept (``kept``)."""

    text: str
    kept: str


def _zh(text: str) -> bool:
    return _CJK_RE.search(text) is not None


def read_named(named: str, before: str = "") -> Named:
    """X as the ellipsis names it (``before``: the asked text before X, for "and in Canada?")."""
    text, marked, preposition = named.strip(), False, ""
    if _zh(text):
        for word in SCOPE_PREPOSITIONS_ZH:
            if text.startswith(word) and len(text) > len(word):
                text, preposition = text[len(word) :].strip(), word
                break
        if text.endswith("的") and len(text) > 1:
            text, marked = text[:-1].strip(), True
    else:
        words = text.split()
        last_before = before.split()[-1].lower() if before.split() else ""
        if words and words[0].lower() in SCOPE_PREPOSITIONS_EN and len(words) > 1:
            preposition, words = words[0].lower(), words[1:]
        elif last_before in SCOPE_PREPOSITIONS_EN:
            preposition = last_before
        while words and words[0].lower() in DETERMINERS_EN:
            words = words[1:]
        if len(words) > 1 and words[-1].lower() in ONE_WORDS_EN:
            words, marked = words[:-1], True
        text = " ".join(words)
    named_thing = bool(identifiers(extract_slots(text))) or is_place(text) or _has_name(text)
    return Named(text, preposition, marked or bool(preposition) or named_thing)


def _has_name(text: str) -> bool:
    """A capitalised Latin word: "Starter", "Hong Kong" (a Chinese name is not told by its letters)."""
    return any(word[:1].isupper() for word in text.split())


def swap(source: str, phrase: str, ids: tuple[str, ...], named: Named) -> Swap | None:
    """The earlier question ``source`` (its subject ``phrase``, its model numbers ``ids``) asked of X
    instead; None when X has nothing of its kind there (and is no place to add as a scope)."""
    target = _target(source, phrase, ids, named)
    if target is not None:
        at = _find(source, target[0])
        if at >= 0:
            before = source[:at]
            if named.place and before.endswith("the ") and not _THE_PLACE_RE.match(target[1]):
                before = before[: -len("the ")]  # "to the EU" -> "to Hong Kong"
            text = before + target[1] + source[at + len(target[0]) :]
            return Swap(text, " ".join((source[:at] + source[at + len(target[0]) :]).split()))
    if named.place or (named.preposition and named.entity):
        return Swap(_with_scope(source, named), " ".join(source.split()))
    return None


def _target(source: str, phrase: str, ids: tuple[str, ...], named: Named) -> tuple[str, str] | None:
    """(the words of the earlier question X takes the place of, X as it stands there)."""
    x = named.text
    if ids and identifiers(extract_slots(x)):
        return _model_swap(source, x) or (ids[0], x)
    if named.place or named.preposition:
        place = _place_in(source, bool(named.preposition) and not named.place)
        if place:
            return place, x
    if not phrase:
        return None
    found = _same_head(x, phrase)
    if found is not None:
        return found
    scoped = named.place or named.preposition  # a place takes no thing's place but a place's
    return (phrase, x) if named.entity and not scoped and not is_place(phrase) else None


def _place_in(source: str, by_preposition: bool) -> str:
    """The place the earlier question names: a known place, else (``by_preposition``) the capitalised
    words after "in"/"for"/"to"."""
    found = PLACE_EN_RE.search(source) or PLACE_ZH_RE.search(source)
    if found is not None:
        return found.group()
    if by_preposition:
        after = _AFTER_PREPOSITION_EN_RE.search(source)
        if after is not None:
            return after.group("x")
    return ""


def _same_head(x: str, old: str) -> tuple[str, str] | None:
    """X and the earlier phrase name things of one kind: the same head ("企业版"/"基础版", "Premium
    plan"/"Basic plan"), or X a name for the phrase's capitalised modifier ("Starter" for "Enterprise
    plan", "Enterprise 套餐")."""
    if _zh(x) and _zh(old):
        return _head_word(x, old)
    old_words, new_words = old.split(), x.split()
    if new_words and old_words and new_words[-1].lower() == old_words[-1].lower():
        return old, x
    modifier = _LATIN_NAME_RE.search(old)
    if modifier is None or not _has_name(x) or _zh(x):
        return None
    if modifier.group() != old:
        return modifier.group(), x
    name = modifier.group().split()
    # a product's name of several capitalised words: its last one is the edition ("Halvio Cloud Plus")
    return (name[-1], x) if len(name) > 1 and len(x.split()) == 1 else None


def _head_word(x: str, old: str) -> tuple[str, str] | None:
    """The word of the earlier phrase with X's head ("商业版" of "企业工作台商业版" for "入门版", "基础版"
    of "基础版会员" for "专业版")."""
    if len(x) < 2:
        return None
    for word in reversed(words(old)):
        if word.endswith(x[-1]) and len(word) > 1:
            return word, x
    at = old.rfind(x[-1])  # the segmenter cut the head off ("企业 版"): up to it
    return (old[: at + 1], x) if at >= 1 else None


def _model_swap(source: str, x: str) -> tuple[str, str] | None:
    """A model with its edition for a model ("C200 Pro" for "the regular C200": "C200")."""
    theirs, mine = model_spans(source), model_spans(x)
    if not theirs or not mine:
        return None
    return source[theirs[0][0] : theirs[0][1]], x[mine[0][0] : mine[0][1]]


def _with_scope(source: str, named: Named) -> str:
    """The earlier question asked of a place it did not name: "... take in Hong Kong?", "香港退款…"."""
    if _zh(source):
        return f"{named.preposition}{named.text}{source}"
    body = source.rstrip(" ?.!？")
    tail = source[len(body) :].strip() or "?"
    return f"{body} {named.preposition or 'in'} {named.text}{tail}"


def _find(text: str, phrase: str) -> int:
    """Where the phrase is in the text, case and width aside (-1: nowhere)."""
    flat = normalize(text)
    return flat.find(normalize(phrase)) if len(flat) == len(text) else -1
