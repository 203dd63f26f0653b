"""Follow-up questions resolved by rule from the earlier turns of a conversation (never by a model).

A turn that points back (``policies.question.followup_cues``: an ellipsis, a pronoun, a generic subject, a
statement) takes what it lacks from the nearest earlier turn that has a subject:

- a pronoun or a generic subject is replaced by that turn's subject phrase ("它是哪一年推出的" after
  "X200路由器支持哪些频段" reads "X200路由器是哪一年推出的"); "它们"/"they" by a comparison's sides;
- an ellipsis that names a thing of the same kind keeps the earlier question and swaps the thing
  ("那企业版呢？" after "基础版每月多少钱" reads "企业版每月多少钱"); one that names an attribute asks
  it of the earlier subject ("what about the warranty?" -> "X200 router warranty");
- a statement or a condition ("what if I'm not a citizen?") is read with the earlier subject beside it;
- the earlier turn's identifiers (model numbers) come along when its subject phrase lacks them, and
  to a question opening with 那 that names nothing new ("那充满能用多久呢": another attribute of it).

A turn that names its own subject carries nothing (a topic switch). A singular pointer after a
comparison ("它支持5G吗" after "X200和X300有什么区别") fits both sides: it is ambiguous, and the
candidates are listed. A follow-up with no earlier subject at all is unresolved: the loop decides
whether its evidence fits one document or several (``ambiguous_subject``).

The earlier turn's evidence documents (read back from its run) are a prior for recall, never a filter.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Literal

from evidence_loop.policies.lexicon import LINK_OPENINGS_ZH
from evidence_loop.policies.question.analysis import Question
from evidence_loop.policies.question.followup_cues import Cue, cue_of, has_cjk, subject_phrase
from evidence_loop.policies.question.followup_swap import read_named, swap
from evidence_loop.policies.question.scopes import scope_names
from evidence_loop.policies.question.sides import comparison_sides
from evidence_loop.policies.question.slots import extract_slots, identifiers, slot_in_text
from evidence_loop.policies.types import MissingPiece
from evidence_loop.tools.tokenize import normalize, words
from evidence_loop.tools.types import Hit

CarryKind = Literal["subject", "identifier", "side", "attribute"]


@dataclass(frozen=True, slots=True)
class Turn:
    """An earlier turn: what was asked, and when its run was read back, the question it resolved to
    and the documents its evidence came from."""

    text: str
    run_id: str | None = None
    resolved: str | None = None
    doc_ids: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Carried:
    """One thing taken from an earlier turn (``turn``: its place in the history, oldest 0)."""

    kind: CarryKind
    text: str
    turn: int


@dataclass(frozen=True, slots=True)
class Resolution:
    """The question the loop runs (``text``) for the one asked, and why."""

    asked: str
    text: str
    cue: str | None = None  # how the asked turn points back (None: it stands alone)
    carried: tuple[Carried, ...] = ()
    prior_docs: tuple[str, ...] = ()  # the source turn's evidence documents: a recall prior
    candidates: tuple[str, ...] = ()  # an ambiguous pointer: the things it may stand for
    unresolved: bool = False  # it points back, but no earlier turn names a subject
    sides_from: str = ""  # the earlier turn whose comparison sides "they"/"它们" stands for
    source: str = ""  # the earlier turn it took from, as that turn resolved

    @property
    def changed(self) -> bool:
        return self.text != self.asked


@dataclass(frozen=True, slots=True)
class _Source:
    """The nearest earlier turn that names a subject, read as it was resolved."""

    turn: int
    text: str
    phrase: str
    ids: tuple[str, ...]
    sides: tuple[str, ...]
    doc_ids: tuple[str, ...]


def resolve(asked: str, history: Sequence[Turn], kinds: bool = True) -> Resolution:
    """The question to run for ``asked`` after ``history`` (oldest first); itself when it stands alone.
    ``kinds``: an ellipsis swaps the thing of its kind, the attribute kept (``followup_swap``;
    ``Policy.followup_kinds``); off, the rule of runs recorded before it."""
    cue = cue_of(asked, kinds) if history else None
    if cue is None:
        linked = _linked(asked, history) if kinds and history else None
        return linked or Resolution(asked, asked)
    source = _source(history, cue, kinds)
    if source is None:
        return Resolution(asked, asked, cue.kind, unresolved=True)
    if cue.kind == "pronoun" and not cue.plural and len(source.sides) > 1:
        return Resolution(asked, asked, cue.kind, candidates=source.sides)
    resolution = _apply(asked, cue, source, kinds)
    return replace(resolution, prior_docs=source.doc_ids, source=source.text)


def _linked(asked: str, history: Sequence[Turn]) -> Resolution | None:
    """ "那充满能用多久呢" after "D50 充满电要多久？": a question opening with 那 that names no thing
    (model, plan, place) and no subject the earlier turn did not asks another attribute of its
    subject; its model numbers come along (under ``followup_kinds``)."""
    if not has_cjk(asked) or not asked.lstrip().startswith(LINK_OPENINGS_ZH):
        return None
    source = _source(history, Cue("zero", 0, 0), kinds=True)
    if source is None or not source.ids or any(_holds(asked, i) for i in source.ids):
        return None
    if scope_names(asked) or not set(words(subject_phrase(asked))) <= set(words(source.text)):
        return None  # "那企业版多少钱呢", "那退货要几天呢" name a thing of their own
    carried = tuple(Carried("identifier", i, source.turn) for i in source.ids)
    text = _with_ids(asked, source)
    return Resolution(asked, text, "zero", carried, prior_docs=source.doc_ids, source=source.text)


def _resolved_text(before: Sequence[Turn], place: int, turn: Turn, kinds: bool) -> str:
    """A turn's reading: its run's, itself when it points nowhere, else resolved from those before it."""
    if turn.resolved is not None:
        return turn.resolved
    if cue_of(turn.text, kinds) is None:
        return turn.text
    return resolve(turn.text, before[:place], kinds).text


def _source(turns: Sequence[Turn], cue: Cue, kinds: bool) -> _Source | None:
    """The nearest earlier turn naming a subject, an identifier or a comparison's sides (each turn read
    as it resolved, worked out only as far back as the search goes)."""
    for place in range(len(turns) - 1, -1, -1):
        text = _resolved_text(turns, place, turns[place], kinds)
        phrase, ids, sides = _facts(text)
        if phrase or ids or len(sides) > 1:
            return _Source(place, text, phrase, ids, sides, turns[place].doc_ids)
    return None


@lru_cache(maxsize=2048)
def _facts(text: str) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    """A turn's subject phrase, identifiers and comparison sides (a conversation's turns recur on
    every later call, so they are worked out once)."""
    ids = tuple(s.value for s in identifiers(extract_slots(text)))
    return subject_phrase(text), ids, tuple(s.name for s in comparison_sides(text))


def _apply(asked: str, cue: Cue, source: _Source, kinds: bool) -> Resolution:
    if cue.kind == "ellipsis":
        return _swap(asked, cue, source) if kinds else _swap_subject(asked, cue, source)
    if cue.plural and len(source.sides) > 1:
        joined = ("和" if has_cjk(asked) else " and ").join(source.sides)
        text = asked[: cue.start] + joined + asked[cue.end :]
        carried = tuple(Carried("side", s, source.turn) for s in source.sides)
        return Resolution(asked, text, cue.kind, carried, sides_from=source.text)
    phrase = source.phrase or " ".join(source.ids) or " ".join(source.sides)
    if cue.kind == "condition" and kinds:  # "and if I pay yearly?": the earlier question, on that condition
        text = f"{source.text.rstrip()} {asked.strip()}"
        return Resolution(asked, text, cue.kind, (Carried("attribute", source.text, source.turn),))
    if cue.kind in {"statement", "condition"}:
        text = f"{asked.rstrip()} {phrase}"
    else:
        text = asked[: cue.start] + _fit(phrase, asked, cue) + asked[cue.end :]
    carried = (Carried("subject", phrase, source.turn), *_ids(source, phrase, source.turn))
    return Resolution(asked, _with_ids(text, source), cue.kind, carried)


def _fit(phrase: str, asked: str, cue: Cue) -> str:
    """The phrase where the pointer stood: "its" reads "the X's"; spaced apart from Latin words."""
    word = asked[cue.start : cue.end].lower()
    if has_cjk(asked):
        return phrase
    if not word:
        return phrase
    if word in {"its", "their"}:
        return f"the {phrase}'s"
    if cue.kind == "zero":
        return f"{phrase} "
    return f"the {phrase}" if cue.start > 0 or word.split()[0] in {"the", "your", "my", "our"} else phrase


def _ids(source: _Source, phrase: str, turn: int) -> tuple[Carried, ...]:
    """The source's identifiers, when its subject phrase names none (they come along)."""
    if any(_holds(phrase, i) for i in source.ids):
        return ()
    return tuple(Carried("identifier", i, turn) for i in source.ids)


def _with_ids(text: str, source: _Source) -> str:
    """The text with the source's identifiers when it holds none of them ("X200" of "the X200 router";
    not the "6E" of "Wi-Fi 6E" beside it)."""
    if any(_holds(text, i) for i in source.ids):
        return text
    return " ".join([text, *source.ids]) if source.ids else text


def _holds(text: str, identifier: str) -> bool:
    return any(slot_in_text(s, text) for s in extract_slots(identifier)) or identifier.lower() in text.lower()


def _swap(asked: str, cue: Cue, source: _Source) -> Resolution:
    """ "What about X": X takes the place of the thing of its kind in the earlier question, whose
    attribute is kept (``policies.question.followup_swap``); else X is asked of the earlier subject."""
    named = read_named(cue.named, asked[: cue.start])
    swapped = swap(source.text, source.phrase, source.ids, named)
    if swapped is not None:
        return Resolution(asked, swapped.text, cue.kind, (Carried("attribute", swapped.kept, source.turn),))
    old = source.phrase or (source.ids[0] if source.ids else "")
    glue = "" if has_cjk(asked) else " "
    text = _with_ids(f"{old}{glue}{named.text}", source)
    carried = (Carried("subject", old, source.turn), *_ids(source, old, source.turn))
    return Resolution(asked, text, cue.kind, carried)


def _swap_subject(asked: str, cue: Cue, source: _Source) -> Resolution:
    """The rule before ``_swap`` (runs recorded before ``Policy.followup_kinds``): X takes the place of
    the earlier subject when it is the same kind of thing, else X is added to the earlier subject."""
    named = _DETERMINER_RE.sub("", cue.named.strip())
    old = source.phrase or (source.ids[0] if source.ids else "")
    entity = _same_kind(named, old, source)
    at = _find(source.text, entity[0]) if entity else -1
    if entity and at >= 0:
        text = source.text[:at] + entity[1] + source.text[at + len(entity[0]) :]
        rest = " ".join((source.text[:at] + source.text[at + len(entity[0]) :]).split())
        return Resolution(asked, text, cue.kind, (Carried("attribute", rest, source.turn),))
    glue = "" if has_cjk(asked) else " "
    text = _with_ids(f"{old}{glue}{named}", source)
    carried = (Carried("subject", old, source.turn), *_ids(source, old, source.turn))
    return Resolution(asked, text, cue.kind, carried)


def _same_kind(named: str, old: str, source: _Source) -> tuple[str, str] | None:
    """(what to replace in the earlier turn, what with) when X is a thing of the earlier subject's
    kind: both model numbers, or the same head noun, or a name for the earlier phrase's modifier."""
    if identifiers(extract_slots(named)) and source.ids:
        return source.ids[0], named
    if not old:
        return None
    if has_cjk(old):
        at = old.rfind(named[-1:]) if len(named) > 1 else -1
        return (old[: at + 1], named) if at >= 1 else None
    old_words, new_words = old.split(), named.split()
    if new_words and old_words and new_words[-1].lower() == old_words[-1].lower():
        return old, named
    if len(old_words) > 1 and len(new_words) == 1 and named[:1].isupper():
        return old, f"{named} {old_words[-1]}"
    return None


_DETERMINER_RE = re.compile(r"^(?:the|my|your|our|a|an)\s+", re.IGNORECASE)


def _find(text: str, phrase: str) -> int:
    """Where the phrase is in the text, case and width aside (-1: nowhere)."""
    flat = normalize(text)
    return flat.find(normalize(phrase)) if len(flat) == len(text) else -1


# --- what the loop does with a resolution ------------------------------------------------------------


def with_carried_sides(question: Question, resolution: Resolution | None) -> Question:
    """The question with the comparison sides "they"/"它们" stood for, when its own words name none
    ("how much do they weigh?" after "X200 and X300: what is the difference?" compares them too)."""
    if resolution is None or not resolution.sides_from or question.sides:
        return question
    return replace(question, sides=comparison_sides(resolution.sides_from))


def prior_first(hits: Sequence[Hit], prior_docs: Collection[str], boost: float, k: int) -> list[Hit]:
    """The ``k`` best hits once a hit in an earlier turn's documents counts ``1 + boost`` times its
    score: a prior, never a filter (a better hit elsewhere still comes first)."""
    if not prior_docs or boost <= 0:
        return list(hits[:k])

    def weight(hit: Hit) -> float:
        return hit.score * (1.0 + boost) if hit.unit.doc_id in prior_docs else hit.score

    return sorted(hits, key=lambda h: (-weight(h), h.rank))[:k]


def ambiguous_pieces(candidates: Sequence[tuple[str, str | None]]) -> list[MissingPiece]:
    """One ``ambiguous_subject`` piece per candidate (its name, and the document that holds it), so a
    chatbot can ask "which one?"; none for fewer than two candidates."""
    if len(candidates) < 2:
        return []
    names = ", ".join(name for name, _ in candidates)
    detail = f"the question may be about any of: {names}"
    return [MissingPiece("ambiguous_subject", detail, value=name, doc_id=doc) for name, doc in candidates]


def unresolved_candidates(
    resolution: Resolution, titled: Sequence[tuple[str, str]]
) -> list[tuple[str, str | None]]:
    """For a follow-up nothing resolves, the documents (title, doc_id) its evidence came from, when
    there are several: it fits more than one product or section."""
    if not resolution.unresolved:
        return []
    seen = dict.fromkeys(titled)
    return [(title, doc) for title, doc in seen] if len(seen) > 1 else []
