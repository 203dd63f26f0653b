"""Every threshold of the loop in one frozen, hashable policy.

The loop reads numbers only from here; a trace records the policy and its hash so a replay runs
under the same rules.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any

from evidence_loop.policies.judge_model import DEFAULT_JUDGE, JudgeModel
from evidence_loop.policies.presets import MODES, PRESETS, Mode, Preset
from evidence_loop.tools.errors import PolicyError
from evidence_loop.tools.inputs import JsonInputError, parse_json
from evidence_loop.tools.types import DENSE_K, FUSION_WEIGHT, RRF_CONSTANT, TYPO_MIN_CHARS

# Numbers that were constants in the code before they became fields, with those constants. A
# recorded policy without one ran with the constant; a policy holding the constant is recorded
# without the field (``Policy.as_dict``), so every policy keeps the record and the hash it had.
WERE_CONSTANTS: dict[str, object] = {
    "fusion_weight": 1.5,
    "typo_min_chars": 5,
    "relevance_half_score": 5.0,
    "answer_units_per_window": 2,
    "answer_join_share": 0.75,
    "reference_term_share": 0.8,
    "statement_term_share": 0.5,
    "conflict_min_context": 8,
    "conflict_max_value_atoms": 12,
    "conflict_merge_gap": 2,
    "conflict_min_question_terms": 2,
    "conflict_max_term_mismatch": 1,
    "conflict_min_statement_words": 3,
    "conflict_polarity_reach": 2,
    "conflict_min_sentence_similarity": 0.6,
}
# Fields added after traces were first recorded, with the value a record without one ran under:
# the value that turns a rule added later off, or the constant a number was before it was a field.
ADDED_LATER: dict[str, object] = {
    "answer_type_penalty": 0.0,
    "fill_chars": 0,
    "caller_statistics": False,
    "screen_directives": False,
    "rival_ids": False,
    "slot_values": False,
    "dense_recall": False,
    "dense_k": 50,
    "rrf_constant": 60,
    "w_semantic": 0.0,
    "judge": None,
    "rerank_k": 0,
    "rerank_chars": 1200,
    "w_rerank": 0.0,
    "shape_reading": False,
    "shape_sure_score": 0.6,
    "shape_list_chars": 2500,
    "shape_section_chars": 2500,
    "shape_docs": 3,
    "shape_docs_ratio": 0.6,
    "shape_outcome_chars": 3000,
    **WERE_CONSTANTS,
    "compare_sides": False,
    "screen_hidden": False,
    "refuse_contentless": False,
    "followups": False,
    "followup_turns": 8,
    "followup_doc_boost": 0.0,
    "followup_prior_k": 0,
    "followup_kinds": False,
    "attribute_values": False,
    "conflict_scopes": False,
    "conflict_scope_chars": 600,
    "conflict_meaning": False,
    "conflict_meaning_closeness": 0.7,
    "conflict_meaning_best": 0.8,
    "conflict_meaning_pair": 0.82,
    "conflict_meaning_ratio": 30.0,
    "conflict_numbered": False,
    "conflict_wider_k": 0,
    "conflict_wider_closeness": 0.7,
    "quote_stating": False,
    "quote_semantic_weight": 0.5,
    "quote_place_weight": 0.5,
    "quote_window_weight": 1.0,
    "quote_heading_weight": 0.3,
    "quote_join_share": 0.5,
    "quote_about_share": 0.35,
    "quote_rival_share": 0.5,
    "quote_list_share": 0.8,
    "quote_passage_chars": 2500,
    "quote_further_windows": 4,
    "quote_further_units": 2,
    "quote_max_facts": 5,
    "quote_procedure_chars": 0,
    "quote_skip_datelines": False,
    "quote_no_datelines": False,
    "quote_place_first": False,
    "identifier_slots": False,
    "informative_terms": False,
    "context_weight": 1.0,
    "absent_things": False,
    "refuse_absent_names": False,
    "refuse_absent_places": False,
    "deferring_references": False,
    "reference_defer_share": 1.0,
    "value_signal": False,
}


@dataclass(frozen=True, slots=True)
class Policy:
    """Thresholds and budgets, in the order of the loop's stages. Defaults are the shipped policy.

    Every field is checked when a policy is made (``FIELD_RANGES``, ``BOOLEAN_WORDS``): a bad value is
    a ``PolicyError`` that names the field.
    """

    mode: Mode = "adaptive"  # the loop's preset (policies.presets): the full loop or an ablation

    # ---- recall: seed and wider recall (spelling, IDF and BM25 over what the caller may read: see
    # tools.search.snapshot)
    caller_statistics: bool = True
    seed_k: int = 12
    # a follow-up is resolved by rule from the last followup_turns earlier turns (policies.question.followup);
    # a hit in the source turn's evidence documents ranks as if its score were 1 + this times higher
    followups: bool = True
    followup_turns: int = 8
    followup_doc_boost: float = 0.5
    followup_prior_k: int = 1  # an earlier turn given as text: the documents of its best hits stand in
    # "and the Starter one?", "香港的呢", "how about in Hong Kong?": the thing of X's kind in the earlier
    # question (plan, model, place) is swapped and its attribute kept (policies.question.followup_swap)
    followup_kinds: bool = True
    wider_k: int = 24
    max_recalls: int = 2
    # a unit's recall score is its BM25 over the best unit's plus fusion_weight times its passage's
    # over the best passage's: a sentence in the section about the question outranks the same
    # sentence elsewhere (measured on a Chinese help centre and an English manual, top-5 gold
    # documents: 1.5 is near the best for both)
    fusion_weight: float = FUSION_WEIGHT  # 1.5
    typo_min_chars: int = (
        TYPO_MIN_CHARS  # 5: an unknown Latin word this long is read as the known word one edit away
    )
    # hybrid recall when the index has unit vectors: the dense_k best units by BM25 and by cosine,
    # fused by reciprocal rank with this constant (tools.search.dense.rrf)
    dense_recall: bool = True
    dense_k: int = DENSE_K  # 50
    rrf_constant: int = RRF_CONSTANT  # 60

    # ---- growth: windows, their budgets (characters) and sliding
    max_windows: int = 6
    lead_windows: int = 2  # the best windows keep their full growth
    runner_budget: int = 200  # window budget for the runners-up after them (0: no runners-up)
    window_budget: int = 4000
    outcome_budget: int = 4500
    max_slides: int = 16
    parent_free_chars: int = 4000
    fixed_radius: int = 2
    # a reference is resolved by a window whose title, path or text holds this share of its name's terms
    reference_term_share: float = 0.8

    # ---- reading the question against its corpus (policies.question.named): a letters-and-digits
    # token is a model number only when it is one ("2FA", "4K", "USB-C" are words); fillers and
    # words no readable passage holds weigh 0 in coverage, words of the context around the asking
    # clause context_weight times their IDF; the things the asking clause names that no readable
    # passage names are found (a judge signal, and named by a refusal)
    identifier_slots: bool = True
    informative_terms: bool = True
    context_weight: float = 0.25
    absent_things: bool = True
    # ... and a name among them (a capitalised or upper-case English word: "IFTTT", "Premium") refuses,
    # as a model number no evidence mentions does
    refuse_absent_names: bool = True
    # ... and so does a place among them, in any case and either language ("canada", "加拿大"; the
    # gazetteer lexicon.PLACES_EN / PLACES_ZH), the refusal naming it
    refuse_absent_places: bool = True

    # ---- judge: scoring the grown windows, then answer or refuse
    # expand first, rerank after: with a rerank endpoint configured (tools.models.reranker_config), the
    # rerank_k best grown windows, each cut to rerank_chars, go to it in one request per check
    rerank_k: int = 8
    rerank_chars: int = 1200
    # completeness score weights
    w_relevance: float = 0.25
    w_coverage: float = 0.35
    w_slots: float = 0.25
    w_boundary: float = 0.15
    w_semantic: float = 0.25  # the window's best cosine with the question, on the question's scale
    w_rerank: float = 0.35  # a cross-encoder's 0..1 relevance of the grown window, when one is configured
    gap_penalty: float = 0.25
    # relevance = recall score / (the query's best + this) (policies.evidence.relevance.lexical_relevance)
    relevance_half_score: float = 5.0
    answer_type_penalty: float = 0.1  # a window that states no value of the kind the question asks for
    # decision: with vectors and a corpus scale the judge decides (policies.decision.judge), else the coverage
    # rule
    judge: JudgeModel | None = DEFAULT_JUDGE
    answer_rate: float = 0.97  # the operating point: this share of answerable questions answered when fitted
    refusal_bias: float = 0.0  # added to the judge's threshold (log-odds): > 0 refuses more
    min_coverage: float = 0.5
    # a cross-reference the corpus lacks refuses only when the unit that answers defers to it
    # (policies.evidence.references.deferring); otherwise the answer stands and the outcome notes it
    deferring_references: bool = True
    # ... for a question asking no value: when it names this share of the question's terms the unit
    # naming most of them names (or is the closest to the question's meaning)
    reference_defer_share: float = 0.65
    # the judge also reads whether the evidence states a value of the kind the question asks for
    # (a duration for "how long", an amount for "how much") beside the question's subject
    value_signal: bool = True
    # a question with no content word in either language ("?", "the") is refused with a missing piece
    # that asks for the subject (policies.question.analysis.contentless), never answered
    refuse_contentless: bool = True

    # ---- reading: which windows become evidence, how much of their surroundings, and the answer
    window_keep_ratio: float = 0.8
    fill_ratio: float = 0.5  # a factoid question also reads windows this close to the best ...
    fill_chars: int = 500  # ... while its evidence is shorter than this (policies.evidence.selection.select)
    # reading as the question's shape needs (policies.question.shape, policies.evidence.reading): a
    # procedure's or a list's lead windows grow to their whole list within shape_list_chars, and when the lead
    # window scores shape_sure_score or more to their section (with its intro) within shape_section_chars;
    # an explanation reads the best window of up to shape_docs documents scoring within
    # shape_docs_ratio of the best
    shape_reading: bool = True
    shape_sure_score: float = 0.6
    shape_list_chars: int = 2500
    shape_section_chars: int = 2500
    shape_docs: int = 3
    shape_docs_ratio: float = 0.6
    shape_outcome_chars: int = 3000  # a procedure's or list's other windows kept while all fit this
    # evidence: a look-alike identifier ("QUOKKA000X" for "QUOKKA001X") is another subject
    # (policies.evidence.slot_scope), a sentence addressed to an AI system is no evidence
    # (policies.evidence.directives)
    rival_ids: bool = True
    screen_directives: bool = True
    # ... read as a person reads it: without the characters that print nothing, and a directive cut in
    # two at a sentence end read as one (policies.evidence.directives)
    screen_hidden: bool = True
    # a comparison needs evidence for each named side (policies.evidence.comparison): a window for a side the
    # evidence lacks is pinned, the wider recall searches for that side, a side nothing covers is
    # missing, and the answer quotes each side
    compare_sides: bool = True
    # answer: each window's best units, a weaker window's only when they name this share of the
    # question's terms the best unit names (policies.decision.answer)
    max_answer_sentences: int = 3
    answer_units_per_window: int = 2
    answer_join_share: float = 0.75
    # ... or, with quote_stating, the units that state what is asked (policies.decision.answer, quotes,
    # passage). A unit's relevance: its IDF-weighted share of the question's terms (a term only its
    # section path or title names counts quote_place_weight), read with its cosine on the question's
    # scale (quote_semantic_weight), times its window's score over the best window's to the power
    # quote_window_weight. A fact: the best unit (stating the asked measure when one near the best
    # does) and up to quote_max_facts in all; a procedure, list, explanation or yes/no: the passage
    # (at most quote_passage_chars) around the best unit of the best section (its heading weighs
    # quote_heading_weight), a procedure's best list when within quote_list_share of it. Either way,
    # units of up to quote_further_windows other windows, quote_further_units each, join when within
    # quote_join_share of the best and naming quote_about_share of what it names (quote_rival_share
    # for another window's value of the asked kind beside a best stating one). Evidence with
    # nothing to quote is a refusal. A procedure is quoted as the whole section its anchor sits in,
    # its subsections' steps too, in order, when the window holds it within quote_procedure_chars
    # (0: the anchor's own units only, as before). With quote_skip_datelines a page's dateline
    # ("Last updated: 10 January 2026") is never quoted as the intro of a passage; with
    # quote_no_datelines never quoted at all (no candidate, no passage unit), unless the question
    # asks when the page was updated (lexicon.UPDATE_ASKS). With quote_place_first a yes/no question
    # about a place is answered by the unit naming the place or a region holding it
    # (lexicon.PLACE_REGIONS: 香港 in 港澳台) alone.
    quote_stating: bool = True
    quote_semantic_weight: float = 0.5
    quote_place_weight: float = 0.5
    quote_window_weight: float = 1.0
    quote_heading_weight: float = 0.3
    quote_join_share: float = 0.5
    quote_about_share: float = 0.35
    quote_rival_share: float = 0.5
    quote_list_share: float = 0.8
    quote_passage_chars: int = 2500
    quote_further_windows: int = 4
    quote_further_units: int = 2
    quote_max_facts: int = 5
    quote_procedure_chars: int = 4000
    quote_skip_datelines: bool = True
    quote_no_datelines: bool = True
    quote_place_first: bool = True

    # ---- conflicts: what the conflict check reads and what counts as a disagreement
    # windows close to the best are read too, so both sides of a disagreement are seen
    conflict_pool_ratio: float = 0.3
    conflict_pool_max: int = 8
    # a window's statements about the question: its units naming this share of the terms the best
    # unit names (policies.evidence.selection.statement_span); a disagreement is looked for there
    statement_term_share: float = 0.5
    # conflict candidates (policies.conflicts.candidates.ConflictRules), tuned on counterfactual fact sets and
    # their clean controls
    conflict_min_context: int = 8  # aligned atoms around a difference: "the same statement"
    conflict_max_value_atoms: int = 12  # a value is short
    conflict_merge_gap: int = 2  # differing runs this close are one value ("Tampa, Florida")
    conflict_min_question_terms: int = 2  # question terms a window must hold to be compared at all
    conflict_max_term_mismatch: int = 1  # question terms one window has and the other lacks
    conflict_min_statement_words: int = 3  # words besides the value in its sentence
    conflict_polarity_reach: int = 2  # atoms after a negation that belong to the negated value
    conflict_min_sentence_similarity: float = 0.6  # two sentences of one window compared at all
    slot_values: bool = True  # also compare the values two sources give for the question's identifier
    # ... and, for a question naming none, the values two documents give for the asked attribute
    # (policies.conflicts.slots.attribute_candidates: "kept 90 days after cancellation" / "30 days")
    attribute_values: bool = True
    # a pair one document states, or two sides about different things (models, places, plans, customer
    # groups, a table row's label) is no disagreement; a side dated later supersedes; every pair set
    # aside is recorded with its reason (policies.conflicts.screen, the trace's conflict_scan step)
    conflict_scopes: bool = True
    conflict_scope_chars: int = 600  # the top of a document read for what it says of its own scope
    # two statements in two documents (or versions) both close in meaning to the question (their e5
    # vectors' cosine with it, on the question's scale) giving values of the asked kind that differ
    # are candidates, whatever their words (policies.conflicts.meaning; hybrid recall only). Off in the
    # shipped policy: on help-centre pages it was never fitted to it found 2 more of 24 planted
    # conflicts but stopped 3 answerable questions with false ones (docs/models.md)
    conflict_meaning: bool = False
    conflict_meaning_closeness: float = 0.7  # a statement this close to the question states the attribute
    conflict_meaning_best: float = 0.8  # ... and one of the two sides this close (among what answers best)
    conflict_meaning_pair: float = 0.82  # ... and the two statements' own vectors this close (cosine)
    conflict_meaning_ratio: float = 30.0  # two sizes further apart than this factor measure two things
    # sides naming different numbered things ("code 11" / "code 12", "Error 21" / "Error 34") or
    # different tiers of one product ("Shield Basic" / "Shield Plus") are about different subjects, and
    # a thing's own number is no value of it (policies.conflicts.numbered)
    conflict_numbered: bool = True
    # once a statement answers (a quoted unit stating a value of the asked kind), a second, wider
    # lookup with its own words and e5 vector finds this many units of other documents the caller may
    # read; those close to it (its cosine on its own scale, as conflict_meaning reads a question's)
    # stating a value of that kind are paired with it for the screen (policies.conflicts.wider; 0: off)
    conflict_wider_k: int = 4
    conflict_wider_closeness: float = 0.6

    def __post_init__(self) -> None:
        for name, kind in _KINDS.items():
            _check(name, kind, getattr(self, name))

    @property
    def preset(self) -> Preset:
        """What the policy's mode switches on (policies.presets)."""
        return PRESETS[self.mode]

    def as_dict(self) -> dict[str, object]:
        """The policy as a trace records it: a field that was a constant is left out while it holds
        that constant (``WERE_CONSTANTS``); every other field, a rule added later included, is kept."""
        quiet = WERE_CONSTANTS
        return {
            name: value for name, value in asdict(self).items() if name not in quiet or value != quiet[name]
        }

    def digest(self) -> str:
        """sha256 of the policy's canonical JSON: what a trace pins."""
        return record_digest(self.as_dict())

    def with_overrides(self, pairs: Mapping[str, object]) -> Policy:
        """A copy with fields set from text (``window_budget=600``, ``compare_sides=off``) or from JSON
        values; an unknown field or a value its field does not take is a ``PolicyError`` naming it."""
        changes: dict[str, object] = {}
        for key, value in pairs.items():
            if key not in _KINDS or key == "judge":
                known = ", ".join(sorted(set(_KINDS) - {"judge"}))
                raise PolicyError(f"unknown policy field {key!r}; known: {known}", field=key)
            changes[key] = _parsed(key, _KINDS[key], value) if isinstance(value, str) else value
        return replace(self, **changes)  # type: ignore[arg-type]

    def recall_options(self) -> dict[str, Any]:
        """The recall settings ``Snapshot.search`` takes (dense_k, rrf_constant, fusion_weight,
        typo_min_chars): tools keep no defaults of their own."""
        return {
            "dense_k": self.dense_k,
            "rrf_constant": self.rrf_constant,
            "fusion_weight": self.fusion_weight,
            "typo_min_chars": self.typo_min_chars,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> Policy:
        """Rebuild a recorded policy; unknown keys are rejected so a replay never runs on guesses.

        A field the record lacks because it came later (``ADDED_LATER``) is read as it ran: its
        rule off, or the constant it was.
        """
        unknown = set(data) - set(_KINDS)
        if unknown:
            raise PolicyError(f"unknown policy fields: {sorted(unknown)}", field=sorted(unknown)[0])
        values: dict[str, Any] = {**ADDED_LATER, **data}
        if isinstance(values.get("judge"), dict):
            values["judge"] = JudgeModel.from_dict(values["judge"])
        return cls(**values)


# What each field takes: the type of its default (the judge: a model or None).
_KINDS: dict[str, type] = {f.name: type(f.default) for f in fields(Policy)}
# The words a boolean field takes, as text (a command line, an environment variable).
BOOLEAN_WORDS: dict[str, bool] = {
    **dict.fromkeys(("true", "yes", "on", "1"), True),
    **dict.fromkeys(("false", "no", "off", "0"), False),
}
INF = math.inf
# Allowed ranges, inclusive; a number field not named here takes any finite value >= 0.
_UNIT = (0.0, 1.0)
FIELD_RANGES: dict[str, tuple[float, float]] = {
    "seed_k": (1, INF),
    "max_windows": (1, INF),
    "quote_max_facts": (1, INF),
    "conflict_meaning_ratio": (1, INF),
    "refusal_bias": (-INF, INF),
    **dict.fromkeys(
        (
            "reference_term_share",
            "statement_term_share",
            "answer_join_share",
            "quote_semantic_weight",
            "quote_place_weight",
            "quote_heading_weight",
            "quote_join_share",
            "quote_about_share",
            "quote_rival_share",
            "quote_list_share",
            "w_relevance",
            "w_coverage",
            "w_slots",
            "w_boundary",
            "w_semantic",
            "w_rerank",
            "gap_penalty",
            "answer_type_penalty",
            "answer_rate",
            "min_coverage",
            "window_keep_ratio",
            "fill_ratio",
            "shape_sure_score",
            "shape_docs_ratio",
            "conflict_pool_ratio",
            "conflict_min_sentence_similarity",
            "conflict_meaning_closeness",
            "conflict_meaning_best",
            "conflict_wider_closeness",
            "conflict_meaning_pair",
            "context_weight",
            "reference_defer_share",
        ),
        _UNIT,
    ),
}


def _parsed(name: str, kind: type, text: str) -> object:
    """A field's value from text: booleans from ``BOOLEAN_WORDS`` only, numbers as their type."""
    word = text.strip()
    if kind is bool:
        if word.lower() not in BOOLEAN_WORDS:
            raise PolicyError(
                f"policy field {name} takes one of {', '.join(BOOLEAN_WORDS)}, not {text!r}", field=name
            )
        return BOOLEAN_WORDS[word.lower()]
    if kind in (int, float):
        try:
            return kind(word)
        except ValueError:
            what = "a number" if kind is float else "a whole number"
            raise PolicyError(f"policy field {name} takes {what}, not {text!r}", field=name) from None
    return word


def _check(name: str, kind: type, value: object) -> None:
    """A field's value is of its kind and within its range; else a ``PolicyError`` naming the field."""
    if name == "mode":
        if value not in PRESETS:
            raise PolicyError(f"policy field mode takes one of {', '.join(MODES)}, not {value!r}", field=name)
    elif name == "judge":
        if value is not None and not isinstance(value, JudgeModel):
            raise PolicyError(f"policy field judge takes a judge model, not {value!r}", field=name)
    elif kind is bool:
        if not isinstance(value, bool):
            raise PolicyError(f"policy field {name} takes true or false, not {value!r}", field=name)
    else:
        numeric = (int, float) if kind is float else (int,)
        if isinstance(value, bool) or not isinstance(value, numeric):
            what = "a number" if kind is float else "a whole number"
            raise PolicyError(f"policy field {name} takes {what}, not {value!r}", field=name)
        low, high = FIELD_RANGES.get(name, (0, INF))
        if not (math.isfinite(value) and low <= value <= high):
            span = f"at least {low}" if high == INF else f"from {low} to {high}"
            if low == -INF:
                span = "finite"
            raise PolicyError(f"policy field {name} must be {span}, not {value!r}", field=name)


POLICY_ENV = "EVLOOP_POLICY"


def load_policy_file(path: Path, base: Policy | None = None) -> Policy:
    """A policy file (``evloop calibrate --out``): its ``judge`` model and any ``policy`` fields.

    ``PolicyError`` (an ``InputError``, and a ``ValueError``) naming the file, and the field when one
    is at fault, when it cannot be read or holds a field or value that cannot be used.
    """
    shown, unusable = str(path), "not a usable policy file"
    try:
        data = parse_json(path.read_bytes())
    except (OSError, JsonInputError) as exc:
        raise PolicyError(f"{unusable} ({exc})", path=shown) from None
    if not isinstance(data, dict) or not isinstance(data.get("policy", {}), dict):
        raise PolicyError(f"{unusable} (expected an object with judge and policy)", path=shown)
    for key in data:
        if key not in POLICY_FILE_KEYS:
            raise PolicyError(f"{unusable} ({_misplaced(str(key))})", field=str(key), path=shown)
    try:
        judge = JudgeModel.from_dict(data["judge"]) if "judge" in data else None
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise PolicyError(f"{unusable} (judge: {exc})", field="judge", path=shown) from None
    try:
        policy = (base or Policy()).with_overrides({str(k): v for k, v in data.get("policy", {}).items()})
    except PolicyError as exc:
        raise PolicyError(f"{unusable} ({exc})", field=exc.field, path=shown) from None
    return replace(policy, judge=judge) if judge is not None else policy


POLICY_FILE_KEYS = ("judge", "policy", "report")
"""What a policy file holds at its top: the fitted judge, policy fields, and the report of the fit."""


def _misplaced(key: str) -> str:
    """Why a key cannot be at the top of a policy file, and where it belongs if anywhere."""
    if key in _KINDS and key != "judge":
        return f'{key!r} is a policy field: it belongs under "policy", as in {{"policy": {{"{key}": ...}}}}'
    return f"unknown key {key!r} at the top; a policy file holds {', '.join(POLICY_FILE_KEYS)}"


def record_digest(record: dict[str, object]) -> str:
    """sha256 of a policy record's canonical JSON (sorted keys, no spaces)."""
    blob = json.dumps(record, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()
