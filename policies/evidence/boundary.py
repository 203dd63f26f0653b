"""Boundary signals: text-level predicates on one unit, for the units at a window's edges.

Each answers one question about a unit's text, in Chinese and English:

- :func:`is_cut_sentence`: does the unit stop mid-sentence (so the rest is to the right)?
- :func:`scope_condition`: does it state a scope or condition that governs what follows?
- :func:`opens_dangling`: does it open with a word that needs what came before ("该", "However")?
- :func:`exception_clause`: does it carve out an exception ("除外", "unless")?

Where a unit sends the reader (a cross-reference) is ``policies.evidence.references``.

They are tuned for precision on help-centre text: a false positive makes the loop slide further or
refuse a good answer, so ambiguous openings ("应该", "这边建议您", "See all", "仅供参考") are negatives.
Leading list markers ("- ", "1. ", "（一）") and greetings ("您好，") are ignored. Each is cached:
a question checks the same units many times while windows slide.
"""

from __future__ import annotations

import re
from functools import lru_cache

from evidence_loop.policies.lexicon import CONNECTIVES_EN, CONNECTIVES_ZH, DANGLING_ZH, NOT_DANGLING_ZH
from evidence_loop.tools.tokenize import is_cjk, normalize, words
from evidence_loop.tools.types import UnitKind

END_PUNCT = "。！？；.!?;:：…"
CLOSERS = "”’\"'）)]」』】》〉}"
CONTINUATION_PUNCT = "，,、（(“‘《「『【["
NO_END_PUNCT_KINDS: frozenset[str] = frozenset({"heading", "table_header", "table_row", "code"})
HEADING_MAX_WORDS = 8
HEADING_MAX_CHARS = 40
SCOPE_MAX_CHARS = 80

_MARKER_RE = re.compile(
    r"^\s*(?:#{1,6}\s+|[-*+•·]\s+|[0-9]+[.)、]\s*|[（(][0-9一二三四五六七八九十]+[)）]\s*|"
    r"[一二三四五六七八九十]+、\s*|[①-⑳]\s*)?(?:(?:您好|你好|hi|hello)[，,！!。\s]+)?",
    re.IGNORECASE,
)


def _head(text: str) -> str:
    """The text without a leading list marker or greeting."""
    match = _MARKER_RE.match(text)
    return text[match.end() if match else 0 :].strip()


def _tidy(phrase: str, limit: int = SCOPE_MAX_CHARS) -> str:
    return " ".join(normalize(phrase).split())[:limit].strip()


def heading_like(text: str) -> bool:
    """Short, no sentence punctuation inside or at the end: a title, not a sentence ("退款规则")."""
    head = _head(text)
    if not head or len(head) > HEADING_MAX_CHARS or re.search(r"[，,。；;！？!?]", head):
        return False
    return head[-1] not in END_PUNCT and len(words(head)) <= HEADING_MAX_WORDS


def _ends_with_continuation(tail: str) -> bool:
    if tail[-1] in CONTINUATION_PUNCT:
        return True
    if is_cjk(tail[-1]):
        return words(tail[-12:])[-1:][0] in CONNECTIVES_ZH
    last = tail.split()[-1]
    return last.lower() in CONNECTIVES_EN and not last.isupper()  # "HDMI IN" is a label, not "in"


@lru_cache(maxsize=100_000)
def is_cut_sentence(text: str, kind: UnitKind = "sentence") -> bool:
    """True when the unit stops mid-sentence and its rest must follow.

    Headings, table rows and code need no end punctuation and are never cut; a list item is cut
    only when it ends with a comma or a connective ("，", "以及", "and"); a sentence is cut when it
    ends that way, or lacks end punctuation (closing quotes and brackets after it are allowed)
    and does not read as a title.
    """
    if kind in NO_END_PUNCT_KINDS:
        return False
    tail = text.rstrip().rstrip(CLOSERS).rstrip()
    if not tail:
        return False
    if _ends_with_continuation(tail):
        return True
    if kind != "sentence" or tail[-1] in END_PUNCT:
        return False
    return not heading_like(text)


_CLAUSE_END = r"[^，。；：,;:!?！？\n]"
# Statements of scope: they govern what follows wherever they stand.
_SCOPE_AT_START: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        rf"^本(?:节|条|章|款|项|规则|规定|政策|办法|协议|条款|活动|服务|文档|文|说明|功能)?(?:仅|只)?适用于{_CLAUSE_END}{{1,40}}",
        rf"^(?:以下|下列|如下)(?:情况|情形|条件|场景|人员|用户|商户|客户|类型|范围|商品|订单|账户|账号|设备|规则){_CLAUSE_END}{{0,30}}",
        r"^this\s+(?:section|policy|article|clause|chapter|page|rule|offer|guide|document|warranty|feature|plan|"
        r"program|agreement)\s+(?:only\s+)?applies\s+(?:only\s+)?to\s+[^.;:,\n]{1,80}",
        r"^the\s+following\b[^.;:\n]{0,60}",
        r"^for\s+(?!more\b|example\b|instance\b|details\b|information\b|further\b)[^,;.\n]{0,40}?\b"
        r"(?:customers|users|members|students|accounts|devices|models|orders|plans|subscribers|businesses|"
        r"merchants|employees)(?=,)",
        r"^(?:only\s+(?:for|to|in|available)|available\s+only)\b[^.;:,\n]{1,60}",
    )
)
# Conditions: "如果…，" governs its own sentence; it governs what follows only when the sentence
# points forward ("如果您无法打卡，可以根据以下几点检查：") or is nothing but the condition.
_CONDITION_AT_START: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        r"^(?:如果|假如|倘若|若(?!干))[^，。；：！？,;:!?\n]{1,40}?(?=[，,：:])",
        r"^当(?!前|天|日|月|年|地|然|初|即|场|面|中|时)[^，。；,;\n]{1,40}?时",
        r"^在(?!线|职|读|家|于|此|内)[^，。；！？,;!?\n]{1,30}?(?:之前|之后|以前|以后|期间|前|后|时)(?=[，,：:])",
        r"^(?:对于|针对)[^，。；：！？,;:!?\n]{1,30}?(?=[，,：:])",
        r"^(?:if|when)\s+[^,;:.!?\n]{1,80}?(?=[,:])",
    )
)
_FORWARD_RE = re.compile(
    r"[：:]$|以下|如下|下列|下述|下面|\b(?:following|below|these\s+steps|as\s+follows)\b", re.IGNORECASE
)
_SCOPE_ANYWHERE = re.compile(
    r"仅限|仅适用于|只适用于|只限于|仅针对|仅对|\b(?:applies|apply|valid|is\s+available|are\s+available)\s+only\s+"
    r"(?:to|for|in)\b|\bonly\s+applies\s+to\b",
    re.IGNORECASE,
)


@lru_cache(maxsize=100_000)
def scope_condition(text: str) -> str | None:
    """The scope or condition the unit states for what follows, normalised; None if it states none.

    Statements of scope at the start: "本节适用于…", "以下情况…", "This section applies to…",
    "The following…", "For … customers,", "Only for…"; anywhere: "仅限…", "仅适用于…", "applies only
    to…" (the clause holding it is returned). Conditions at the start ("如果/若…，", "当…时",
    "在…前/后，", "对于…，", "If/When …,") count only when the sentence points forward (ends with a
    colon, or says 以下/如下/following/below) or is nothing but the condition.
    """
    head = _head(text)
    for pattern in _SCOPE_AT_START:
        match = pattern.match(head)
        if match:
            return _tidy(match.group(0))
    for pattern in _CONDITION_AT_START:
        match = pattern.match(head)
        if match and (
            not head[match.end() :].strip(" ，,。.；;：:") or _FORWARD_RE.search(head.rstrip("。. "))
        ):
            return _tidy(match.group(0))
    match = _SCOPE_ANYWHERE.search(head)
    if match is None:
        return None
    start = max(head.rfind(p, 0, match.start()) for p in "，。；,;.\n") + 1
    end = re.compile(r"[，。；,;\n]|\.(?!\d)").search(head, match.end())
    return _tidy(head[start : end.start() if end else len(head)])


_DANGLING_EN_RE = re.compile(
    r"^(in this case|in that case|in addition|as a result|however|otherwise|therefore|furthermore|moreover|"
    r"additionally|also|these|those|this|that|it|its|they|their|them|such|thus|hence|instead|besides)\b"
    r"(?!\s+(?:section|chapter|page|guide|manual|document|article)\b)",
    re.IGNORECASE,
)


@lru_cache(maxsize=100_000)
def opens_dangling(text: str) -> str | None:
    """The word the unit opens with that needs what came before ("该", "此外", "However"), normalised.

    Only the very start counts ("应该" is not "该"), English only as a whole word ("It" but not
    "Item"); "This section …" points at its section, not at the sentence before.
    """
    head = _head(text)
    if head.startswith(NOT_DANGLING_ZH):
        return None
    for word in DANGLING_ZH:
        if head.startswith(word):
            return word
    match = _DANGLING_EN_RE.match(head)
    return " ".join(match.group(1).lower().split()) if match else None


_NOT_AFTER_VERB = "(?<![删排清去解移免开摘剔扣])"  # "删除", "扣除" ... are verbs, not "除"
EXCEPTION_MARKERS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (marker, re.compile(pattern, re.IGNORECASE))
    for marker, pattern in (
        ("除外", rf"{_NOT_AFTER_VERB}除外"),
        ("例外", r"例外"),
        ("除…以外", rf"{_NOT_AFTER_VERB}除(?!了|非|夕|此)[^，。；,;\n]{{1,30}}?(?:以外|之外)"),
        ("除…外", rf"{_NOT_AFTER_VERB}除(?!了|非|夕|此)[^，。；,;\n]{{1,30}}?外[，,]"),
        # "除了A，其他都…" excepts A; "除了A，还/也…" adds to it
        (
            "除了",
            rf"{_NOT_AFTER_VERB}除了[^。；;\n]{{1,40}}?[，,](?![^。；;\n]*?[还也])[^。；;\n]{{0,30}}?(?:都|均|一律|其余|其他)",
        ),
        ("除非", r"除非"),
        ("不适用", r"不适用"),
        ("不包括", r"不包括"),
        ("不包含", r"不包含"),
        ("不含", r"不含(?!有)"),
        ("不在…范围", r"不(?:在|属于)[^，。；,;\n]{0,20}?范围"),
        ("except", r"\bexcept\b"),
        ("unless", r"\bunless\b"),
        ("excluding", r"\bexcluding\b"),
        ("excluded", r"\bexclud(?:ed|es)\b"),
        ("does not apply", r"\b(?:does|do)\s+not\s+apply\b|\bdoesn['’]t\s+apply\b|\bnot\s+applicable\b"),
        ("not covered", r"\bnot\s+covered\b"),
        ("with the exception of", r"\bwith\s+the\s+exception\s+of\b"),
    )
)


@lru_cache(maxsize=100_000)
def exception_clause(text: str) -> str | None:
    """The first exception marker in the unit ("除外", "除…以外", "不适用", "unless", "not covered")."""
    hits = [(m.start(), marker) for marker, p in EXCEPTION_MARKERS if (m := p.search(text))]
    return min(hits)[1] if hits else None
