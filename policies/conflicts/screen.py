"""Why two values are no disagreement, read before any adjudicator (``Policy.conflict_scopes``).

A candidate (two windows stating different values for what is asked) is set aside, with its reason,
when

- **one document states both**: items of one list or rows of one table ("Galaxy Store" and "Galaxy
  Wearable", two apps one manual lists), or two sections of one page: two scopes of one source;
- **the two values are about different things**: each side's statement, its section's headings and
  its document's title name the things it is about (``policies.question.scopes``: a model, a place, a
  plan, a customer group, a table row's label); two sides naming different things of one kind, or
  one naming a thing the other does not (a rule for Hong Kong beside the general rule), speak of two
  scopes; a side about another thing of a kind the question names ("Business" when it asks about
  "Starter") is about something else.

A statement dated from when it applies supersedes by rule (``policies.conflicts.settle``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from evidence_loop.policies.conflicts.numbered import (
    Names,
    asked_numbered,
    number_of_a_thing,
    numbered_apart,
    side_numbered,
)
from evidence_loop.policies.conflicts.settle import statement_of
from evidence_loop.policies.question.scopes import ScopeName, scope_names
from evidence_loop.policies.types import ConflictCandidate, EvidenceView, ValueMention
from evidence_loop.tools.tokenize import CJK_CHARS

_CJK_RE = re.compile(f"[{CJK_CHARS}]")


def side_scopes(side: ValueMention, view: EvidenceView) -> tuple[ScopeName, ...]:
    """What one side speaks of: its statement's names (the value itself left out), its section's
    headings' and its document title's."""
    text, offset = statement_of(side, view)
    value = (side.start - view.start - offset, side.end - view.start - offset)
    names = [n for n in scope_names(text) if n.end <= value[0] or n.start >= value[1]]
    return (*names, *headings(view))


def headings(view: EvidenceView) -> tuple[ScopeName, ...]:
    """What a window's section headings, its document's title and its scope sentence name: what the
    page is about."""
    said = (*view.section, view.title, view.scope)
    return tuple(name for heading in said for name in scope_names(heading))


Keys = frozenset[tuple[str, str]]  # (kind, key) of each name: what is compared
Found = tuple[str, list[frozenset[str]]]  # a reason's template, and the names of each of its places


def _keys(names: Iterable[ScopeName]) -> Keys:
    return frozenset((n.kind, n.key) for n in names)


def drop_reason(
    candidate: ConflictCandidate,
    left: EvidenceView,
    right: EvidenceView,
    asked: Sequence[ScopeName],
    terms: frozenset[str] = frozenset(),
    numbered: Names | None = None,
) -> str | None:
    """Why the candidate is no disagreement, or None when it stays one (two sentences of one window
    are settled by rule, ``settle_by_rule``); ``asked``: what the question names, ``terms``: its
    words (a table row labelled with them is the attribute asked, not a scope: "| 内置电池 | 6个月 |");
    ``numbered``: the numbered things and tiers it names, when those are read
    (``Policy.conflict_numbered``)."""
    if left.evidence_id == right.evidence_id:
        return None
    if (left.doc_id, left.version) == (right.doc_id, right.version):
        return (
            f"one document ({left.doc_id}) states both values: items of one list or table, or two of "
            "its sections, read as two scopes of one source"
        )
    named = frozenset(n.key for n in asked)
    inside = _inside_a_name(candidate.left, left) or _inside_a_name(candidate.right, right)
    if inside is not None:
        return f"the value is part of the name '{inside}', not a value of it"
    if numbered is not None:
        found_apart = _numbered_reason(candidate, left, right, numbered)
        if found_apart is not None:
            return found_apart
    labels = _one_script(left.text, right.text)  # row labels in two languages are not compared
    ours = _scopes(side_scopes(candidate.left, left), terms, named, labels)
    theirs = _scopes(side_scopes(candidate.right, right), terms, named, labels)
    shown = {n.key: n.name for n in (*asked, *ours, *theirs)}
    mine, other, wanted = _keys(ours), _keys(theirs), _keys(asked)
    written = terms - {n.key for n in asked} if numbered is not None else frozenset()  # "Shield 套餐"
    found = (
        _compared(mine, other, wanted)
        or _other_thing(unwritten(headings(left), written), wanted)  # a page about another model
        or _other_thing(unwritten(headings(right), written), wanted)  # mentions the asked one
        or _other_thing(mine, wanted)
        or _other_thing(other, wanted)
        or _asked_beside_general(mine, other, wanted)
        or _two_scopes(mine, other, wanted)
    )
    if found is None:
        return None
    template, groups = found
    return template.format(*(", ".join(f"'{shown[k]}'" for k in sorted(group)) for group in groups))


def unwritten(names: Iterable[ScopeName], written: frozenset[str]) -> Keys:
    """The names a page's headings give, less those the question writes as words of its own (a
    product named before the plan asked: "Shield" of "Shield 套餐" when it asks of "Shield 高级版")."""
    return _keys(n for n in names if n.key not in written)


def _numbered_reason(
    candidate: ConflictCandidate, left: EvidenceView, right: EvidenceView, asked: Names
) -> str | None:
    """Why two sides are about different numbered things or tiers, or a value is a thing's number."""
    own = number_of_a_thing(candidate.left, left) or number_of_a_thing(candidate.right, right)
    if own is not None:
        return f"the value is the number of '{own}', not a value of it"
    apart = numbered_apart(side_numbered(candidate.left, left), side_numbered(candidate.right, right), asked)
    return None if apart is None else apart[0].format(apart[1], apart[2])


def _scopes(
    names: Sequence[ScopeName], terms: frozenset[str], asked: frozenset[str], labels: bool = True
) -> tuple[ScopeName, ...]:
    """The names that scope a side: a table row's label made of the question's words is the attribute
    asked ("内置电池" for "内置电池保修多久"), not a thing it is asked of, unless the question names it
    as one ("| Starter | $9 |" asked of "the Starter plan"); no row label when the two sides are in
    two languages ("Power" / "电池" are not two things)."""
    return tuple(
        n
        for n in names
        if n.kind != "item" or n.key in asked or (labels and not any(t in n.key for t in terms if len(t) > 1))
    )


def _one_script(left: str, right: str) -> bool:
    """Both texts are Chinese, or neither is."""
    return (_CJK_RE.search(left) is None) == (_CJK_RE.search(right) is None)


def _inside_a_name(side: ValueMention, view: EvidenceView) -> str | None:
    """The model name the side's value is a piece of ("200" of "X200"), if it is one."""
    text, offset = statement_of(side, view)
    value = (side.start - view.start - offset, side.end - view.start - offset)
    for name in scope_names(text):
        if (
            name.kind == "model"
            and name.start <= value[0]
            and value[1] <= name.end
            and name.end - name.start > value[1] - value[0]
        ):
            return name.name
    return None


def _compared(ours: Keys, theirs: Keys, asked: Keys) -> Found | None:
    """The question names several things of a kind (a comparison: "X200 and X300") and each side
    speaks of a different one of them: each value is its own thing's."""
    for kind in {k for k, _ in asked}:
        wanted = frozenset(key for k, key in asked if k == kind)
        mine, other = _of_kind(ours, kind) & wanted, _of_kind(theirs, kind) & wanted
        if len(wanted) > 1 and mine and other and mine.isdisjoint(other):
            return "the question compares {}: each value is for one of them, {} / {}", [
                wanted,
                mine,
                other,
            ]
    return None


def _other_thing(names: Keys, asked: Keys) -> Found | None:
    """A side about another thing of a kind the question names (and not about the asked one too)."""
    asked_keys = {key for _, key in asked}
    for kind, key in sorted(names):
        same_kind = frozenset(k for kd, k in asked if kd == kind)
        if same_kind and key not in asked_keys and not same_kind & {k for _, k in names}:
            return f"one side is about the {kind} {{}}; the question asks about {{}}", [
                frozenset({key}),
                same_kind,
            ]
    return None


def _asked_beside_general(ours: Keys, theirs: Keys, asked: Keys) -> Found | None:
    """One side is about what the question names, the other names nothing: the one about the asked
    thing speaks for it ("Returns in Hong Kong" beside the general return rule, asked of Hong Kong).
    Not so for a side naming other things of that kind too (a table comparing two regions): the
    general rule may be the one it contradicts."""
    asked_kinds = {kind for kind, _ in asked}
    for named, general in ((ours, theirs), (theirs, ours)):
        about = frozenset(key for _, key in named & asked)
        others = {key for kind, key in named - asked if kind in asked_kinds}
        if about and not general and not others:
            return "one side is about {}, which the question names; the other is general", [about]
    return None


def _two_scopes(ours: Keys, theirs: Keys, asked: Keys) -> Found | None:
    """The sides name different things of one kind, the question's own aside: two plans, two places,
    two models. A table row's label stands for a plan, a model or a customer group ("| Starter | $9 |"
    and "the Business plan"). Names of kinds only one side names are left alone: a page says more of
    its scope than a statement needs (its plans beside the other's place)."""
    known = frozenset(key for _, key in asked)
    for kind in sorted({k for k, _ in ours} | {k for k, _ in theirs}):
        mine = _of_kind(ours, kind) - known
        other = _of_kind(theirs, kind) - known
        if mine and other and mine.isdisjoint(other):
            return f"the values are for different {kind}s: {{}} / {{}}", [mine, other]
    return None


_AS_ITEM = frozenset({"plan", "model", "group"})  # the kinds a table row's label may name


def _of_kind(names: Keys, kind: str) -> frozenset[str]:
    """The names of one kind on a side; a row's label counts as a plan, model or group, and those as
    labels."""
    also = {"item"} if kind in _AS_ITEM else _AS_ITEM if kind == "item" else set()
    return frozenset(key for k, key in names if k == kind or k in also)


def screened(
    pairs: Iterable[tuple[ConflictCandidate, EvidenceView, EvidenceView]],
    question: str,
    terms: frozenset[str] = frozenset(),
    numbered: bool = False,
) -> tuple[list[tuple[ConflictCandidate, EvidenceView, EvidenceView]], list[tuple[ConflictCandidate, str]]]:
    """The pairs that stay candidates, and those set aside with their reasons (``terms``: the
    question's subject terms; ``numbered``: sides about different numbered things set aside too)."""
    asked = scope_names(question)
    things = asked_numbered(question) if numbered else None
    kept: list[tuple[ConflictCandidate, EvidenceView, EvidenceView]] = []
    dropped: list[tuple[ConflictCandidate, str]] = []
    for candidate, left, right in pairs:
        reason = drop_reason(candidate, left, right, asked, terms, things)
        if reason is None:
            kept.append((candidate, left, right))
        else:
            dropped.append((candidate, reason))
    return kept, dropped
