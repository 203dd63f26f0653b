"""Whether the evidence is about a neighbour of what the question asks about: a judge signal.

    neighbour(question, lead)       the question names a model, place, plan or customer group; the
                                    lead window is about none of those, and about another of that kind:
                                    what is asked and what the window is about (None: no neighbour)
    other_scope(question, lead)     whether it is (the judge's signal)

"How long is the return window in Canada?" answered from the article on returns in the United States and
Hong Kong, "What's the operating temperature range of the Hub H10?" from the C200 Pro's spec table:
the evidence sits near the question and shares its words, but it is about a neighbour. A window names
a scope in its document's title, its section's headings or its own units (``policies.question.scopes``);
a question whose scope the evidence does not name at all (a rule that applies to everyone) is no
neighbour question: only a rival of the same kind makes the evidence another thing's.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from evidence_loop.policies.evidence.checked import Checked
from evidence_loop.policies.question.analysis import Question
from evidence_loop.policies.question.named import asking_clause
from evidence_loop.policies.question.scopes import ScopeKind, scope_names
from evidence_loop.tools.windows import units_of

ASKED_KINDS: frozenset[ScopeKind] = frozenset({"model", "place", "plan", "group"})
_PLURAL_HEAD_RE = re.compile(r"\s+[A-Za-z]+s\b")
_SLUG_RE = re.compile(r"[a-z0-9]+(?:[-_][a-z0-9]+)+")  # a page named by its file ("d50-changjian")
_SLUG_SEP_RE = re.compile(r"[-_]")
MIN_TAIL = 2  # characters a name ending another must have to be read as the same name


@dataclass(frozen=True, slots=True)
class Neighbour:
    """The evidence is about ``about`` (names of one kind of scope), the question asks about ``asked``
    (as the question writes it)."""

    kind: ScopeKind
    asked: str
    about: tuple[str, ...]


def asked_scopes(question: Question) -> dict[ScopeKind, dict[str, str]]:
    """The scopes the question's asking clause names, by kind (a table row's label is none): each
    name's key and how the question writes it."""
    clause = asking_clause(question.text)
    asked: dict[ScopeKind, dict[str, str]] = {}
    for name in scope_names(clause):
        if name.kind in ASKED_KINDS:
            asked.setdefault(name.kind, {}).setdefault(name.key, clause[name.start : name.end])
    return asked


def window_scopes(item: Checked) -> tuple[dict[ScopeKind, frozenset[str]], dict[ScopeKind, frozenset[str]]]:
    """(what the window is about, every name it holds), by kind. It is about the scopes its document's
    title and section headings name, else (for a kind they name none of) those its units name; for
    models the headings decide ("works with the Hub H10" in the C200 Pro's spec table does not make the
    table the H10's), for places, plans and groups a unit naming the asked one is enough (one article
    holds each region's or plan's section)."""
    doc = item.doc
    title = _SLUG_SEP_RE.sub(" ", doc.title) if _SLUG_RE.fullmatch(doc.title) else doc.title
    heads = (title, *doc.sections[doc.units[item.window.first].section_id].path)
    headed = _named(heads, families=False)
    said = _named([u.text for u in units_of(item.window, doc)])
    kinds = {*headed, *said}
    about = {kind: headed.get(kind) or said.get(kind, frozenset()) for kind in kinds}
    held = {
        kind: about[kind] if kind == "model" else headed.get(kind, frozenset()) | said.get(kind, frozenset())
        for kind in kinds
    }
    return about, held


def _named(texts: Sequence[str], families: bool = True) -> dict[ScopeKind, frozenset[str]]:
    """The scope names of ``texts`` by kind; without ``families``, a plan named in the plural ("Cloud
    and Workspace plans and prices") is a family of plans, not one."""
    named: dict[ScopeKind, set[str]] = {}
    for text in texts:
        for name in scope_names(text):
            if not families and name.kind == "plan" and _PLURAL_HEAD_RE.match(text, name.end):
                continue
            named.setdefault(name.kind, set()).add(name.key)
    return {kind: frozenset(keys) for kind, keys in named.items()}


def same_scope(asked: str, named: str) -> bool:
    """One name, or one ending the other ("高级" in "香港的高级版", read as the plan "港的高级")."""
    short, long = sorted((asked, named), key=len)
    return short == long or (len(short) >= MIN_TAIL and long.endswith(short))


def neighbour(question: Question, lead: Checked) -> Neighbour | None:
    """For the first kind of scope the question names that the lead window is not about, while it is
    about another of that kind: what is asked and what the evidence is about; else None."""
    asked = asked_scopes(question)
    if not asked:
        return None
    about, held = window_scopes(lead)
    for kind, names in asked.items():
        if not about.get(kind) or any(same_scope(a, n) for a in names for n in held.get(kind, frozenset())):
            continue
        return Neighbour(kind, next(iter(names.values())), tuple(sorted(about[kind])))
    return None


def other_scope(question: Question, lead: Checked) -> bool:
    """True when the lead window is about a neighbour of what the question names (``neighbour``)."""
    return neighbour(question, lead) is not None
