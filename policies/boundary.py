"""Boundary signals: text-level predicates on one unit, for the units at a window's edges.

Each answers one question about a unit's text, in Chinese and English:

- :func:`is_cut_sentence`: does the unit stop mid-sentence (so the rest is to the right)?
- :func:`scope_condition`: does it state a scope or condition that governs what follows?
- :func:`opens_dangling`: does it open with a word that needs what came before ("该", "However")?
- :func:`exception_clause`: does it carve out an exception ("除外", "unless")?
- :func:`cross_reference`: does it send the reader to another rule, section or document, and which?

They are tuned for precision on help-centre text: a false positive makes the loop slide further or
refuse a good answer, so ambiguous openings ("应该", "这边建议您", "See all", "仅供参考") are negatives.
Leading list markers ("- ", "1. ", "（一）") and greetings ("您好，") are ignored.
"""

from __future__ import annotations

import re

from tools.tokenize import normalize, words
from tools.types import UnitKind

END_PUNCT = "。！？；.!?;:：…"
CLOSERS = "”’\"'）)]」』】》〉}"
CONTINUATION_PUNCT = "，,、（(“‘《「『【["
NO_END_PUNCT_KINDS: frozenset[str] = frozenset({"heading", "table_header", "table_row", "code"})
CONNECTIVES_ZH: frozenset[str] = frozenset(
    "以及 并且 而且 或者 但是 因为 由于 如果 包括 例如 比如 即 和 与 及 或 并 且 但 而 跟 还有".split()
)
CONNECTIVES_EN: frozenset[str] = frozenset(
    "and or but nor with of to the a an for from in on by that which including because if when while "
    "than as into via plus such e.g. i.e.".split()
)
HEADING_MAX_WORDS = 8
HEADING_MAX_CHARS = 40
SCOPE_MAX_CHARS = 80
REFERENCE_MAX_CHARS = 30

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
    if re.search(r"[\u4e00-\u9fff]$", tail):
        return words(tail[-12:])[-1:][0] in CONNECTIVES_ZH
    last = tail.split()[-1]
    return last.lower() in CONNECTIVES_EN and not last.isupper()  # "HDMI IN" is a label, not "in"


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


DANGLING_ZH: tuple[str, ...] = tuple(
    sorted(
        "除此之外 与此同时 此外 此时 此处 此类 此 该 上述 以上 但是 但 不过 然而 其中 另外 "
        "同时 因此 所以 因而 否则 反之 对此 它们 它 这些 这个 这种 这样 这里 这 那么 而且 并且".split(),
        key=len,
        reverse=True,
    )
)
# Openings that start with a dangling word but are not: "这边建议您" (= "we suggest"), "该如何".
NOT_DANGLING_ZH: tuple[str, ...] = ("这边", "该如何", "该怎", "该不该", "但凡", "以上海")
_DANGLING_EN_RE = re.compile(
    r"^(in this case|in that case|in addition|as a result|however|otherwise|therefore|furthermore|moreover|"
    r"additionally|also|these|those|this|that|it|its|they|their|them|such|thus|hence|instead|besides)\b"
    r"(?!\s+(?:section|chapter|page|guide|manual|document|article)\b)",
    re.IGNORECASE,
)


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


def exception_clause(text: str) -> str | None:
    """The first exception marker in the unit ("除外", "除…以外", "不适用", "unless", "not covered")."""
    hits = [(m.start(), marker) for marker, p in EXCEPTION_MARKERS if (m := p.search(text))]
    return min(hits)[1] if hits else None


_REF_VERBS_ZH = "按照?|依照|依据|根据|参照|参见|参阅|参考|详见|见|遵守|遵循|适用|阅读|查阅"
_RULE_NOUNS_ZH = "规则|规定|办法|政策|制度|条款|协议|细则|标准|须知"
# 《》 marks a document title; other quotes mark UI labels too ("按照“设置”操作"), so they count
# only around a name that ends like a rule or a document.
_REF_QUOTED_ZH = re.compile(
    rf"(?:(?:{_REF_VERBS_ZH})[^。；;，,\n《“「『]{{0,8}}?|以)(?:《(?P<a>[^》\n]{{1,40}})》|"
    rf"[“「『](?P<b>[^”」』\n]{{0,38}}(?:{_RULE_NOUNS_ZH}|文档|指南|手册|说明|公告))[”」』])"
)
_REF_CLAUSE_ZH = re.compile(
    r"(?:见|参见|参照|详见|依照|按照|根据|依据|适用)(?:本(?:规则|协议|条款|办法|制度|政策|合同|细则))?"
    r"(?P<name>第[0-9零〇一二两三四五六七八九十百]+[条章节款项])"
)
_REF_RULE_ZH = re.compile(
    rf"(?:(?:按照?|依照|依据|根据|参照)(?P<a>[^，。；：,;:\n《》“”]{{2,20}}?(?:{_RULE_NOUNS_ZH}))(?:处理|执行|办理|为准)|"
    rf"适用(?P<b>[^，。；：,;:\n《》“”]{{2,20}}?(?:{_RULE_NOUNS_ZH})))"
)
_REF_MARKERS_ZH = (
    "详见|请参见|可参见|参见|请参阅|参阅|请参考|可参考|可以参考|建议参考|具体参考|详细参考|详情参考|"
    "详情请见|具体请见|请见"
)
# The name must end its sentence: with links stripped, "详见由于计算能力的发展，…" is the next
# sentence running on, not a title.
_REF_NAMED_ZH = re.compile(
    rf"(?:{_REF_MARKERS_ZH})[：:]?\s*(?P<name>[^，。；：,;:！？!?\n（(]{{2,40}})(?=[。；！？.;!?：:）)]|\s*$)"
)
# Pointers inside the same text ("请参考以下步骤", "可参考上方配置") and names that say nothing.
INTERNAL_REF_PREFIXES: tuple[str, ...] = tuple(
    "以下 如下 下列 下方 下面 下图 上图 下文 上文 上方 上面 上述 "
    "本 此 该 这 图 附图 前文 后文 示例 正文 第".split()
)
GENERIC_REF_NAMES: frozenset[str] = frozenset(
    "文档 链接 说明 官网 页面 帮助文档 教程 视频 截图 "
    "规则 规定 办法 政策 制度 条款 协议 细则 标准 须知".split()
)
# A name holding these is a clause, not a title: the link text was stripped and the next words ran on.
NOT_IN_REF_NAME_ZH: frozenset[str] = frozenset(
    "是 可以 如果 您 你 我们 需要 的话 即可 就 都 会 要 能 请 点击 进行 不 也 还 已 后 时 建议".split()
)
NOT_REF_NAME_START_ZH: tuple[str, ...] = tuple(
    "由于 根据 其中 如果 若 因为 当 对于 通过 使用 自行 所有 为了 按照 一般 目前 先".split()
)
_LEADING_DETERMINERS_ZH = re.compile(
    r"^(?:另一份|另外的|另外|相关的?|有关的?|对应的?|具体的?|其他的?|最新的?|的)"
)


def _zh_name(name: str) -> str | None:
    """The referenced name cleaned, or None when it is a pointer within the text or a run-on clause."""
    if re.search(_REF_MARKERS_ZH, name):  # "…方法详见…方法详见": link texts stripped, names run together
        return None
    name = _LEADING_DETERMINERS_ZH.sub("", name.strip(' "“”《》「」『』'))
    if not 2 <= len(name) <= REFERENCE_MAX_CHARS or name.startswith(
        INTERNAL_REF_PREFIXES + NOT_REF_NAME_START_ZH
    ):
        return None
    if name in GENERIC_REF_NAMES or any(w in NOT_IN_REF_NAME_ZH for w in words(name)):
        return None
    return name


_REF_MARKER_EN = re.compile(
    r"(?:(?:^|[(,.;:]\s*|\b(?:please|must|should)\s+)see|\brefer\s+to|\b(?:described|set\s+out|defined|explained)\s+in|"
    r"\bgoverned\s+by|(?P<weak>\bin\s+accordance\s+with|\baccording\s+to|\bsubject\s+to))\s+"
    r"(?:(?:the|our|your|its|this|that)\s+)?"
    r"(?P<name>§\s*[0-9.]*[0-9]|(?:[^.;:,!?()\n]|\.(?=[0-9]))+?)"
    r"(?=\s*(?:\.(?![0-9])|[;:,!?()\n]|$)|\s+for\s+(?:more|further|details|information|instructions)\b|"
    r"(?-i:\s+(?:to|and\s+then|which|that|if|when|before|after)\b))",
    re.IGNORECASE,
)
REFERENCE_NOUNS_EN: frozenset[str] = frozenset(
    "policy policies rules rule terms agreement guide guidelines manual section chapter article clause "
    "conditions procedure faq appendix".split()
)


def _en_name(name: str, weak: bool = False) -> str | None:
    """The referenced name; after a weak marker ("according to the TV settings") only a rule or document."""
    tokens = name.strip(" \"“”'‘’").split()
    if len(tokens) > HEADING_MAX_WORDS:  # a run-on after a stripped link: keep its capitalised lead
        tokens = tokens[: next((i for i, t in enumerate(tokens) if not t[:1].isupper()), len(tokens))]
    if not tokens:
        return None
    if REFERENCE_NOUNS_EN & {t.lower() for t in tokens}:
        return " ".join(tokens)
    return " ".join(tokens) if not weak and (tokens[0][0].isupper() or tokens[0].startswith("§")) else None


def _zh_references(text: str) -> list[tuple[int, str]]:
    """Chinese references with their positions: quoted titles, clause ids, rules, named documents."""
    found = [(m.start(), (m.group("a") or m.group("b")).strip()) for m in _REF_QUOTED_ZH.finditer(text)]
    found += [(m.start(), m.group("name")) for m in _REF_CLAUSE_ZH.finditer(text)]
    names = [(m.start(), _zh_name(m.group("a") or m.group("b"))) for m in _REF_RULE_ZH.finditer(text)]
    names += [(m.start(), _zh_name(m.group("name"))) for m in _REF_NAMED_ZH.finditer(text)]
    return found + [(start, name) for start, name in names if name]


def _en_references(text: str) -> list[tuple[int, str]]:
    """English references with their positions ("see …", "refer to …", "governed by …")."""
    names = [
        (m.start(), _en_name(m.group("name"), m.group("weak") is not None))
        for m in _REF_MARKER_EN.finditer(text)
    ]
    return [(start, name) for start, name in names if name]


def cross_reference(text: str) -> str | None:
    """The rule, section or document the unit sends the reader to, as a searchable name; else None.

    "须按另一份《在读学员改期规则》处理" -> "在读学员改期规则"; "详见第3条" -> "第3条";
    "see section 3.2 for details" -> "section 3.2"; "See Wireless PowerShare ." -> "Wireless PowerShare".
    Pointers within the same text ("请参考以下步骤", "See below"), web addresses, verbs of seeing
    ("to see the screen", "See all") and references whose link text was stripped return None.
    The first reference in the text wins.
    """
    found = _zh_references(text) + _en_references(text)
    return min(found)[1] if found else None
