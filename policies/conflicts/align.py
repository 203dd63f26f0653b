"""Aligning evidence texts atom by atom, for the conflict check: which pairs, and where they differ.

A window becomes a ``Text``: its atoms (``policies.question.values``), the sentence of each, the
question terms it holds and its runs of consecutive atoms. ``text_pairs`` yields what is worth
aligning (near-identical sentences inside one window, then every two windows); ``share_context``
drops a pair that cannot hold a candidate before any alignment is built; ``regions`` are the
differing runs of an alignment, merged when only a few aligned atoms separate them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import combinations

from cydifflib import SequenceMatcher  # difflib's algorithm compiled: the same matches, faster

from evidence_loop.policies.conflicts.spans import terms_in
from evidence_loop.policies.question.values import Atom, Sentence, sentences
from evidence_loop.policies.types import EvidenceView


@dataclass(frozen=True, slots=True)
class Text:
    """Atoms to align, the index of each one's sentence, and the question terms they hold."""

    view: EvidenceView
    atoms: tuple[Atom, ...]
    sentence_of: tuple[int, ...]
    sentences: tuple[Sentence, ...]
    terms: frozenset[str]
    runs: frozenset[tuple[str, ...]]  # every run of ``run`` consecutive atoms (normalised)


def runs_of(atoms: Sequence[Atom], size: int) -> frozenset[tuple[str, ...]]:
    """Every run of ``size`` consecutive atoms, by their normalised forms."""
    norms = [a.norm for a in atoms]
    return frozenset(tuple(norms[i : i + size]) for i in range(len(norms) - size + 1))


@dataclass(frozen=True, slots=True)
class Region:
    """A differing run of an alignment: atom ranges on both sides and the aligned atoms around it."""

    i1: int
    i2: int
    j1: int
    j2: int
    before: int
    after: int


def prepare(view: EvidenceView, terms: frozenset[str], run: int) -> Text:
    """A window ready to align: its sentences' atoms (absolute offsets) and the ``terms`` it holds."""
    found = sentences(view.text, view.start)
    flat = tuple(atom for sentence in found for atom in sentence.atoms)
    owner = tuple(index for index, sentence in enumerate(found) for _ in sentence.atoms)
    return Text(view, flat, owner, found, terms_in([atom.norm for atom in flat], terms), runs_of(flat, run))


def text_pairs(texts: Sequence[Text], run: int, min_similarity: float) -> Iterator[tuple[Text, Text]]:
    """Every two near-identical sentences inside one window, then every two windows."""
    for text in texts:
        singles = [single(text, sentence, run) for sentence in text.sentences]
        norms = [[x.norm for x in sentence.atoms] for sentence in text.sentences]
        counts = [Counter(n) for n in norms]
        for a, b in combinations(range(len(norms)), 2):
            if not share_context(singles[a], singles[b]):
                continue  # no candidate can come from it: skip the similarity test
            if similar(norms[a], norms[b], counts[a], counts[b], min_similarity):
                yield singles[a], singles[b]
    yield from combinations(texts, 2)


def similar(
    left: list[str], right: list[str], lcount: Counter[str], rcount: Counter[str], threshold: float
) -> bool:
    """``SequenceMatcher.ratio() >= threshold``, with its cheap upper bounds tried first (most pairs fail
    them): the length bound, then the shared-atom bound, before any matching is built."""
    size = len(left) + len(right)
    if not size or 2 * min(len(left), len(right)) < threshold * size:
        return False
    if 2 * (lcount & rcount).total() < threshold * size:
        return False
    ratio: float = SequenceMatcher(None, left, right, autojunk=False).ratio()
    return ratio >= threshold


def share_context(left: Text, right: Text) -> bool:
    """False when no candidate can come from the pair: a difference needs ``min_context`` aligned atoms
    around it, so one aligned run at least half that long; texts sharing no such run are skipped
    before any alignment is built."""
    return not left.runs.isdisjoint(right.runs)


def single(text: Text, sentence: Sentence, run: int) -> Text:
    """One sentence of a window as a text of its own."""
    atoms = sentence.atoms
    return Text(text.view, atoms, (0,) * len(atoms), (sentence,), text.terms, runs_of(atoms, run))


def regions(left: Sequence[str], right: Sequence[str], gap: int) -> list[Region]:
    """Differing runs of the alignment of two atom sequences, merged when at most ``gap`` aligned
    atoms separate them."""
    ops = SequenceMatcher(None, left, right, autojunk=False).get_opcodes()
    equal = [i2 - i1 if tag == "equal" else 0 for tag, i1, i2, _, _ in ops]
    merged: list[list[int]] = []
    for index, (tag, i1, i2, j1, j2) in enumerate(ops):
        if tag == "equal":
            continue
        after = equal[index + 1] if index + 1 < len(ops) else 0
        if merged and i1 - merged[-1][1] <= gap and j1 - merged[-1][3] <= gap:
            merged[-1][1], merged[-1][3], merged[-1][5] = i2, j2, after
        else:
            merged.append([i1, i2, j1, j2, equal[index - 1] if index else 0, after])
    return [Region(*values) for values in merged]
