"""What a chatbot may show its user when the loop does not answer: one sentence per missing piece and
per confirmed conflict, in the question's language (Chinese for a question with Chinese characters,
English otherwise).

``detail`` stays the operator's prose (scores, thresholds, the rule that fired); a message holds none
of that: it says what is missing in the user's terms, naming the thing when the piece names one (a
model number, a referenced document, a side of a comparison, the candidates of an ambiguous
follow-up). The templates are the one table below: a kind of missing piece without a row in both
languages fails a test, so a kind added later comes with its words.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Literal

from evidence_loop.policies.types import MissingKind, MissingPiece
from evidence_loop.tools.tokenize import CJK_CHARS

Lang = Literal["zh", "en"]
LANGS: tuple[Lang, ...] = ("zh", "en")
_CJK_RE = re.compile(f"[{CJK_CHARS}]")


def language_of(question: str) -> Lang:
    """The language a reply to ``question`` is written in: zh when it holds a Chinese character."""
    return "zh" if _CJK_RE.search(question) else "en"


# kind -> language -> the message (a piece naming nothing, or a kind whose value is internal)
MISSING_MESSAGES: Mapping[MissingKind, Mapping[Lang, str]] = {
    "uncovered_slot": {
        "en": "I couldn't find what you asked about in our help articles.",
        "zh": "帮助文档里没有找到您问到的内容。",
    },
    "missing_scope": {
        "en": "The article I found doesn't say clearly which cases it covers, so I can't answer reliably.",
        "zh": "找到的文章没有说明它适用于哪些情况，所以无法给出可靠的答案。",
    },
    "truncated_unit": {
        "en": "The passage I found is incomplete, so I can't answer reliably.",
        "zh": "找到的内容不完整，所以无法给出可靠的答案。",
    },
    "orphan_row": {
        "en": "I found part of a table without its headings, so I can't tell what it means.",
        "zh": "找到的表格内容缺少表头，无法确定它的含义。",
    },
    "orphan_item": {
        "en": "I found part of a list without what it belongs to, so I can't answer reliably.",
        "zh": "找到的列表内容缺少它所属的说明，所以无法给出可靠的答案。",
    },
    "unresolved_reference": {
        "en": "The answer depends on another document that isn't in our help articles.",
        "zh": "答案取决于另一份文档，但帮助文档中没有它。",
    },
    "no_relevant_evidence": {
        "en": "I couldn't find an answer to this in our help articles.",
        "zh": "抱歉，帮助文档中没有找到这个问题的答案。",
    },
    "budget_exhausted": {
        "en": "The answer is spread over more text than I can read at once; please ask about one part of it.",
        "zh": "相关内容太长，无法一次读完；请把问题问得更具体一些。",
    },
    "conflict": {
        "en": "Our help articles disagree about this, so I can't tell you which is right.",
        "zh": "帮助文档对这个问题的说法不一致，无法确定哪一个正确。",
    },
    "access_restricted": {
        "en": "I can't answer this from the articles available to you.",
        "zh": "根据您可以查看的文档，无法回答这个问题。",
    },
    "no_question_content": {
        "en": "Please tell me what you'd like to know about: a product, a plan, a setting or a task.",
        "zh": "请告诉我您想了解什么，例如某个产品、套餐、设置或操作。",
    },
    "ambiguous_subject": {"en": "Which one do you mean?", "zh": "您指的是哪一个？"},
}
# kinds whose ``value`` names something the user can recognise, and the message naming it (other
# kinds' values are internal: the question's words not found, a unit's place)
NAMED_MESSAGES: Mapping[MissingKind, Mapping[Lang, str]] = {
    "uncovered_slot": {
        "en": "I couldn't find anything about {value} in our help articles.",
        "zh": "帮助文档里没有找到关于“{value}”的内容。",
    },
    "unresolved_reference": {
        "en": "The answer depends on “{value}”, which isn't in our help articles.",
        "zh": "答案取决于《{value}》，但帮助文档中没有这份内容。",
    },
    "ambiguous_subject": {"en": "Which one do you mean: {value}?", "zh": "您指的是哪一个：{value}？"},
}
# a comparison's side no evidence speaks for (an ``uncovered_slot`` whose slot kind is "side")
SIDE_MESSAGES: Mapping[Lang, str] = {
    "en": "I couldn't find anything about {value}, so I can't compare them.",
    "zh": "没有找到关于“{value}”的资料，所以无法进行比较。",
}
# a confirmed conflict: the two values the sources give
CONFLICT_MESSAGES: Mapping[Lang, str] = {
    "en": "Our help articles disagree about this: one says {left}, another says {right}. "
    "Please contact support to confirm.",
    "zh": "帮助文档的说法不一致：一处写的是“{left}”，另一处写的是“{right}”。请联系客服确认。",
}
_OR: Mapping[Lang, str] = {"en": " or ", "zh": "还是"}
_LIST: Mapping[Lang, str] = {"en": ", ", "zh": "、"}


def missing_message(piece: MissingPiece, lang: Lang, names: Sequence[str] = ()) -> str:
    """The sentence a user may read for one missing piece; ``names``: the candidates an ambiguous
    piece shares with its siblings (all of them are named in each one's message)."""
    value = piece.value if piece.kind in NAMED_MESSAGES else None
    if piece.kind == "ambiguous_subject" and names:
        value = _either(names, lang)
    if piece.kind == "uncovered_slot" and piece.slot_kind == "side" and value:
        return SIDE_MESSAGES[lang].format(value=value)
    if value:
        return NAMED_MESSAGES[piece.kind][lang].format(value=value)
    return MISSING_MESSAGES[piece.kind][lang]


def missing_messages(pieces: Sequence[MissingPiece], lang: Lang) -> list[str]:
    """Each piece's message, in order (an ambiguous subject's candidates named together)."""
    names = [p.value for p in pieces if p.kind == "ambiguous_subject" and p.value]
    return [missing_message(p, lang, names) for p in pieces]


def conflict_message(left: str, right: str, lang: Lang) -> str:
    """The sentence a user may read when two sources give different values for what was asked."""
    return CONFLICT_MESSAGES[lang].format(left=left.strip(), right=right.strip())


def _either(names: Sequence[str], lang: Lang) -> str:
    """ "A, B or C" / "A、B还是C"."""
    unique = list(dict.fromkeys(names))
    if len(unique) == 1:
        return unique[0]
    return _LIST[lang].join(unique[:-1]) + _OR[lang] + unique[-1]
