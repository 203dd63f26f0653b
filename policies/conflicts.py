"""Conflict candidates: pairs of evidence windows that give different values for what the question asks.

The signal is narrow on purpose, because a false conflict costs an answer. Two windows are aligned
atom by atom (``difflib``); a place where they differ is a candidate only when

- it is short and both sides are values of one kind (a number with its unit, a date, a name, a
  yes/no) that the question asks for ("多少" a number, "when" a date, "who" a name);
- the text around it is the same on both sides, so both say the same thing but for the value;
- it is the only difference in that sentence: a statement that also differs elsewhere (another
  year, another player) is another statement, not a contradiction;
- it does not touch a term of the question: "2018" against the asked "2019" is a scope;
- the sentence, or one next to it, shares a term with the question.

Settled here by rule, not sent to an adjudicator: two sentences of one window (the passage states
both: two scopes of one source), and two versions of one document where one is current (the
current one wins). Everything else found is a candidate for ``policies.adjudication`` or the LLM.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import lru_cache
from itertools import combinations

from policies.conflict_values import (
    MONTHS,
    NEGATIONS,
    UNIT_ATOMS,
    Atom,
    Sentence,
    ValueKind,
    asked_kinds,
    atoms,
    canonical,
    sentences,
    value_kind,
)
from policies.types import ConflictCandidate, ValueMention, Verdict
from tools.tokenize import STOPWORDS_EN, STOPWORDS_ZH, index_tokens

_CURRENCY = frozenset({"$", "¥", "￥", "€", "£"})


@dataclass(frozen=True, slots=True)
class EvidenceView:
    """An evidence window as the conflict check sees it; ``text == doc_text[start:end]``."""

    evidence_id: str
    doc_id: str
    version: str
    is_current: bool
    section: tuple[str, ...]
    start: int
    end: int
    text: str


@dataclass(frozen=True, slots=True)
class ConflictRules:
    """Thresholds of the candidate search, tuned on counterfactual fact sets and their clean controls."""

    min_context: int = 8  # aligned atoms around a difference: enough to be "the same statement"
    max_value_atoms: int = 12  # a value is short
    merge_gap: int = 2  # differing runs this close are one value ("Tampa, Florida")
    min_question_terms: int = 2  # question terms each window must share
    polarity_reach: int = 2  # atoms after a negation that belong to the negated value
    min_sentence_similarity: float = 0.6  # two sentences of one window compared at all
    max_term_mismatch: int = 1  # question terms one window has and the other lacks: more reads as two subjects
    min_statement_words: int = 3  # words around the value in its sentence: a statement, not a bare date line


@dataclass(frozen=True, slots=True)
class CandidateScan:
    """What the scan found: candidates for an adjudicator, and pairs already settled by rule."""

    candidates: tuple[ConflictCandidate, ...]
    resolved: tuple[Verdict, ...]


@dataclass(frozen=True, slots=True)
class _Text:
    """Atoms to align, each with the index of its sentence."""

    view: EvidenceView
    atoms: tuple[Atom, ...]
    sentence_of: tuple[int, ...]
    sentences: tuple[Sentence, ...]


@dataclass(frozen=True, slots=True)
class _Region:
    """A differing run of an alignment: atom ranges on both sides and the aligned atoms around it."""

    i1: int
    i2: int
    j1: int
    j2: int
    before: int
    after: int


@dataclass(frozen=True, slots=True)
class _Question:
    terms: frozenset[str]
    kinds: frozenset[ValueKind]


def question_terms(question: str) -> frozenset[str]:
    """Terms a text must share to be about the question: CJK bigrams, words and numbers."""
    norms = [atom.norm for atom in atoms(question)]
    terms: set[str] = set()
    for first, second in zip(norms, [*norms[1:], ""], strict=True):
        if _is_cjk(first):
            if _is_cjk(second):
                terms.add(first + second)
        elif first.isalnum() and first not in STOPWORDS_EN:
            terms.add(_stem(first))
    return frozenset(term for term in terms if term not in STOPWORDS_ZH)


@lru_cache(maxsize=65536)
def _stem(norm: str) -> str:
    """An English word's stem, so "Presidents" meets "president"; anything else as it is."""
    if not norm.isascii() or not norm.isalpha():
        return norm
    stems = index_tokens(norm)
    return stems[0] if stems else norm


def _is_cjk(norm: str) -> bool:
    return len(norm) == 1 and "\u3400" <= norm <= "\u9fff"


def _term_count(norms: Sequence[str], terms: frozenset[str]) -> int:
    joined = "".join(norms)
    words = {_stem(norm) for norm in norms}
    return sum(1 for term in terms if term in words or (not term.isascii() and term in joined))


def _terms_of(text: _Text, terms: frozenset[str]) -> frozenset[str]:
    """The question terms a text contains."""
    norms = [atom.norm for atom in text.atoms]
    return frozenset(term for term in terms if _term_count(norms, frozenset({term})))


def find_candidates(
    question: str, views: Sequence[EvidenceView], rules: ConflictRules = ConflictRules()
) -> CandidateScan:
    """Pairs of windows that state different values for what the question asks, and the pairs settled by rule."""
    asked = _Question(question_terms(question), asked_kinds(question))
    need = min(rules.min_question_terms, len(asked.terms))
    texts = [_prepare(view) for view in sorted(views, key=lambda view: view.evidence_id)]
    relevant = [t for t in texts if _term_count([a.norm for a in t.atoms], asked.terms) >= need]
    candidates: dict[tuple[str, str, str, str], ConflictCandidate] = {}
    resolved: dict[tuple[str, str, str, str], Verdict] = {}
    for left, right in _text_pairs(relevant, rules):
        if len(_terms_of(left, asked.terms) ^ _terms_of(right, asked.terms)) > rules.max_term_mismatch:
            continue
        for candidate in _candidates(left, right, asked, rules):
            key = (left.view.evidence_id, right.view.evidence_id, candidate.left.norm, candidate.right.norm)
            settled = settle_by_rule(candidate, left.view, right.view)
            if settled is None:
                candidates.setdefault(key, candidate)
            else:
                resolved.setdefault(key, settled)
    return CandidateScan(tuple(candidates.values()), tuple(resolved.values()))


def settle_by_rule(candidate: ConflictCandidate, left: EvidenceView, right: EvidenceView) -> Verdict | None:
    """The verdict a rule gives without reading: one passage stating both values, or two versions of one document."""
    if left.evidence_id == right.evidence_id:
        return Verdict(
            candidate,
            "compatible",
            "rules",
            "one passage states both values; read as two scopes of the same source",
            scope=f"both within {left.evidence_id}",
        )
    if left.doc_id == right.doc_id and left.version != right.version and left.is_current != right.is_current:
        current, older = (left, right) if left.is_current else (right, left)
        return Verdict(
            candidate,
            "superseded",
            "rules",
            f"version {current.version} of {current.doc_id} is current; version {older.version} is older",
            superseded_by=current.evidence_id,
        )
    return None


def _prepare(view: EvidenceView) -> _Text:
    found = sentences(view.text, view.start)
    return _Text(
        view,
        tuple(atom for s in found for atom in s.atoms),
        tuple(index for index, s in enumerate(found) for _ in s.atoms),
        found,
    )


def _text_pairs(texts: Sequence[_Text], rules: ConflictRules) -> Iterator[tuple[_Text, _Text]]:
    """Every two windows, and every two near-identical sentences inside one window."""
    for text in texts:
        for a, b in combinations(text.sentences, 2):
            matcher = SequenceMatcher(None, [x.norm for x in a.atoms], [x.norm for x in b.atoms], autojunk=False)
            if matcher.ratio() >= rules.min_sentence_similarity:
                yield _Text(text.view, a.atoms, (0,) * len(a.atoms), (a,)), _Text(text.view, b.atoms, (0,) * len(b.atoms), (b,))
    yield from combinations(texts, 2)


def _candidates(left: _Text, right: _Text, asked: _Question, rules: ConflictRules) -> Iterator[ConflictCandidate]:
    lnorms, rnorms = [a.norm for a in left.atoms], [a.norm for a in right.atoms]
    matcher = SequenceMatcher(None, lnorms, rnorms, autojunk=False)
    regions = [r for r in _regions(matcher, rules.merge_gap) if _differs(r, lnorms, rnorms)]
    for region in regions:
        if not _is_lone_statement(region, regions, left, right, lnorms, rnorms):
            continue
        if not _has_context(region, len(lnorms), len(rnorms), rules.min_context):
            continue
        candidate = _classify(region, left, right, asked, rules)
        if candidate is not None:
            yield candidate


def _regions(matcher: SequenceMatcher[str], gap: int) -> list[_Region]:
    """Differing runs of an alignment, merged when at most ``gap`` aligned atoms separate them."""
    ops = matcher.get_opcodes()
    merged: list[list[int]] = []
    for index, (tag, i1, i2, j1, j2) in enumerate(ops):
        if tag == "equal":
            continue
        before = ops[index - 1][2] - ops[index - 1][1] if index and ops[index - 1][0] == "equal" else 0
        after = ops[index + 1][2] - ops[index + 1][1] if index + 1 < len(ops) and ops[index + 1][0] == "equal" else 0
        if merged and i1 - merged[-1][1] <= gap and j1 - merged[-1][3] <= gap:
            merged[-1][1], merged[-1][3], merged[-1][5] = i2, j2, after
        else:
            merged.append([i1, i2, j1, j2, before, after])
    return [_Region(*values) for values in merged]


def _differs(region: _Region, lnorms: list[str], rnorms: list[str]) -> bool:
    """False when both sides are one value written two ways ("Oct" / "October", "七十" / "70")."""
    return canonical(tuple(lnorms[region.i1 : region.i2])) != canonical(tuple(rnorms[region.j1 : region.j2]))


def _pair_key(region: _Region, lnorms: list[str], rnorms: list[str]) -> tuple[str, str]:
    return canonical(tuple(lnorms[region.i1 : region.i2])), canonical(tuple(rnorms[region.j1 : region.j2]))


def _sentences_touched(text: _Text, start: int, end: int) -> set[int]:
    """Sentences a span of atoms lies in; an empty span belongs to the atoms on both sides of it."""
    lo, hi = (start, end) if end > start else (max(start - 1, 0), min(start + 1, len(text.atoms)))
    return {text.sentence_of[i] for i in range(lo, hi)} if text.atoms else set()


def _is_lone_statement(
    region: _Region, regions: list[_Region], left: _Text, right: _Text, lnorms: list[str], rnorms: list[str]
) -> bool:
    """True when no other value differs in the same sentence (repeating the same two values is fine)."""
    own_left = _sentences_touched(left, region.i1, region.i2)
    own_right = _sentences_touched(right, region.j1, region.j2)
    key = _pair_key(region, lnorms, rnorms)
    for other in regions:
        if other is region or _pair_key(other, lnorms, rnorms) == key:
            continue
        if own_left & _sentences_touched(left, other.i1, other.i2) or own_right & _sentences_touched(
            right, other.j1, other.j2
        ):
            return False
    return True


def _has_context(region: _Region, left_len: int, right_len: int, minimum: int) -> bool:
    """Enough aligned atoms around the difference, on both sides unless it sits at an end of the text."""
    at_start = region.i1 == 0 and region.j1 == 0
    at_end = region.i2 == left_len and region.j2 == right_len
    return region.before + region.after >= minimum and (region.before > 0 or at_start) and (region.after > 0 or at_end)


def _classify(
    region: _Region, left: _Text, right: _Text, asked: _Question, rules: ConflictRules
) -> ConflictCandidate | None:
    """The candidate a differing run makes, or None when it is no value, not asked for, or a scope."""
    lnorms, rnorms = [a.norm for a in left.atoms], [a.norm for a in right.atoms]
    i1, i2, j1, j2 = _widen_polarity(region, lnorms, rnorms, rules.polarity_reach)
    lspan, rspan = left.atoms[i1:i2], right.atoms[j1:j2]
    if not lspan or not rspan or max(len(lspan), len(rspan)) > rules.max_value_atoms:
        return None
    if _is_scope(lspan, asked.terms) or _is_scope(rspan, asked.terms):
        return None
    i0, j0 = _with_currency(lnorms, rnorms, i1, j1)
    end_i, end_j = _with_unit(lnorms, rnorms, i2, j2)
    kind = value_kind(lspan, rspan, tuple(lnorms[i2:end_i]))
    if kind is None or kind not in asked.kinds:
        return None
    if not _near_question(left, i1, i2, asked.terms) and not _near_question(right, j1, j2, asked.terms):
        return None
    if _statement_size(left, i0, end_i) < rules.min_statement_words:
        return None
    return ConflictCandidate(
        slot=_slot_label(left, i0),
        kind=kind,
        left=_mention(left, i0, end_i),
        right=_mention(right, j0, end_j),
    )


def _widen_polarity(region: _Region, left: list[str], right: list[str], reach: int) -> tuple[int, int, int, int]:
    """A bare negation ("不", "not") takes in the words it negates, so the values read "可以" / "不可以"."""
    i1, i2, j1, j2 = region.i1, region.i2, region.j1, region.j2
    inserted = right[j1:j2] if i1 == i2 else left[i1:i2] if j1 == j2 else []
    if not inserted or "".join(inserted) not in NEGATIONS:
        return i1, i2, j1, j2
    take = 0
    while take < reach and i2 + take < len(left) and j2 + take < len(right) and left[i2 + take] == right[j2 + take]:
        take += 1
        if left[i2 + take - 1].isascii():
            break  # one English word is the whole negated value
    return i1, i2 + take, j1, j2 + take


def _with_unit(left: list[str], right: list[str], i2: int, j2: int) -> tuple[int, int]:
    """Extend both value ends over unit atoms they share ("1361" + "万" + "人")."""
    for _ in range(2):
        if i2 < len(left) and j2 < len(right) and left[i2] == right[j2] and left[i2] in UNIT_ATOMS:
            i2, j2 = i2 + 1, j2 + 1
    return i2, j2


def _with_currency(left: list[str], right: list[str], i1: int, j1: int) -> tuple[int, int]:
    """Take in a currency sign both sides put before the value ("$" + "1.65")."""
    if i1 and j1 and left[i1 - 1] == right[j1 - 1] and left[i1 - 1] in _CURRENCY:
        return i1 - 1, j1 - 1
    return i1, j1


def _is_scope(span: Sequence[Atom], terms: frozenset[str]) -> bool:
    """True when a side's value is made of the question's own terms: "2018" against the asked "2019" is a scope."""
    norms = [atom.norm for atom in span if atom.norm.isalnum() and atom.norm not in UNIT_ATOMS]
    if not norms:
        return False
    bigrams = {a + b for a, b in zip(norms, norms[1:], strict=False)}
    return all(_stem(norm) in terms or any(norm in bigram for bigram in bigrams & terms) for norm in norms)


def _near_question(text: _Text, start: int, end: int, terms: frozenset[str]) -> bool:
    """True when the value's sentence, or one next to it, shares a term with the question."""
    if not terms:
        return True
    touched = _sentences_touched(text, start, end)
    near = {i + step for i in touched for step in (-1, 0, 1)}
    norms = [a.norm for a, s in zip(text.atoms, text.sentence_of, strict=True) if s in near]
    return _term_count(norms, terms) > 0


def _statement_size(text: _Text, start: int, end: int) -> int:
    """Words (CJK characters count one each) of the value's sentence outside the value, dates left out."""
    sentence = text.sentence_of[start]
    return sum(
        1
        for i, atom in enumerate(text.atoms)
        if text.sentence_of[i] == sentence
        and not start <= i < end
        and atom.norm.isalpha()
        and atom.norm not in MONTHS
    )


def _slot_label(text: _Text, start: int) -> str:
    """The slot in words: the shared text just before the value, within its sentence ("人口出生率为 …")."""
    sentence = text.sentence_of[start] if start < len(text.atoms) else -1
    lead = [i for i in range(max(0, start - 6), start) if text.sentence_of[i] == sentence]
    if not lead:
        return "…"
    first, last = text.atoms[lead[0]], text.atoms[lead[-1]]
    view = text.view
    return view.text[first.start - view.start : last.end - view.start] + " …"


def _mention(text: _Text, start: int, end: int) -> ValueMention:
    view = text.view
    first, last = text.atoms[start], text.atoms[end - 1]
    quote = view.text[first.start - view.start : last.end - view.start]
    sentence = text.sentences[text.sentence_of[start]]
    return ValueMention(
        evidence_id=view.evidence_id,
        doc_id=view.doc_id,
        version=view.version,
        value=quote,
        norm=canonical(tuple(atom.norm for atom in text.atoms[start:end])),
        start=first.start,
        end=last.end,
        quote=quote,
        context_start=sentence.start,
        context_end=sentence.end,
    )
