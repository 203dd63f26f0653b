"""What a question names, read against the corpus it is asked of.

    CorpusTerms                  what the analysis reads of the corpus: passage frequencies, codes
    identifier_slot(slot, codes) whether a letters-and-digits token is a model number
    rate_period(slot, text)      whether a duration is the period a price is asked per ("多少钱一个月")
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
import unicodedata
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

from evidence_loop.policies.lexicon import (
    ASKING_OPENINGS_EN,
    ASKING_WORDS_IN_CLAUSE_ZH,
    DETERMINERS_EN,
    EVERYDAY_CODE_NAMES,
    EVERYDAY_CODES,
    FILLERS,
    MODEL_VARIANTS,
    NOT_SUBJECT_EN,
    PHRASE_BREAKS_EN,
    PHYSICAL_MEASURES,
    PRICE_ASKS_BEFORE_PERIOD,
    QUESTION_WORDS_EN,
)
from evidence_loop.policies.question.places import askable_places, spellings
from evidence_loop.policies.question.values import stem
from evidence_loop.policies.types import Slot
from evidence_loop.tools.tokenize import (
    CJK_CHARS,
    STOPWORDS_EN,
    homophone_variants,
    index_tokens,
    is_cjk,
    normalize,
    tagged,
)


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


_PRICE_ASKED = re.compile(rf"(?:{'|'.join(PRICE_ASKS_BEFORE_PERIOD)})\s*$", re.IGNORECASE)
_ONE_UNIT = re.compile(r"(?:1|一|one|a)\s*(?:个)?\s*\S", re.IGNORECASE)


def rate_period(slot: Slot, text: str) -> bool:
    """Whether a duration the question names is the period a price is asked per, not a value it
    names: one unit right after the price asked ("基础版多少钱一个月", "how much for one month?").
    "¥45/月" answers it, and no passage need say "一个月"; "三个月多少钱" names a duration."""
    if slot.kind != "duration" or not _ONE_UNIT.match(slot.value):
        return False
    text = " ".join(unicodedata.normalize("NFKC", text).split())  # as ``extract_slots`` reads it
    at = text.find(slot.value)
    return at > 0 and _PRICE_ASKED.search(text[:at]) is not None


_ASKING_EN = re.compile(rf"^\s*(?:{'|'.join(ASKING_OPENINGS_EN)})\b", re.IGNORECASE)
_ASKING_ZH = re.compile("|".join(ASKING_WORDS_IN_CLAUSE_ZH))
_VARIANT_AFTER = re.compile(rf"\s*-?\s*({'|'.join(sorted(MODEL_VARIANTS))})\b", re.IGNORECASE)


def _compact(text: str) -> str:
    """As ``slots.compact`` (NFKC, lower case, no whitespace): the form a slot's norm takes."""
    return "".join(normalize(text).split())


def with_variants(text: str, slots: Sequence[Slot]) -> tuple[Slot, ...]:
    """The slots with each model number followed by a variant word read as that model ("C200 Pro",
    "D50 Max"): another product than the bare number."""
    text = " ".join(unicodedata.normalize("NFKC", text).split())  # as ``extract_slots`` reads it
    out = []
    for slot in slots:
        at = text.find(slot.value) if slot.kind == "model" else -1
        match = _VARIANT_AFTER.match(text, at + len(slot.value)) if at >= 0 else None
        if match is None:
            out.append(slot)
            continue
        value = f"{slot.value} {match.group(1)}"
        norm = _compact(value)
        out.append(Slot("model", value, norm, (_compact(f"{slot.value}-{match.group(1)}"),)))
    return tuple(out)


# a clause ends at a comma, a semicolon, a question or exclamation mark, a full stop before a space, a
# Chinese punctuation mark or a dash between spaces; not at a colon in a title ("Zelda: Breath of the
# Wild") nor at the dot of "halvio.com" or "H.264"
_CLAUSE_BREAK = re.compile(r"[,;!?]+|\.(?=\s|$)|[，。；！？：、]+|\s+[-–—]\s+")


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


_FUNCTION_WORDS = STOPWORDS_EN | QUESTION_WORDS_EN


def cut_across(term: str, text: str, corpus: CorpusTerms) -> bool:
    """Whether the segmenter cut a CJK word of the question across two words: a character at its edge
    and the question's character beside it make a pair some readable passage holds ("充满|电能|用":
    "满电" is in "充满电")."""
    flat = normalize(text)
    at = flat.find(term)
    if not is_cjk(term) or at < 0:
        return False
    pairs = []
    if at > 0 and is_cjk(flat[at - 1]):
        pairs.append(flat[at - 1] + term[0])
    end = at + len(term)
    if end < len(flat) and is_cjk(flat[end]):
        pairs.append(term[-1] + flat[end])
    return any(n > 0 for n in corpus.doc_freqs(pairs).values()) if pairs else False


def unheld_weighs_nothing(term: str, corpus: CorpusTerms) -> bool:
    """Whether a term no readable passage holds is a slip rather than what the corpus lacks: a Chinese
    word one character from a word the corpus holds that reads the same (冲电 for 充电, 写措 for 写错:
    a pinyin input method's mistake), or an English word one edit from a function word ("teh", "hpw",
    "waht"). Any other word the corpus lacks ("plastic", 员工 where only staff may read the staff
    pages) may be the very thing it lacks, and stays uncovered."""
    if is_cjk(term) and len(term) == 1:
        return True  # a character alone is held inside other words, never as a word of its own
    if is_cjk(term):
        variants = homophone_variants(term)
        return any(n > 0 for n in corpus.doc_freqs(variants).values()) if variants else False
    return term.isascii() and term.isalpha() and any(_one_edit(term, w) for w in _FUNCTION_WORDS)


def _one_edit(a: str, b: str) -> bool:
    """One substitution, insertion, deletion or swap of neighbours apart (and not equal)."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        swapped = (
            len(diff) == 2
            and diff[1] == diff[0] + 1
            and a[diff[0]] == b[diff[1]]
            and a[diff[1]] == b[diff[0]]
        )
        return len(diff) == 1 or swapped
    short, long_ = sorted((a, b), key=len)
    return any(long_[:i] + long_[i + 1 :] == short for i in range(len(long_)))


@dataclass(frozen=True, slots=True)
class AbsentThing:
    """A word of the asking clause that names a thing no readable passage names, and whether it is
    a name (a capitalised or upper-case English word, a Chinese proper noun), not a common word."""

    phrase: str
    absent: tuple[str, ...]
    proper: bool = False
    place: bool = False  # a place (a country, region or city of the gazetteer)


_WORD_EN = re.compile(r"[A-Za-z][A-Za-z0-9'&+-]*|[0-9][A-Za-z0-9-]*")
_BREAKS_EN = PHRASE_BREAKS_EN | QUESTION_WORDS_EN | DETERMINERS_EN | NOT_SUBJECT_EN | STOPWORDS_EN
_NOUN_TAGS = frozenset({"n", "nr", "ns", "nt", "nz", "nrt", "nrfg", "eng"})
_PROPER_TAGS = frozenset({"nr", "ns", "nt", "nz", "nrt", "nrfg"})


def absent_things(
    clause: str, corpus: CorpusTerms, spell: Callable[[Sequence[str]], Sequence[str]]
) -> tuple[AbsentThing, ...]:
    """The things the asking clause names that no readable passage names (after ``spell``): in
    Chinese its nouns, in English its capitalised or upper-case words and the words that modify a
    noun the corpus knows ("student" in "student discount"), each held by no passage."""

    def known(word: str) -> bool:
        tokens = list(spell(index_tokens(word)))
        freqs = corpus.doc_freqs(tokens)
        return not tokens or all(held(t, freqs, corpus) for t in tokens)

    if re.search(f"[{CJK_CHARS}]", clause):
        return tuple(
            AbsentThing(word, (word,), tag in _PROPER_TAGS)
            for word, tag in tagged(clause)
            if tag in _NOUN_TAGS and len(word) > 1 and informative(word) and not known(word)
        )
    found: list[AbsentThing] = []
    for run in _runs_en(clause):
        for j, (i, word) in enumerate(run):
            if known(word):
                continue
            # a code with digits is a slot's to judge (``identifier_slot``), never a name here
            lettered = not any(c.isdigit() for c in word)
            proper = lettered and ((word[0].isupper() and i > 0) or (word.isupper() and len(word) > 1))
            if proper or (j + 1 < len(run) and known(run[j + 1][1])):
                phrase = " ".join(w for _, w in run[j : j + 2]) if not proper else word
                found.append(AbsentThing(phrase, (word,), proper))
    return tuple(found)


def absent_places(
    clause: str, corpus: CorpusTerms, spell: Callable[[Sequence[str]], Sequence[str]]
) -> tuple[AbsentThing, ...]:
    """The places the asking clause names, in any case and either language ("canada", "加拿大"),
    that no readable passage names in any spelling, nor by a region holding them ("港澳台" holds
    "香港"): a page about shipping that lists where it delivers does not speak for a place it omits."""

    def named(spelling: str) -> bool:
        tokens = list(spell(index_tokens(spelling)))
        freqs = corpus.doc_freqs(tokens)
        return bool(tokens) and all(held(t, freqs, corpus) for t in tokens)

    return tuple(
        AbsentThing(place, (place,), proper=True, place=True)
        for place in askable_places(clause)
        if not any(named(s) for s in spellings(place))
    )


def _runs_en(clause: str) -> list[list[tuple[int, str]]]:
    """The clause's runs of words between function words, question words and fillers, each word
    with its place in the clause."""
    runs: list[list[tuple[int, str]]] = [[]]
    for i, match in enumerate(_WORD_EN.finditer(clause)):
        word = match.group()
        if word.lower() in _BREAKS_EN or not informative(stem(word.lower())):
            runs.append([])
        else:
            runs[-1].append((i, word))
    return [r for r in runs if r]


def held(term: str, freqs: Mapping[str, int], corpus: CorpusTerms) -> bool:
    """Whether some readable passage holds the term (``freqs``: the passage frequencies read), or,
    for a CJK word of three or more characters the segmenter may cut otherwise, all its
    character pairs."""
    if freqs.get(term, 0) > 0:
        return True
    if not is_cjk(term) or len(term) < 3:
        return False
    return corpus.together([term[i : i + 2] for i in range(len(term) - 1)]) > 0


_PHYSICAL = {
    name: (re.compile("|".join(cues), re.IGNORECASE), re.compile(rf"[0-9][0-9.,]*\s*{unit}", re.IGNORECASE))
    for name, (cues, unit) in PHYSICAL_MEASURES.items()
}


def physical_measure(text: str) -> str | None:
    """The physical measure a question asks for ("weight" for "how much does it weigh", "length"
    for "what are its dimensions"), or None."""
    return next((name for name, (cue, _) in _PHYSICAL.items() if cue.search(text)), None)


def states_measure(measure: str, texts: Sequence[str]) -> bool:
    """Whether any of the texts states a value in a unit of the measure ("320 g" for a weight)."""
    unit = _PHYSICAL[measure][1]
    return any(unit.search(t) for t in texts)


def _slip(term: str, text: str, corpus: CorpusTerms) -> bool:
    """A word no readable passage holds that is a slip of the question's writing or of its cut."""
    return unheld_weighs_nothing(term, corpus) or cut_across(term, text, corpus)


def informative_weights(
    text: str,
    terms: Sequence[str],
    weights: Mapping[str, float],
    corpus: CorpusTerms,
    asked: Collection[str],
    context_weight: float,
) -> dict[str, float]:
    """Term weights that say what the request depends on: a filler, or a slip no readable passage
    holds (a typo, a segmentation cut: ``unheld_weighs_nothing``, ``cut_across``), weighs 0; a word
    of the context around the asking clause (not in ``asked``, the asking clause's terms) weighs
    ``context_weight`` times its IDF, but a model number there keeps its weight. All as they were
    when every one would weigh 0."""
    freqs = corpus.doc_freqs(terms)
    out = {}
    for term in terms:
        weight = weights.get(term, 1.0)
        if not informative(term) or (not held(term, freqs, corpus) and _slip(term, text, corpus)):
            weight = 0.0
        elif term not in asked and not any(c.isdigit() for c in term):
            weight *= context_weight  # a model number in the context is what the answer is about
        out[term] = weight
    return out if any(out.values()) else dict(weights)
