"""What a question asks for, analysed once per run: every check reads the ``Question``, not its text.

- **slots**: what it names that the evidence must contain (``policies.question.slots``), and among them the
  identifiers (a model, a clause id) whose look-alikes are other subjects (``policies.evidence.slot_scope``);
- **terms**: its content words as the index tokenizes them, for coverage and sliding: question
  words ("多久", "explain") and the measure of "how long/many/much" left out;
- **subject terms**: its content words as compared texts are read (atoms, English stemmed), for the
  conflict check: single CJK characters left out, since one character of a subject is in every text;
- **kinds**: the kinds of value it asks for ("when" a date, "多少" a number, "who" a name, a yes/no a
  polarity; any kind when nothing says); **asks** the numeric ones the answer-type penalty reads;
  **factoid** whether it asks for a fact (selection reads a few more short passages for one);
  **measure** the one kind of value its measure words ask for ("how long"/"多久" a duration, "how
  much is"/"多少钱" an amount, "when"/"什么时候" a date, "how many"/"几个" a count), which the answer
  quotes a unit stating (``policies.decision.quotes``); empty when no word asks for one kind;
- **own numbers**: the numbers it writes itself (its scope: a year, a model's number);
- **sides**: the named things a comparison question compares (``policies.question.sides``), each of
  which the evidence must speak for.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from evidence_loop.policies.config import Policy
from evidence_loop.policies.lexicon import (
    ASKING_WORDS_ZH,
    MEASURE_AMOUNT_EN,
    MEASURE_AMOUNT_ZH,
    MEASURE_COUNT_EN,
    MEASURE_COUNT_ZH,
    MEASURE_CUES,
    MEASURE_DATE_EN,
    MEASURE_DATE_ZH,
    MEASURE_DURATION_EN,
    MEASURE_DURATION_ZH,
    MEASURE_NUMBER_EN,
    MEASURE_NUMBER_ZH,
    MEASURE_PERCENT_EN,
    MEASURE_PERCENT_ZH,
    QUESTION_PREFIXES_ZH,
    QUESTION_WORDS_EN,
    QUESTION_WORDS_ZH,
    SMALL_TALK,
)
from evidence_loop.policies.question.named import (
    AbsentThing,
    CorpusTerms,
    absent_places,
    absent_things,
    asking_clause,
    identifier_slot,
    informative_weights,
    physical_measure,
    rate_period,
    with_variants,
)
from evidence_loop.policies.question.sides import Side, comparison_sides
from evidence_loop.policies.question.slots import extract_slots, identifiers
from evidence_loop.policies.question.values import ALL_KINDS, NUMERIC_KINDS, ValueKind, atoms, stem
from evidence_loop.policies.types import Slot
from evidence_loop.tools.tokenize import CJK_CHARS, STOPWORDS_EN, STOPWORDS_ZH, index_tokens, is_cjk, words

if TYPE_CHECKING:
    from evidence_loop.tools.search.dense import UnitCosines


@dataclass(frozen=True, slots=True)
class Question:
    """A question analysed once per run; every check reads it."""

    text: str
    slots: tuple[Slot, ...]
    terms: tuple[str, ...]
    weights: tuple[float, ...] = ()
    kinds: frozenset[ValueKind] = frozenset()
    asks: frozenset[ValueKind] = frozenset()
    factoid: bool = False
    own_numbers: frozenset[str] = frozenset()
    subject_terms: frozenset[str] = frozenset()
    identifiers: tuple[Slot, ...] = ()
    sides: tuple[Side, ...] = ()  # a comparison's named sides (empty: the question compares nothing)
    measure: frozenset[ValueKind] = frozenset()  # the one kind of value its measure words ask for
    # the things its asking clause names that no readable passage names (policies.question.named);
    # empty when the corpus was not read for them
    absent: tuple[AbsentThing, ...] = ()
    # the one measure it asks for, when its words say which ("how much does it cost" an amount, "how
    # long" a duration, "how many" a count; ``measured_kinds``), read only when the reading asks
    measures: frozenset[ValueKind] = frozenset()
    physical: str | None = None  # a physical measure it asks for ("weight", "length"), read likewise

    # the question's cosine with each unit the caller may read (None: lexical recall only)
    cosines: UnitCosines | None = field(default=None, compare=False)


Spell = Callable[[Sequence[str]], Sequence[str]]
Weigh = Callable[[Sequence[str]], Mapping[str, float]]


@dataclass(frozen=True, slots=True)
class Reading:
    """How the question is read against its corpus (``policies.config.Policy`` switches; all off
    for runs recorded before them): ``identifiers`` keeps a letters-and-digits token as a model
    number only when it is one (``policies.question.named.identifier_slot``); ``informative`` weighs
    fillers and words no readable passage holds at 0 and the context around the asking clause at
    ``context_weight``; ``absent`` finds the things asked about that no passage names."""

    identifiers: bool = False
    informative: bool = False
    context_weight: float = 1.0
    absent: bool = False
    measures: bool = False
    places: bool = False


def _against(
    text: str,
    written: Sequence[str],
    terms: Sequence[str],
    slots: tuple[Slot, ...],
    weights: dict[str, float],
    corpus: CorpusTerms,
    reading: Reading,
    spell: Spell | None,
) -> tuple[tuple[Slot, ...], tuple[AbsentThing, ...], dict[str, float]]:
    """The question's slots, absent things and term weights, read against its corpus as ``reading``
    says (``policies.question.named``)."""
    if reading.identifiers:
        codes = corpus.mixed_tokens()
        slots = tuple(
            s for s in with_variants(text, slots) if identifier_slot(s, codes) and not rate_period(s, text)
        )
    absent: tuple[AbsentThing, ...] = ()
    clause = asking_clause(text)
    if reading.absent:
        absent = absent_things(clause, corpus, spell or (lambda found: found))
    if reading.places:  # a place found here replaces the same word found as a thing
        places = absent_places(clause, corpus, spell or (lambda found: found))
        named = {p.phrase.lower() for p in places}
        absent = (*(t for t in absent if t.phrase.lower() not in named), *places)
    if reading.informative and weights:
        spelled = dict(zip(written, spell(written), strict=True)) if spell is not None else {}
        asked = {spelled.get(t, t) for t in content_terms(clause)}
        weights = informative_weights(text, terms, weights, corpus, asked, reading.context_weight)
    return slots, absent, weights


def reading_of(policy: Policy) -> Reading:
    """How a policy reads questions against their corpus."""
    return Reading(
        policy.identifier_slots,
        policy.informative_terms,
        policy.context_weight,
        policy.absent_things,
        policy.value_signal or policy.deferring_references,
        policy.absent_things and policy.refuse_absent_places,
    )


def analyse(
    text: str,
    weigh: Weigh | None = None,
    spell: Spell | None = None,
    cosines: UnitCosines | None = None,
    corpus: CorpusTerms | None = None,
    reading: Reading = Reading(),
) -> Question:
    """Everything a run reads of a question; ``weigh`` gives each term its corpus IDF, ``spell``
    reads a misspelled term as the corpus word meant ("shedule" as "schedule"), ``cosines`` says
    how close each unit is to the question's meaning, ``corpus`` what the readable passages hold
    (read as ``reading`` says)."""
    written = content_terms(text)
    terms = tuple(dict.fromkeys(spell(written))) if spell is not None else written
    weights = dict(weigh(terms)) if weigh is not None else {}
    slots = extract_slots(text)
    absent: tuple[AbsentThing, ...] = ()
    if corpus is not None:
        slots, absent, weights = _against(text, written, terms, slots, weights, corpus, reading, spell)
    kinds = asked_kinds(text)
    return Question(
        text,
        slots,
        terms,
        tuple(weights.get(t, 1.0) for t in terms) if weights else (),
        kinds,
        _numeric_asks(kinds),
        _is_factoid(kinds),
        own_numbers(text),
        subject_terms(text),
        identifiers(slots),
        comparison_sides(text),
        asked_measure(text),
        absent,
        measured_kinds(text) if reading.measures else frozenset(),
        physical_measure(text) if reading.measures else None,
        cosines,
    )


_QUESTION_TOKENS_EN: frozenset[str] = frozenset(t for w in QUESTION_WORDS_EN for t in index_tokens(w))
_HOW_MEASURE_RE = re.compile(r"\bhow\s+(?:long|many|much|often|far|soon|old)\b", re.IGNORECASE)


def is_question_word(word: str) -> bool:
    """True for a Chinese or English word (normalised; English may be stemmed) that only makes a question."""
    if is_cjk(word):
        return word in QUESTION_WORDS_ZH or word.startswith(QUESTION_PREFIXES_ZH)
    return word in QUESTION_WORDS_EN or word in _QUESTION_TOKENS_EN


def content_terms(text: str) -> tuple[str, ...]:
    """The index tokens of a text minus question words, deduplicated in order of appearance.

    "How long/many/much ..." asks for a measure: the measure word is part of the question, not a
    term the evidence must repeat.
    """
    stripped = _HOW_MEASURE_RE.sub(" ", text)
    terms = (t for t in index_tokens(stripped) if not is_question_word(t))
    return tuple(dict.fromkeys(terms))


_SMALL_TALK_TOKENS: frozenset[str] = frozenset(t for w in SMALL_TALK for t in index_tokens(w)) | SMALL_TALK


def contentless(question: Question) -> bool:
    """True when the question names nothing to look for in either language: no slot, and no content
    word once question words, stop words and greetings are left out ("?", "the", "what?", "请问？")."""
    return not question.slots and all(t in _SMALL_TALK_TOKENS for t in question.terms)


# Digits and CJK characters written together ("2018年") are two words to the segmenter.
_SCRIPT_BOUNDARY = re.compile(
    rf"(?<=[{CJK_CHARS}])(?=[^\W{CJK_CHARS}])|(?<=[^\W{CJK_CHARS}])(?=[{CJK_CHARS}])"
)


def subject_terms(text: str) -> frozenset[str]:
    """Content words of a question as compared texts are read: segmented CJK words of two or more
    characters and stemmed English words and numbers; stop words and asking words ("多少", "谁") out."""
    terms: set[str] = set()
    for word in words(_SCRIPT_BOUNDARY.sub(" ", text)):
        if is_cjk(word[0]):
            if len(word) > 1 and word not in STOPWORDS_ZH and word not in ASKING_WORDS_ZH:
                terms.add(word)
        elif word.isalnum() and word not in STOPWORDS_EN:
            terms.add(stem(word))
    return frozenset(terms)


def own_numbers(text: str) -> frozenset[str]:
    """The numbers the question itself writes (its scope: a year, a model's number)."""
    return frozenset(a.norm.replace(",", "") for a in atoms(text) if a.norm[0].isdigit())


WHEN: frozenset[ValueKind] = frozenset({"date", "count"})  # what ``asked_kinds`` gives for "when"
# (the words that ask, the kinds of value they ask for)
_ASKING: tuple[tuple[str, frozenset[ValueKind]], ...] = (
    (
        r"什么时候|何时|哪一?年|哪天|几月|几号|日期|时间|\bwhen\b|\bwhat (?:year|date|day|time)\b"
        r"|\bwhich year\b|\bdate\b",
        WHEN,
    ),
    (
        r"多少|几|多[大长久高重远]|比例|比率|[率额]|\bhow (?:many|much|long|old|far|big)\b"
        r"|\bwhat (?:percentage|amount|number|price|rate)\b|\bcosts?\b",
        NUMERIC_KINDS,
    ),
    (r"谁|哪里|哪儿|在哪|哪个?(?:城市|国家|地方|国)|\b(?:who|whom|whose|where)\b", frozenset({"named"})),
    (
        r"是否|能否|可否|能不能|可不可以|是不是|有没有|吗[？?]?$|^(?:can|could|is|are|does|do|will|may|should)\b",
        frozenset({"polarity"}),
    ),
)
_ASKS = tuple((re.compile(words, re.IGNORECASE), kinds) for words, kinds in _ASKING)
_HOW_TO_RE = re.compile(r"如何|怎么|怎样|怎麼|\bhow (?:to|do|does|can|should)\b", re.IGNORECASE)


def asked_kinds(text: str) -> frozenset[ValueKind]:
    """The kinds of value a question asks for.

    "When"/"什么时候" asks for a date (or a bare year, read as a count), "how many"/"多少" for a
    number, "who"/"where"/"谁"/"在哪" for a name, a yes/no question for a polarity; with several
    cues, all of them. A how-to question with none of these asks for a procedure, no value; any
    other question ("what"/"什么" alone) may ask for any kind.
    """
    text = text.strip()
    kinds: frozenset[ValueKind] = frozenset()
    for pattern, asked in _ASKS:
        if pattern.search(text):
            kinds |= asked
    if kinds:
        return kinds
    return frozenset() if _HOW_TO_RE.search(text) else ALL_KINDS


def _phrases(phrases: Sequence[str]) -> re.Pattern[str]:
    """English phrases matched as whole words, any case, any run of spaces between words."""
    alternatives = sorted((r"\s+".join(map(re.escape, p.split())) for p in phrases), key=len, reverse=True)
    return re.compile(r"\b(?:" + "|".join(alternatives) + r")\b", re.IGNORECASE)


# (the kind, its English phrases, its Chinese words), tried in this order
_MEASURES: tuple[tuple[ValueKind, re.Pattern[str], tuple[str, ...]], ...] = (
    ("duration", _phrases(MEASURE_DURATION_EN), MEASURE_DURATION_ZH),
    ("percentage", _phrases(MEASURE_PERCENT_EN), MEASURE_PERCENT_ZH),
    ("amount", _phrases(MEASURE_AMOUNT_EN), MEASURE_AMOUNT_ZH),
    ("date", _phrases(MEASURE_DATE_EN), MEASURE_DATE_ZH),
    ("count", _phrases(MEASURE_COUNT_EN), MEASURE_COUNT_ZH),
)
_ANY_NUMBER = (_phrases(MEASURE_NUMBER_EN), MEASURE_NUMBER_ZH)
ANY_NUMBER: frozenset[ValueKind] = NUMERIC_KINDS - {"date"}


def asked_measure(text: str) -> frozenset[ValueKind]:
    """The one kind of value a question's measure words ask for: a duration ("how long", "多久"),
    a percentage ("比例"), an amount ("how much is", "多少钱", "price"), a date ("when", "什么时候")
    or a count ("how many", "几个"); the first of these that a word asks for; a number of any kind
    but a date for "多少" or "how much" alone; empty when nothing asks for a number ("what is X")."""
    for kind, english, chinese in _MEASURES:
        if english.search(text) or any(word in text for word in chinese):
            return frozenset({kind})
    english, chinese = _ANY_NUMBER
    if english.search(text) or any(word in text for word in chinese):
        return ANY_NUMBER
    return frozenset()


_MEASURE_CUES = tuple((kind, re.compile("|".join(cues), re.IGNORECASE)) for kind, cues in MEASURE_CUES)


def measured_kinds(text: str) -> frozenset[ValueKind]:
    """The one measure the question asks for when its words say which: an amount ("how much does it
    cost", "多少钱"), a duration ("how long", "多久"), a count ("how many", "几个"); empty otherwise."""
    for kind, pattern in _MEASURE_CUES:
        if pattern.search(text):
            return frozenset({kind})  # type: ignore[arg-type]
    return frozenset()


def _numeric_asks(kinds: frozenset[ValueKind]) -> frozenset[ValueKind]:
    """The numeric kinds asked for; empty when the question asks for none, or may ask for any."""
    if kinds == ALL_KINDS:
        return frozenset()
    if kinds & NUMERIC_KINDS == WHEN:
        return frozenset({"date"})  # "when" may be answered by a bare year, which reads as a date too
    return kinds & NUMERIC_KINDS


def _is_factoid(kinds: frozenset[ValueKind]) -> bool:
    """A question asking for a fact (a number, a date, a name), not a procedure or a yes/no."""
    return kinds != ALL_KINDS and bool(kinds & (NUMERIC_KINDS | {"named"}))
