"""Cross-references: where a unit sends the reader, whether the name is a rule, and whether the
evidence holds it.

    cross_reference(text)                 the rule, section or document a unit points to ("详见《…》")
    referenced_rule(text)                 that, or "the X Rules apply"
    names_a_rule(name)                    a reference the answer may depend on (a rule, a clause)
    window_references(doc, window)        the rule names a window's units point to
    unresolved_references(items, policy)  those no other evidence window carries
    defers(question, name, item, lead)    whether the unit that answers defers to the reference

A reference right after a window is a gap to slide into (``policies.evidence.completeness``); one the
evidence leaves unresolved is a missing piece and a name for the wider recall (``policies.decision.missing``)
and pins the window that resolves it (``policies.evidence.selection``).
Detection is tuned for precision like every boundary signal: pointers within the same text ("请参考
以下步骤", "See below"), verbs of seeing ("to see the screen") and run-ons after a stripped link
are no references.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from evidence_loop.policies.config import Policy
from evidence_loop.policies.evidence.boundary import HEADING_MAX_WORDS
from evidence_loop.policies.evidence.coverage import covered_terms, term_share
from evidence_loop.policies.lexicon import (
    DOCUMENT_NOUNS_EN,
    DOCUMENT_NOUNS_ZH,
    GENERIC_REF_NAMES,
    INTERNAL_REF_PREFIXES,
    NOT_IN_REF_NAME_ZH,
    NOT_REF_NAME_START_ZH,
    REFERENCE_NOUNS_EN,
    RULE_NOUNS_ZH,
    STANDARD_NOUN_ZH,
)
from evidence_loop.policies.question.slots import compact
from evidence_loop.policies.question.values import sentences, states
from evidence_loop.tools.tokenize import index_tokens, words
from evidence_loop.tools.types import ParsedDocument, Unit
from evidence_loop.tools.windows import Window, units_of

if TYPE_CHECKING:  # completeness imports this module: Checked is read for its type only
    from evidence_loop.policies.evidence.checked import Checked
    from evidence_loop.policies.question.analysis import Question

REFERENCE_MAX_CHARS = 30

_REF_VERBS_ZH = "按照?|依照|依据|根据|参照|参见|参阅|参考|详见|见|遵守|遵循|适用|阅读|查阅"
_REFERRED_NOUNS_ZH = "|".join((*RULE_NOUNS_ZH, STANDARD_NOUN_ZH))  # what a rule or a standard is called
# 《》 marks a document title; other quotes mark UI labels too ("按照“设置”操作"), so they count
# only around a name that ends like a rule or a document.
_REF_QUOTED_ZH = re.compile(
    rf"(?:(?:{_REF_VERBS_ZH})[^。；;，,\n《“「『]{{0,8}}?|以)(?:《(?P<a>[^》\n]{{1,40}})》|"
    rf"[“「『](?P<b>[^”」』\n]{{0,38}}(?:{_REFERRED_NOUNS_ZH}|文档|指南|手册|说明|公告))[”」』])"
)
_REF_CLAUSE_ZH = re.compile(
    rf"(?:见|参见|参照|详见|依照|按照|根据|依据|适用)(?:本(?:{_REFERRED_NOUNS_ZH}|合同))?"
    r"(?P<name>第[0-9零〇一二两三四五六七八九十百]+[条章节款项])"
)
_REF_RULE_ZH = re.compile(
    rf"(?:(?:按照?|依照|依据|根据|参照)(?P<a>[^，。；：,;:\n《》“”]{{2,20}}?(?:{_REFERRED_NOUNS_ZH}))(?:处理|执行|办理|为准)|"
    rf"适用(?P<b>[^，。；：,;:\n《》“”]{{2,20}}?(?:{_REFERRED_NOUNS_ZH})))"
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


_RULE_NAME_RE = re.compile(
    rf"(?:{'|'.join(RULE_NOUNS_ZH)}|第[0-9一二三四五六七八九十百]+[条节章款])$"
    r"|\b(polic(y|ies)|rules?|terms|agreement|terms and conditions"
    r"|section \d[\d.]*|clause \d[\d.]*|chapter \d+)\b",
    re.IGNORECASE,
)
_RULES_APPLY_RE = re.compile(
    r"\b(?:[Tt]he\s+)?((?:[A-Z][\w-]*\s+){1,6}(?:Rules|Policy|Terms|Regulations|Conditions))\s+(?:apply|applies)\b"
)


def names_a_rule(name: str) -> bool:
    """A reference the answer may depend on names a rule, policy, clause or section, not any page or step."""
    return bool(_RULE_NAME_RE.search(name.strip()))


@lru_cache(maxsize=100_000)
def referenced_rule(text: str) -> str | None:
    """The rule a unit sends the reader to: a cross-reference, or "the X Rules apply"."""
    name = cross_reference(text)
    if name is None and (match := _RULES_APPLY_RE.search(text)):
        name = match.group(1).strip()
    return name


_DEFERRAL_EN = re.compile(
    r"\b(?:listed|shown|given|found|detailed|specified|set\s+out|described|explained|published|stated|"
    r"recommended|defined|outlined|quoted|calculated\s+as\s+described)\s+(?:in|on)\s+(?:the|our|your|its)\s+"
    r"(?P<name>[A-Z][\w-]*(?:\s+(?:[A-Z][\w-]*|of|and|for))*)"
)
_TITLE_ZH = re.compile(r"《(?P<name>[^》\n]{2,40})》")


@lru_cache(maxsize=100_000)
def referenced_document(text: str) -> str | None:
    """A unit's reference, rules and named documents alike: the rule it sends the reader to, a
    document it says holds what it leaves out ("the amount is listed in the Price List", "按《偏远
    地区运费标准》收取"), or any title it cites in 《》 after a verb of referring."""
    name = referenced_rule(text)
    if name is not None:
        return name
    if match := _DEFERRAL_EN.search(text):
        return re.sub(r"(?:\s+(?:of|and|for))+$", "", match.group("name").strip())
    return None


def names_a_document(name: str) -> bool:
    """A reference the answer may depend on: a rule, or a document named for what it is ("the Price
    List", "Repair Fee Schedule", "《维修收费标准》"; a one-word link such as "Guide" is not one)."""
    if names_a_rule(name):
        return True
    words_ = name.split()
    if len(words_) > 1 and words_[-1].lower() in DOCUMENT_NOUNS_EN:
        return True
    return len(name) > 2 and name.endswith(DOCUMENT_NOUNS_ZH)


def window_references(doc: ParsedDocument, window: Window, documents: bool = False) -> tuple[str, ...]:
    """Names of the rules, policies or sections the window's units send the reader to; with
    ``documents``, the named documents they say hold what they leave out too."""
    if not documents:
        names = (referenced_rule(u.text) for u in units_of(window, doc))
        return tuple(dict.fromkeys(n for n in names if n and names_a_rule(n)))
    found = (referenced_document(u.text) for u in units_of(window, doc))
    return tuple(dict.fromkeys(n for n in found if n and names_a_document(n)))


def referring_unit(name: str, item: Checked) -> Unit:
    """The unit of a window that makes the reference (the window's first when none says it alone)."""
    units = units_of(item.window, item.doc)
    return next(
        (u for u in units if name in (referenced_rule(u.text), referenced_document(u.text))), units[0]
    )


def reference_resolved(name: str, referrer: Checked, items: Sequence[Checked], policy: Policy) -> bool:
    """A reference is resolved when another window carries the named rule: in its title, path or
    text (``policy.reference_term_share`` of the name's terms)."""
    wanted = compact(name)
    terms = tuple(dict.fromkeys(index_tokens(name)))
    for item in items:
        if item is referrer:
            continue
        heads = [item.doc.title, *item.doc.sections[item.doc.units[item.window.first].section_id].path]
        if any(wanted in compact(h) for h in heads):
            return True
        texts = [*heads, *(u.text for u in units_of(item.window, item.doc))]
        if terms and term_share(terms, texts) >= policy.reference_term_share:
            return True
    return False


def unresolved_references(items: Sequence[Checked], policy: Policy) -> list[tuple[str, Checked]]:
    """References made by the evidence that no other evidence window resolves, once each."""
    out: dict[str, Checked] = {}
    for item in items:
        for name in item.check.references:
            if name not in out and not reference_resolved(name, item, items, policy):
                out[name] = item
    return list(out.items())


_ANSWERING_KINDS = frozenset({"sentence", "list_item", "table_row"})


def defers(
    question: Question,
    name: str,
    item: Checked,
    lead: Sequence[Checked],
    share: float = 0.5,
    defer_share: float = 1.0,
) -> bool:
    """Whether the unit that answers the question sends the reader to ``name`` ("the fee is listed
    in the Price List", "详见《收费标准》").

    When the question asks for a value (a duration, an amount), the referring unit defers when it
    names some of the question's terms and no unit of the lead windows, nor a sentence of its own
    beside the reference, that states such a value names ``share`` as many
    (``Policy.statement_term_share``: it speaks to the question too). Otherwise the sentence that
    names the reference defers when it names ``defer_share`` of the question's terms the unit or
    sentence naming most of them names (``Policy.reference_defer_share``), or, said alone by its
    unit, no unit is closer to the question's meaning. A reference elsewhere in the evidence ("use
    of the service is governed by the Acceptable Use Policy" under the refund rule asked about)
    leaves the answer standing."""
    referrer = referring_unit(name, item)
    deferring, beside = _deferring_sentence(name, referrer.text)
    others = [u.text for c in lead for u in units_of(c.window, c.doc) if u.kind in _ANSWERING_KINDS]
    others = [t for t in others if t != referrer.text] + beside
    terms = [len(covered_terms(question.terms, (t,))) for t in others]
    asks = question.measures or question.asks
    if asks:  # the unit speaks to the question; a sentence beside the reference may state the value
        own = len(covered_terms(question.terms, (referrer.text,)))
        stating = [n for n, t in zip(terms, others, strict=True) if states(asks, question.own_numbers, t)]
        return own > 0 and all(n < share * own for n in stating)
    own = len(covered_terms(question.terms, (deferring,)))
    best = max([own, *terms])
    if best > 0 and own >= defer_share * best:
        return True
    units = [u for c in lead for u in units_of(c.window, c.doc) if u.kind in _ANSWERING_KINDS]
    return not beside and _closest(question, referrer, units)


def _deferring_sentence(name: str, text: str) -> tuple[str, list[str]]:
    """The sentence of a unit that names the reference, and the unit's other sentences: "C200仅支持
    2.4GHz Wi-Fi，不支持5GHz。路由器的详细设置方法详见《家庭网络配置指南》。" answers the Wi-Fi question
    in its first sentence and defers only the router's settings."""
    spans = [text[s.start : s.end] for s in sentences(text)]
    at = next((i for i, t in enumerate(spans) if name in t), None)
    if at is None or len(spans) < 2:
        return text, []
    return spans[at], spans[:at] + spans[at + 1 :]


def _closest(question: Question, unit: Unit, units: Sequence[Unit]) -> bool:
    """Whether no unit is closer to the question's meaning than ``unit`` (False without vectors)."""
    if question.cosines is None:
        return False
    cosines = question.cosines
    own = cosines.best((unit,))
    return own is not None and all((cosines.best((u,)) or 0.0) <= own for u in units)
