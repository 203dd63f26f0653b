"""What a turn of a conversation says by itself: whether it points back at an earlier turn (a cue),
and what it is about (its subject phrase). ``policies.question.followup`` resolves a follow-up from these.

Cues, in the order they are looked for:

- **ellipsis**: "那企业版呢？", "X200呢", "what about the Premium plan?", "and for the X300?" name a
  new thing (or a new attribute) and leave the rest of the question to the earlier turn;
- **pronoun**: 它/其/该/此/这个/这款/该产品, it/its/this/that/they/them/the same one stand for the
  earlier turn's subject ("is it possible to ...", "this year", "应该", "其他" do not);
- **generic**: a subject too generic to stand alone ("部门的负责人是谁", "does the app sync?");
- **condition**: "what if I'm not a citizen?", "如果已经退休了呢" asks a case of the earlier subject;
- **statement**: a turn that tells rather than asks ("we are moving abroad next month"), read as
  going on about the same subject.

A turn with none of these names its own subject and is left alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import pairwise
from typing import Literal

from evidence_loop.policies.lexicon import (
    DETERMINERS_EN,
    DUMMY_IT_EN,
    FRAMING_ZH,
    GENERIC_SUBJECTS_EN,
    GENERIC_SUBJECTS_ZH,
    NOT_REFER_AFTER_EN,
    NOT_REFER_ZH,
    NOT_SUBJECT_EN,
    PHRASE_BREAKS_EN,
    PREDICATE_ZH,
    QUESTION_WORDS_EN,
    REFER_EN,
    REFER_PLURAL_EN,
    REFER_PLURAL_ZH,
    REFER_THAT_BEFORE_EN,
    REFER_ZH,
    SCOPE_PREPOSITIONS_ZH,
    STATEMENT_OPENINGS_EN,
    STATEMENT_OPENINGS_ZH,
    ZERO_SUBJECT_ZH,
)
from evidence_loop.tools.tokenize import CJK_CHARS, normalize, words

CueKind = Literal["ellipsis", "pronoun", "zero", "generic", "condition", "statement"]


@dataclass(frozen=True, slots=True)
class Cue:
    """How a turn points back: its kind, the span of the words that do it, and for an ellipsis the
    new thing it names (``named``); ``plural`` when it stands for several things ("它们", "both")."""

    kind: CueKind
    start: int
    end: int
    named: str = ""
    plural: bool = False


def has_cjk(text: str) -> bool:
    return re.search(f"[{CJK_CHARS}]", text) is not None


def _alt(items: tuple[str, ...] | frozenset[str]) -> str:
    return "|".join(re.escape(w) for w in sorted(items, key=len, reverse=True))


_FRAMING_ZH_RE = re.compile(rf"^(?:(?:{_alt(FRAMING_ZH)})[，,\s]*)+")
_REFER_ZH_RE = re.compile(_alt(REFER_ZH))
_NOT_REFER_ZH_RE = re.compile(_alt(NOT_REFER_ZH))
_GENERIC_ZH_RE = re.compile(_alt(GENERIC_SUBJECTS_ZH))
_ELLIPSIS_ZH_RE = re.compile(
    r"^(?:那么?|还有|另外|那请问)?\s*(?P<x>[^，,。？?]{1,16}?)(?:的话)?\s*呢\s*[？?。!！]*\s*$"
)
_ELLIPSIS_EN = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        r"^\s*(?:and\s+|so\s+|ok(?:ay)?,?\s+)?(?:what|how)\s+about\s+(?P<x>.+?)\s*[?.!]*\s*$",
        r"^\s*and\s+(?:for|with|in|on|at)\s+(?P<x>.+?)\s*[?.!]*\s*$",
        r"^\s*(?:same|ditto)\s+(?:for|with)\s+(?P<x>.+?)\s*[?.!]*\s*$",
        r"^\s*and\s+(?P<x>(?:the\s+)?[\w\-]+(?:\s+[\w\-]+){0,3})\s*\?\s*$",
    )
)
_WORD_EN_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9'\-]*(?:\.[0-9]+)?")
_DUMMY_IT_RE = re.compile("|".join(DUMMY_IT_EN), re.IGNORECASE)
_REFER_EN_RE = re.compile(rf"\b(?:{_alt(tuple(REFER_EN))})\b", re.IGNORECASE)


def cue_of(text: str, places: bool = True) -> Cue | None:
    """How the turn points back at an earlier one; None for a turn that stands alone. ``places``: "在香港呢"
    is an ellipsis too (``Policy.followup_kinds``; off for runs recorded before it)."""
    zh = has_cjk(text)
    return (
        _ellipsis(text, zh, places)
        or (_pronoun_zh(text) if zh else _pronoun_en(text))
        or (_generic_zh(text) if zh else _generic_en(text))
        or (_zero_zh(text) if zh else None)
        or _condition(text)
        or _statement(text, zh)
    )


def _ellipsis(text: str, zh: bool, places: bool = True) -> Cue | None:
    """ "那X呢" / "what about X": X names the new thing; a full question ending in 呢 is not one."""
    patterns = (_ELLIPSIS_ZH_RE,) if zh else _ELLIPSIS_EN
    for pattern in patterns:
        match = pattern.match(text)
        if match is None:
            continue
        named = match.group("x").strip()
        asks = _without_preposition(named) if places else named
        if zh and any(w in PREDICATE_ZH and w != "的" for w in words(asks)):
            return None  # "年假有多少天呢" asks a whole question (not "在香港呢": a place)
        if not zh and any(w.lower() in PHRASE_BREAKS_EN - DETERMINERS_EN for w in named.split()[1:]):
            return None  # "and how do I cancel?" asks a whole question
        if _refers(named, zh):
            return None  # "那它的价格呢": the pronoun is the cue
        return Cue("ellipsis", match.start("x"), match.end("x"), named)
    return None


def _without_preposition(named: str) -> str:
    """ "香港" of "在香港": the preposition that makes X a place or a scope is no predicate."""
    for word in SCOPE_PREPOSITIONS_ZH:
        if named.startswith(word) and len(named) > len(word):
            return named[len(word) :]
    return named


def _refers(text: str, zh: bool) -> bool:
    return (_pronoun_zh(text) if zh else _pronoun_en(text)) is not None


def _pronoun_zh(text: str) -> Cue | None:
    masked = _NOT_REFER_ZH_RE.sub(lambda m: "\0" * len(m.group()), text)
    match = _REFER_ZH_RE.search(masked)
    if match is None:
        return None
    end = match.end()
    generic = _GENERIC_ZH_RE.match(text, end)  # "这个套餐": the generic noun goes with the pointer
    end = generic.end() if generic is not None else end
    return Cue("pronoun", match.start(), end, plural=match.group() in REFER_PLURAL_ZH)


def _pronoun_en(text: str) -> Cue | None:
    masked = _DUMMY_IT_RE.sub(lambda m: "\0" * len(m.group()), text)
    for match in _REFER_EN_RE.finditer(masked):
        word = match.group().lower()
        after = _WORD_EN_RE.match(masked, _skip_space(masked, match.end()))
        following = after.group().lower() if after else ""
        if word in {"this", "that", "these", "those"} and following in NOT_REFER_AFTER_EN:
            continue
        before = masked[: match.start()].split()
        previous = before[-1].lower() if before else ""
        if (
            word == "that"
            and following
            and following not in REFER_THAT_BEFORE_EN
            and previous not in _THAT_AFTER
        ):
            continue  # a conjunction: "is it true that ..."
        end = after.end() if after and following in GENERIC_SUBJECTS_EN else match.end()
        return Cue("pronoun", match.start(), end, plural=word in REFER_PLURAL_EN)
    return None


_THAT_AFTER = frozenset("is was does do did about for with on of in to".split())


def _skip_space(text: str, at: int) -> int:
    while at < len(text) and text[at] == " ":
        at += 1
    return at


def _generic_zh(text: str) -> Cue | None:
    """A generic noun opening the question ("部门的负责人是谁", "套餐多少钱")."""
    framing = _FRAMING_ZH_RE.match(text)
    at = framing.end() if framing else 0
    match = _GENERIC_ZH_RE.match(text, at)
    return Cue("generic", match.start(), match.end()) if match else None


def _generic_en(text: str) -> Cue | None:
    """ "the app", "your device": a determiner right before a generic noun, no name beside it."""
    found = list(_WORD_EN_RE.finditer(text))
    for before, word in pairwise(found):
        if before.group().lower() in DETERMINERS_EN and word.group().lower() in GENERIC_SUBJECTS_EN:
            if word.group()[0].isupper() or any(c.isdigit() for c in word.group()):
                continue
            return Cue("generic", before.start(), word.end())
    return None


_CONDITION_RE = re.compile(
    r"^\s*(?:(?:and|but|so)\s+)?(?:what|how)\s+(?:if|about\s+if)\b|^\s*(?:and|but)\s+if\b"
    r"|^\s*(?:那|那么)?(?:如果|要是|假如|万一)",
    re.IGNORECASE,
)


def _condition(text: str) -> Cue | None:
    """ "What if I'm not a citizen?", "如果我已经退休了呢": a case of what was just asked about."""
    return Cue("condition", len(text), len(text)) if _CONDITION_RE.match(text) else None


def _zero_zh(text: str) -> Cue | None:
    """A Chinese question without a subject, opening with its predicate ("可以顺延到明年吗")."""
    framing = _FRAMING_ZH_RE.match(text)
    at = framing.end() if framing else 0
    return Cue("zero", at, at) if text.startswith(ZERO_SUBJECT_ZH, at) else None


_ASKING_EN_RE = re.compile(rf"\b(?:{_alt(QUESTION_WORDS_EN)})\b", re.IGNORECASE)


def _statement(text: str, zh: bool) -> Cue | None:
    """A turn that tells rather than asks: no question mark, no asking word, opening with I/we/我."""
    stripped = text.strip()
    if not stripped or stripped.endswith(("?", "？")) or "吗" in stripped or "呢" in stripped:
        return None
    if zh:
        opens = stripped.startswith(STATEMENT_OPENINGS_ZH)
        asks = any(
            w in PREDICATE_ZH and w in {"怎么", "如何", "多少", "什么", "哪", "几"} for w in words(stripped)
        )
    else:
        opens = normalize(stripped).startswith(STATEMENT_OPENINGS_EN)
        asks = _ASKING_EN_RE.search(stripped.split(maxsplit=1)[-1]) is not None
    return Cue("statement", len(text), len(text)) if opens and not asks else None


# --- what a turn is about --------------------------------------------------------------------------


def subject_phrase(text: str) -> str:
    """The phrase a turn is about, as written ("X200路由器", "the Basic plan" -> "Basic plan"); empty
    when it names nothing specific (a generic noun, a pronoun, only asking words)."""
    phrase = _subject_zh(text) if has_cjk(text) else _subject_en(text)
    return "" if is_generic(phrase) else phrase


def is_generic(phrase: str) -> bool:
    """True for an empty phrase or one of generic nouns and pointers only ("部门", "the app")."""
    rest = _REFER_ZH_RE.sub("", _GENERIC_ZH_RE.sub("", phrase))
    left = [w for w in _WORD_EN_RE.findall(rest) if w.lower() not in GENERIC_SUBJECTS_EN | DETERMINERS_EN]
    return not left and not re.search(f"[{CJK_CHARS}]", rest)


def _subject_zh(text: str) -> str:
    """The words before the first predicate ("X200路由器|支持哪些频段"); for a question that opens
    with one ("如何|申请年假"), the words after it up to the next."""
    framing = _FRAMING_ZH_RE.match(text)
    body = text[framing.end() :] if framing else text
    flat = normalize(body)
    source = body if len(flat) == len(body) else flat
    spans: list[tuple[int, int, bool]] = []  # (start, end, ends a subject)
    at = 0
    for word in words(body):
        start = flat.find(word, at)
        if start < 0:
            continue
        at = start + len(word)
        spans.append((start, at, word in PREDICATE_ZH or bool(_REFER_ZH_RE.fullmatch(word))))
    runs: list[tuple[int, int]] = []
    for start, end, breaks in spans:
        if breaks:
            runs.append((-1, -1))
        elif runs and runs[-1][0] >= 0:
            runs[-1] = (runs[-1][0], end)
        else:
            runs.append((start, end))
    found = [source[s:e].strip() for s, e in runs if s >= 0]
    return found[0] if found else ""


_ENDS_PHRASE_EN = PHRASE_BREAKS_EN | QUESTION_WORDS_EN | NOT_SUBJECT_EN | DETERMINERS_EN


def _subject_en(text: str) -> str:
    """The noun phrase that names a thing: one with a name or a model number in it first ("the
    Premium plan", "the X200 router"), else the first one after a determiner, else the longest run of
    words that are neither function words nor verbs."""
    found = list(_WORD_EN_RE.finditer(text))
    phrases: list[tuple[int, str]] = []  # (rank, phrase)
    run: list[re.Match[str]] = []
    determined = False
    for match in [*found, None]:
        word = match.group().lower() if match else ""
        if match is None or word in _ENDS_PHRASE_EN or (run and _participle(word)):
            if run:
                named = any((m.group()[0].isupper() and m.start() > 0) or _has_digit(m.group()) for m in run)
                rank = 0 if named else 1 if determined else 2
                phrases.append((rank, text[run[0].start() : run[-1].end()]))
            run, determined = [], word in DETERMINERS_EN
            continue
        run.append(match)
    if not phrases:
        return ""
    best = min(rank for rank, _ in phrases)
    ranked = [p for rank, p in phrases if rank == best]
    return ranked[0] if best < 2 else max(ranked, key=len)


def _participle(word: str) -> bool:
    """ "launched", "released": a verb after the noun ends its phrase ("the X200 router | launched")."""
    return len(word) > 4 and word.endswith("ed") and word.isalpha()


def _has_digit(word: str) -> bool:
    return any(c.isdigit() for c in word) and any(c.isalpha() for c in word)
