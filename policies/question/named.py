"""What a question names, read against the corpus it is asked of.

    CorpusTerms                  what the analysis reads of the corpus: passage frequencies, codes
    identifier_slot(slot, codes) whether a letters-and-digits token is a model number
    asking_clause(text)          the clause that asks, without the context a customer adds
    absent_things(text, corpus)  the things the asking clause names that no readable passage names

A token mixing letters and digits is a model number when it is shaped like a product code (letters
first: "X200", "LM-S10", "QUOKKA001X") or the corpus names its family ("65Q80T" beside "55Q80T"); an
everyday token ("2FA", "4K", "5G", "USB-C", "Wi-Fi 6", "H.264", "1080p", "24h", "3-step") is a word.

A thing the question asks about is named nowhere when a content word of its asking clause is held by
no passage the caller may read (after spelling) while the clause's other words are: "student" in "do
you offer a student discount?" where the corpus speaks of discounts only. Context a customer adds in
another clause ("I bought it at a mall, ...") is not the thing asked about.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

from evidence_loop.policies.lexicon import (
    ASKING_OPENINGS_EN,
    ASKING_WORDS_IN_CLAUSE_ZH,
    EVERYDAY_CODE_NAMES,
    EVERYDAY_CODES,
    FILLERS,
)
from evidence_loop.policies.types import Slot
from evidence_loop.tools.tokenize import index_tokens, is_cjk, words


class CorpusTerms(Protocol):
    """What the analysis reads of the corpus, over what the caller may read."""

    def doc_freqs(self, terms: Sequence[str]) -> Mapping[str, int]:
        """How many passages hold each term."""
        ...

    def together(self, terms: Sequence[str]) -> int:
        """How many passages hold every one of the terms."""
        ...

    def mixed_tokens(self) -> frozenset[str]:
        """The tokens mixing letters and digits the passages hold (the codes the corpus names)."""
        ...


_DIGITS = re.compile(r"[0-9]+")
_SEPARATORS = re.compile(r"[-_./\s]")


def _family(form: str) -> str:
    """A code with its numbers masked: "65q80t" and "55q80t" are one family, "0q0t"."""
    return _DIGITS.sub("0", _SEPARATORS.sub("", form))


@lru_cache(maxsize=64)
def _families(codes: frozenset[str]) -> frozenset[str]:
    return frozenset(_family(code) for code in codes)


def everyday_code(norm: str) -> bool:
    """A token that mixes letters and digits but names no product: a standard, a resolution, a
    network generation, a count of steps or hours ("usb-c", "wi-fi6", "4k", "2fa", "3-step")."""
    if norm in EVERYDAY_CODES:
        return True
    name = re.match(r"[a-z-]+", norm)
    return name is not None and name.group().strip("-") in EVERYDAY_CODE_NAMES


def identifier_slot(slot: Slot, codes: frozenset[str]) -> bool:
    """Whether a slot the question names is precise: every slot but a model-like token that is an
    everyday word, or that starts with a digit while no code of its family is in the corpus."""
    if slot.kind != "model":
        return True
    if everyday_code(slot.norm):
        return False
    if not slot.norm[:1].isdigit():
        return True
    return _family(slot.norm) in _families(codes)


_ASKING_EN = re.compile(rf"^\s*(?:{'|'.join(ASKING_OPENINGS_EN)})\b", re.IGNORECASE)
_ASKING_ZH = re.compile("|".join(ASKING_WORDS_IN_CLAUSE_ZH))
_CLAUSE_BREAK = re.compile(r"[,;.!?:，。；！？：、]+|\s+-\s+")


def asking_clause(text: str) -> str:
    """The clause of a question that asks (the last that opens with an asking word, or holds one),
    not the context around it; the whole text when it has one clause or none asks."""
    clauses = [c for c in _CLAUSE_BREAK.split(text) if c.strip()]
    if len(clauses) <= 1:
        return text
    asking = [c for c in clauses if _ASKING_EN.search(c) or _ASKING_ZH.search(c)]
    return asking[-1] if asking else text


def informative(term: str) -> bool:
    """A term that can carry a request: not a filler ("大概", "的话", "please", "actually")."""
    return term not in FILLERS


@dataclass(frozen=True, slots=True)
class AbsentThing:
    """A phrase of the asking clause that no readable passage names, and its words nothing holds."""

    phrase: str
    absent: tuple[str, ...]


def _phrases(clause: str, terms: frozenset[str]) -> list[list[str]]:
    """Runs of the clause's words whose tokens are all content terms: its noun phrases, roughly."""
    runs: list[list[str]] = [[]]
    for word in words(clause):
        tokens = index_tokens(word)
        if tokens and all(t in terms for t in tokens):
            runs[-1].append(word)
        elif runs[-1]:
            runs.append([])
    return [r for r in runs if r]


def absent_things(
    clause: str, terms: Sequence[str], corpus: CorpusTerms, spelled: Mapping[str, str]
) -> tuple[AbsentThing, ...]:
    """The phrases of the asking clause holding a content word no readable passage holds, when the
    clause also names something the corpus does. ``terms`` are the question's content terms as
    spelled; ``spelled`` maps a term as written to its spelling."""
    content = [t for t in terms if informative(t)]
    freqs = corpus.doc_freqs(content)
    known = [t for t in content if held(t, freqs, corpus)]
    if not known or len(known) == len(content):
        return ()
    absent = frozenset(content) - frozenset(known)
    written = frozenset(content) | frozenset(w for w, t in spelled.items() if t in content)
    found = []
    for run in _phrases(clause, written):
        lacking = [spelled.get(t, t) for w in run for t in index_tokens(w) if spelled.get(t, t) in absent]
        if lacking:
            joiner = "" if all(is_cjk(w) for w in run) else " "
            found.append(AbsentThing(joiner.join(run), tuple(dict.fromkeys(lacking))))
    return tuple(found)


def held(term: str, freqs: Mapping[str, int], corpus: CorpusTerms) -> bool:
    """Whether some readable passage holds the term (``freqs``: the passage frequencies read), or,
    for a CJK word of three or more characters the segmenter may cut otherwise, all its
    character pairs."""
    if freqs.get(term, 0) > 0:
        return True
    if not is_cjk(term) or len(term) < 3:
        return False
    return corpus.together([term[i : i + 2] for i in range(len(term) - 1)]) > 0
