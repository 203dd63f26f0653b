"""Conflict candidates: pairs of evidence windows that give different values for what the question asks.

The signal is narrow on purpose, because a false conflict costs an answer. Two windows are aligned
atom by atom (difflib's matching, compiled: ``cydifflib``); a place where they differ is a candidate
only when

- both sides are short values of one kind (a number with its unit, a date, a name, a yes/no) that
  the question asks for ("多少" a number, "when" a date, "who" a name);
- the text around it is the same on both sides: both say the same thing but for the value;
- it is the only difference in its sentence: a statement that also differs elsewhere (another
  year, another player) is another statement, not a contradiction;
- neither side is made of the question's own terms: "2018" against the asked "2019" is a scope;
- both windows hold the same question terms (give or take one), so they are about one subject,
  and the value's sentence, or one next to it, shares a term with the question;
- its sentence says something besides the value (a bare date line is metadata, not a statement).

When the question names an identifier (a model, a clause id, a version), two more rules apply: a
window or a statement about a look-alike of it ("QUOKKA000X" for "QUOKKA001X") is no side at all
(``policies.evidence.slot_scope``), and two sources stating different values for the identifier in different
words are candidates too (``policies.conflicts.slots``): alignment only sees the same words.

With no code, two documents giving the asked attribute values in different words are candidates
too (``policies.conflicts.attributes``). Set aside with their reason: a pair one document states, or
whose sides are about different things (``policies.conflicts.screen``). Settled by rule rather than
sent to an adjudicator: two sentences of one window, one document in two versions, a statement dated
later (``policies.conflicts.settle``). Every other pair found is a candidate for
``policies.conflicts.adjudication`` or the LLM.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, fields

from evidence_loop.policies.config import Policy
from evidence_loop.policies.conflicts.align import Region, Text, prepare, regions, share_context, text_pairs
from evidence_loop.policies.conflicts.attributes import attribute_candidates
from evidence_loop.policies.conflicts.meaning import Closeness, meaning_candidates
from evidence_loop.policies.conflicts.screen import screened
from evidence_loop.policies.conflicts.settle import settle_by_date, settle_by_rule
from evidence_loop.policies.conflicts.slots import slot_candidates
from evidence_loop.policies.conflicts.spans import cjk_word_bounds, is_scope, terms_in, value_kind
from evidence_loop.policies.evidence.slot_scope import about_other
from evidence_loop.policies.lexicon import CURRENCY_SIGNS, MONTHS, NEGATIONS, UNIT_ATOMS
from evidence_loop.policies.question.analysis import Question
from evidence_loop.policies.question.values import NUMERIC_KINDS, canonical, number_kind
from evidence_loop.policies.types import (
    ConflictCandidate,
    ConflictVerdict,
    DroppedCandidate,
    EvidenceView,
    Slot,
    ValueMention,
)
from evidence_loop.tools.tokenize import is_cjk

_MAX_WIDEN = 3  # characters a name may grow by at either end to reach a word edge
_SWITCHES = frozenset({"rival_ids", "slot_values", "attribute_values", "scopes", "meaning", "numbered"})


# more candidates read from the prepared windows (policies.conflicts.wider's, bound to its anchor)
# (a reason when the pair is set aside already, else None)
Anchored = Callable[[Question, Sequence[Text]], Iterable[tuple[ConflictCandidate, str | None]]]


@dataclass(frozen=True, slots=True)
class ConflictRules:
    """Thresholds and switches of the candidate search, as a policy sets them (``Policy.conflict_*``,
    ``Policy.rival_ids``, ``Policy.slot_values``; a policy recorded before a switch has it off)."""

    min_context: int
    max_value_atoms: int
    merge_gap: int
    min_question_terms: int
    max_term_mismatch: int
    min_statement_words: int
    polarity_reach: int
    min_sentence_similarity: float
    rival_ids: bool
    slot_values: bool
    attribute_values: bool = False  # the asked attribute's values in any words, no code needed
    scopes: bool = False  # one document, or two scopes: set aside (policies.conflicts.screen)
    meaning: bool = False  # statements close in meaning to the question (policies.conflicts.meaning)
    numbered: bool = False  # different numbered things or tiers: set aside (policies.conflicts.numbered)
    meaning_closeness: float = 0.7  # how close to the question a statement of the attribute is
    meaning_best: float = 0.8  # ... one of the two sides at least
    meaning_pair: float = 0.82  # the two statements' own cosine
    meaning_ratio: float = 30.0  # two sizes further apart than this factor measure two things

    @classmethod
    def of(cls, policy: Policy) -> ConflictRules:
        """The rules a policy sets: each threshold from its ``conflict_`` field, and the switches."""
        thresholds = {
            f.name: getattr(policy, f"conflict_{f.name}") for f in fields(cls) if f.name not in _SWITCHES
        }
        return cls(
            **thresholds,
            rival_ids=policy.rival_ids,
            slot_values=policy.slot_values,
            attribute_values=policy.attribute_values,
            scopes=policy.conflict_scopes,
            meaning=policy.conflict_meaning,
            numbered=policy.conflict_numbered,
        )

    @property
    def run(self) -> int:
        """The shortest aligned run a candidate implies: its ``min_context`` atoms lie on two sides."""
        return max(1, (self.min_context + 1) // 2)


@dataclass(frozen=True, slots=True)
class CandidateScan:
    """What the scan found: candidates for an adjudicator, pairs already settled by rule, and (with
    ``ConflictRules.scopes``) the pairs set aside as no disagreement, each with its reason."""

    candidates: tuple[ConflictCandidate, ...]
    resolved: tuple[ConflictVerdict, ...]
    dropped: tuple[DroppedCandidate, ...] = ()


def find_candidates(
    question: Question,
    views: Sequence[EvidenceView],
    rules: ConflictRules | None = None,
    anchored: Anchored | None = None,
) -> CandidateScan:
    """Pairs of windows stating different values for what the question asks; pairs a rule settles
    apart. ``rules``: the shipped policy's when not given; ``anchored``: the pairs of the statement
    that answers with other documents' statements close to it (``policies.conflicts.wider``)."""
    rules = rules or ConflictRules.of(Policy())
    if not question.kinds:
        return CandidateScan((), ())  # a how-to question asks for no value: no two values can disagree
    named = question.identifiers if rules.rival_ids else ()
    need = min(rules.min_question_terms, (len(question.subject_terms) + 1) // 2)
    ordered = sorted(
        (view for view in views if not about_other(named, (*view.section, view.text))),
        key=lambda view: view.evidence_id,
    )
    texts = [prepare(view, question.subject_terms, rules.run) for view in ordered]
    relevant = [text for text in texts if len(text.terms) >= need]
    found: dict[tuple[str, str, str, str], tuple[ConflictCandidate, EvidenceView, EvidenceView]] = {}
    for left, right in text_pairs(relevant, rules.run, rules.min_sentence_similarity):
        if len(left.terms ^ right.terms) > rules.max_term_mismatch or not share_context(left, right):
            continue
        for candidate in _candidates(left, right, question, rules):
            if not _about_other_side(candidate, left, right, named):
                key = (
                    left.view.evidence_id,
                    right.view.evidence_id,
                    candidate.left.norm,
                    candidate.right.norm,
                )
                found.setdefault(key, (candidate, left.view, right.view))
    if rules.slot_values:
        _add_slot_candidates(question, relevant, found, slot_candidates(question, relevant))
    if rules.attribute_values:
        # one term will do, a model number the question names too: a statement is read alone
        _add_slot_candidates(question, texts, found, attribute_candidates(question, texts))
    if rules.meaning:
        near = Closeness(rules.meaning_closeness, rules.meaning_best, rules.meaning_pair, rules.meaning_ratio)
        more = meaning_candidates(question, texts, near)
        _add_slot_candidates(question, texts, found, more, every_pair=True)
    aside: list[tuple[ConflictCandidate, str]] = []
    if anchored is not None:
        pairs = list(anchored(question, texts))
        aside = [(candidate, reason) for candidate, reason in pairs if reason is not None]
        _add_slot_candidates(question, texts, found, (c for c, r in pairs if r is None), every_pair=True)
    if rules.scopes:
        kept, dropped = screened(found.values(), question.text, question.subject_terms, rules.numbered)
        return _settle(kept, dated=True, dropped=[*aside, *dropped])
    return _settle(found.values(), dropped=aside)


def _about_other_side(candidate: ConflictCandidate, left: Text, right: Text, named: Sequence[Slot]) -> bool:
    """True when either side's sentence speaks of a look-alike of the question's identifier."""
    return any(
        about_other(
            named,
            (text.view.text[side.context_start - text.view.start : side.context_end - text.view.start],),
        )
        for side, text in ((candidate.left, left), (candidate.right, right))
        if side.context_start is not None and side.context_end is not None
    )


def _add_slot_candidates(
    question: Question,
    texts: Sequence[Text],
    found: dict[tuple[str, str, str, str], tuple[ConflictCandidate, EvidenceView, EvidenceView]],
    more: Iterable[ConflictCandidate],
    every_pair: bool = False,
) -> None:
    """Disagreements worded apart (the identifier's, the attribute's), for the pairs alignment and
    the rules before found nothing in (``every_pair``: in any pair, other values than those found)."""
    aligned = set() if every_pair else {(left, right) for left, right, _, _ in found}
    by_id = {text.view.evidence_id: text.view for text in texts}
    for candidate in more:
        left, right = by_id[candidate.left.evidence_id], by_id[candidate.right.evidence_id]
        if (left.evidence_id, right.evidence_id) not in aligned:
            key = (left.evidence_id, right.evidence_id, candidate.left.norm, candidate.right.norm)
            found.setdefault(key, (candidate, left, right))


def _settle(
    found: Iterable[tuple[ConflictCandidate, EvidenceView, EvidenceView]],
    dated: bool = False,
    dropped: Sequence[tuple[ConflictCandidate, str]] = (),
) -> CandidateScan:
    """Candidates for an adjudicator, and the pairs a rule settles unread (``dated``: a side that says
    from which date it applies is the newer rule, ``policies.conflicts.screen``)."""
    candidates, resolved = [], []
    for candidate, left, right in found:
        settled = settle_by_rule(candidate, left, right)
        if settled is None and dated:
            settled = settle_by_date(candidate, left, right)
        if settled is None:
            candidates.append(candidate)
        else:
            resolved.append(settled)
    aside = tuple(DroppedCandidate(candidate, reason) for candidate, reason in dropped)
    return CandidateScan(tuple(candidates), tuple(resolved), aside)


def _candidates(
    left: Text, right: Text, asked: Question, rules: ConflictRules
) -> Iterator[ConflictCandidate]:
    lnorms, rnorms = [a.norm for a in left.atoms], [a.norm for a in right.atoms]
    if (Counter(lnorms) & Counter(rnorms)).total() < rules.min_context:
        return  # too few shared atoms for any difference to sit inside one common statement
    differing = _differences(left, right, lnorms, rnorms, rules)
    for diff in differing:
        if _has_context(diff.region, len(lnorms), len(rnorms), rules) and _is_lone(diff, differing):
            candidate = _classify(diff.region, left, right, asked, rules)
            if candidate is not None:
                yield candidate


@dataclass(frozen=True, slots=True)
class _Difference:
    """A differing region with its values (canonical) and the sentences it touches on either side."""

    region: Region
    key: tuple[str, str]
    left: frozenset[int]
    right: frozenset[int]


def _differences(
    left: Text, right: Text, lnorms: list[str], rnorms: list[str], rules: ConflictRules
) -> list[_Difference]:
    """Regions where the two texts say different values (not one value written two ways)."""
    out = []
    for region in regions(lnorms, rnorms, rules.merge_gap):
        key = _key(region, lnorms, rnorms)
        if key[0] != key[1]:
            touched = (
                _sentences_touched(left, region.i1, region.i2),
                _sentences_touched(right, region.j1, region.j2),
            )
            out.append(_Difference(region, key, *touched))
    return out


def _key(region: Region, lnorms: list[str], rnorms: list[str]) -> tuple[str, str]:
    """Both sides' values in canonical form: equal when one value is merely written two ways."""
    return canonical(lnorms[region.i1 : region.i2]), canonical(rnorms[region.j1 : region.j2])


def _sentences_touched(text: Text, start: int, end: int) -> frozenset[int]:
    """Sentences a span of atoms lies in; an empty span (the other side inserted text) lies in none."""
    return frozenset(text.sentence_of[start:end])


def _is_lone(diff: _Difference, differing: list[_Difference]) -> bool:
    """True when nothing else differs in the region's sentences (a repeat of the same two values aside)."""
    return not any(
        other is not diff and other.key != diff.key and (diff.left & other.left or diff.right & other.right)
        for other in differing
    )


def _has_context(region: Region, left_len: int, right_len: int, rules: ConflictRules) -> bool:
    """Enough aligned atoms around the difference, on both sides unless it sits at an end of the text."""
    starts = region.before > 0 or (region.i1 == 0 and region.j1 == 0)
    ends = region.after > 0 or (region.i2 == left_len and region.j2 == right_len)
    return starts and ends and region.before + region.after >= rules.min_context


def _classify(
    region: Region, left: Text, right: Text, asked: Question, rules: ConflictRules
) -> ConflictCandidate | None:
    """The candidate a differing run makes, or None: no value, not what is asked, a scope, or off-topic."""
    lnorms, rnorms = [a.norm for a in left.atoms], [a.norm for a in right.atoms]
    i1, i2, j1, j2 = _widen_polarity(region, lnorms, rnorms, rules.polarity_reach)
    lspan, rspan = left.atoms[i1:i2], right.atoms[j1:j2]
    if not lspan or not rspan or max(len(lspan), len(rspan)) > rules.max_value_atoms:
        return None
    kind, terms = value_kind(lspan, rspan), asked.subject_terms
    if kind != "polarity" and (is_scope(lspan, terms) or is_scope(rspan, terms)):
        return None  # a yes/no question names one of its answers; other values made of its terms are scopes
    if kind in NUMERIC_KINDS:
        i1, j1 = _with_currency(lnorms, rnorms, i1, j1)
        i2, j2 = _with_unit(lnorms, rnorms, i2, j2)
        kind = number_kind([*lnorms[i1:i2], *rnorms[j1:j2]], _word_after(lnorms, i2))
    if kind == "named":
        i1, i2 = _whole_words(left, i1, i2)
        j1, j2 = _whole_words(right, j1, j2)
    if kind is None or kind not in asked.kinds:
        return None
    if not (_near_question(left, i1, i2, terms) or _near_question(right, j1, j2, terms)):
        return None
    if _words_besides(left, i1, i2) < rules.min_statement_words:
        return None
    return ConflictCandidate(_slot_label(left, i1), kind, _mention(left, i1, i2), _mention(right, j1, j2))


def _widen_polarity(
    region: Region, left: list[str], right: list[str], reach: int
) -> tuple[int, int, int, int]:
    """A bare negation ("不", "not") takes in the words it negates, so the values read "可以" / "不可以"."""
    i1, i2, j1, j2 = region.i1, region.i2, region.j1, region.j2
    inserted = right[j1:j2] if i1 == i2 else left[i1:i2] if j1 == j2 else []
    if not inserted or "".join(inserted) not in NEGATIONS:
        return i1, i2, j1, j2
    take = 0
    while take < reach and i2 + take < len(left) and j2 + take < len(right):
        if left[i2 + take] != right[j2 + take]:
            break
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


def _whole_words(text: Text, start: int, end: int) -> tuple[int, int]:
    """Widen a CJK name to word edges: alignment may have kept back a shared last character ("辛格")."""
    sentence = text.sentences[text.sentence_of[start]]
    view = text.view
    bounds = cjk_word_bounds(
        view.text[sentence.start - view.start : sentence.end - view.start], sentence.start
    )
    same = text.sentence_of[start]
    for _ in range(_MAX_WIDEN):
        if end < len(text.atoms) and text.atoms[end - 1].end not in bounds and _joins(text, end, same):
            end += 1
    for _ in range(_MAX_WIDEN):
        if start > 0 and text.atoms[start].start not in bounds and _joins(text, start - 1, same):
            start -= 1
    return start, end


def _joins(text: Text, index: int, sentence: int) -> bool:
    atom = text.atoms[index]
    return text.sentence_of[index] == sentence and len(atom.norm) == 1 and is_cjk(atom.norm)


def _word_after(norms: list[str], end: int) -> list[str]:
    """Up to three letters or CJK characters right after a value, up to the first other atom."""
    word: list[str] = []
    for norm in norms[end : end + 3]:
        if not norm.isalpha():
            break
        word.append(norm)
    return word


def _with_currency(left: list[str], right: list[str], i1: int, j1: int) -> tuple[int, int]:
    """Take in a currency sign both sides put before the value ("$" + "1.65")."""
    if i1 and j1 and left[i1 - 1] == right[j1 - 1] and left[i1 - 1] in CURRENCY_SIGNS:
        return i1 - 1, j1 - 1
    return i1, j1


def _near_question(text: Text, start: int, end: int, terms: frozenset[str]) -> bool:
    """True when the value's sentence, or one next to it, shares a term with the question."""
    if not terms:
        return True
    near = {i + step for i in _sentences_touched(text, start, end) for step in (-1, 0, 1)}
    norms = [atom.norm for atom, owner in zip(text.atoms, text.sentence_of, strict=True) if owner in near]
    return bool(terms_in(norms, terms))


def _words_besides(text: Text, start: int, end: int) -> int:
    """Words (a CJK character counts one) of the value's sentence outside the value, dates left out."""
    sentence = text.sentence_of[start]
    return sum(
        1
        for i, atom in enumerate(text.atoms)
        if text.sentence_of[i] == sentence
        and not start <= i < end
        and atom.norm.isalpha()
        and atom.norm not in MONTHS
    )


def _slot_label(text: Text, start: int) -> str:
    """The slot in words: the text just before the value, within its sentence ("人口出生率为 …")."""
    sentence = text.sentence_of[start]
    lead = [i for i in range(max(0, start - 6), start) if text.sentence_of[i] == sentence]
    if not lead:
        return "…"
    view = text.view
    return view.text[text.atoms[lead[0]].start - view.start : text.atoms[lead[-1]].end - view.start] + " …"


def _mention(text: Text, start: int, end: int) -> ValueMention:
    view = text.view
    first, last = text.atoms[start], text.atoms[end - 1]
    quote = view.text[first.start - view.start : last.end - view.start]
    sentence = text.sentences[text.sentence_of[start]]
    return ValueMention(
        evidence_id=view.evidence_id,
        doc_id=view.doc_id,
        version=view.version,
        value=quote,
        norm=canonical([atom.norm for atom in text.atoms[start:end]]),
        start=first.start,
        end=last.end,
        quote=quote,
        context_start=sentence.start,
        context_end=sentence.end,
    )
