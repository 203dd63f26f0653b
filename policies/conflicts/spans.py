"""The two sides of a difference the conflict check found: what kind of value they are, and whose.

Two aligned texts differ at a span of atoms on each side (``policies.question.values``). The spans are values
of one kind when both say yes and no about one thing (a negation put in front, opposite words), both
are numbers with what goes with them, or both are names (a few CJK characters not framed by
particles, or capitalised words). A side made of the question's own terms is its scope ("2018"
against the asked "2019"), not a value.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from itertools import pairwise

from evidence_loop.policies.lexicon import (
    CJK_EDGE_PARTICLES,
    CONNECTORS,
    NAME_LINKS,
    NEGATIONS,
    OPPOSITES,
    UNIT_ATOMS,
)
from evidence_loop.policies.question.values import (
    Atom,
    ValueKind,
    has_number,
    is_number_part,
    number_kind,
    stem,
)
from evidence_loop.tools.tokenize import CJK_CHARS, is_cjk, words

_MAX_CJK_NAME = 8
_NAME_JOINERS = CONNECTORS - {","}
_CJK_RUN_RE = re.compile(rf"[{CJK_CHARS}]+")


def is_polarity_pair(left: Sequence[str], right: Sequence[str]) -> bool:
    """True when two spans say yes and no about one thing: a negation put in front, or opposite words."""
    if frozenset({"".join(left), "".join(right)}) in OPPOSITES:
        return True
    shorter, longer = (tuple(left), tuple(right)) if len(left) <= len(right) else (tuple(right), tuple(left))
    cut = len(longer) - len(shorter)
    return cut > 0 and longer[cut:] == shorter and "".join(longer[:cut]) in NEGATIONS


def value_kind(left: Sequence[Atom], right: Sequence[Atom]) -> ValueKind | None:
    """What kind of value two differing spans are, or None when they are not values of one kind."""
    lnorms, rnorms = [a.norm for a in left], [a.norm for a in right]
    if is_polarity_pair(lnorms, rnorms):
        return "polarity"
    if _is_number(lnorms) and _is_number(rnorms):
        return number_kind([*lnorms, *rnorms])
    if _measured(lnorms) != _measured(rnorms):
        return None  # a date or quantity on one side only: "所以" against "1月5日" is no value of one kind
    if _is_named(left) and _is_named(right):
        return "named"
    return None


def _is_number(norms: Sequence[str]) -> bool:
    """A span of numbers and what goes with them (units, months, separators), with a number in it."""
    return any(has_number(n) for n in norms) and all(is_number_part(n) for n in norms)


def _measured(norms: Sequence[str]) -> bool:
    """A number followed by its unit ("1月", "5日", "3 years"): a date or a quantity, not part of a name."""
    return any(has_number(n) and following in UNIT_ATOMS for n, following in pairwise(norms))


def _is_named(span: Sequence[Atom]) -> bool:
    """A name: up to eight CJK characters not framed by particles, or capitalised words ("of" allowed)."""
    cjk = [a for a in span if _one_cjk(a.norm)]
    words = [a for a in span if a.norm.isalpha() and not _one_cjk(a.norm)]
    if not cjk and not words:
        return False
    edges = {span[0].norm, span[-1].norm}
    if cjk and (edges & CJK_EDGE_PARTICLES or len(cjk) > _MAX_CJK_NAME):
        return False
    if any(not (a.surface[0].isupper() or a.norm in NAME_LINKS) for a in words):
        return False
    return all(a in cjk or a in words or a.norm in _NAME_JOINERS or a.norm.isdigit() for a in span)


def _one_cjk(norm: str) -> bool:
    """A CJK character atom ("㍿" is one atom but four characters once normalised: no CJK atom)."""
    return len(norm) == 1 and is_cjk(norm)


def cjk_word_bounds(text: str, offset: int = 0) -> frozenset[int]:
    """Offsets (shifted by ``offset``) where the segmenter starts or ends a CJK word in ``text``."""
    bounds: set[int] = set()
    for run in _CJK_RUN_RE.finditer(text):
        position = offset + run.start()
        bounds.add(position)
        for word in words(run.group()):
            position += len(word)  # NFKC keeps CJK ideographs one character long
            bounds.add(position)
    return frozenset(bounds)


def terms_in(norms: Sequence[str], terms: frozenset[str]) -> frozenset[str]:
    """The question terms that occur in a run of atoms."""
    joined = "".join(norms)
    words = {stem(norm) for norm in norms}
    return frozenset(term for term in terms if term in words or (not term.isascii() and term in joined))


def is_scope(span: Sequence[Atom], terms: frozenset[str]) -> bool:
    """True when a side's value is made of the question's own terms: "2018" against the asked "2019"."""
    norms = [atom.norm for atom in span if atom.norm.isalnum() and atom.norm not in UNIT_ATOMS]
    cjk_terms = {term for term in terms if not term.isascii()}
    joined = "".join(norms)
    covered = {i for term in cjk_terms for i in _positions(joined, term)}
    offset, inside = 0, []
    for norm in norms:
        inside.append(stem(norm) in terms or all(i in covered for i in range(offset, offset + len(norm))))
        offset += len(norm)
    return bool(norms) and all(inside)


def _positions(text: str, term: str) -> Iterator[int]:
    start = text.find(term)
    while start >= 0:
        yield from range(start, start + len(term))
        start = text.find(term, start + 1)
