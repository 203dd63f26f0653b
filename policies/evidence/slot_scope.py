"""Which identifier a text is about: the question's own model, clause or version, or a look-alike of it.

"QUOKKA000X" and "QUOKKA001X", "第12条" and "第13条", "v2.1" and "v2.2" name different things one
character apart. A text that names a look-alike of an identifier the question names, and not the
identifier itself, speaks about something else: it is no evidence for the question and no side of
a conflict about its value. Two identifiers are look-alikes when they split into the same pattern of
letters, digits and marks and differ only in their numbers, or in one part ("QUOKKA001X" /
"QUOKKA001Y"); "LM-X200" and "LM-S10" differ in two parts and are simply two other names.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from evidence_loop.policies.config import Policy
from evidence_loop.policies.evidence.checked import Checked
from evidence_loop.policies.question.analysis import Question
from evidence_loop.policies.question.slots import extract_slots, identifiers, slot_in_text
from evidence_loop.policies.types import Slot
from evidence_loop.tools.windows import units_of

_PART_RE = re.compile(r"[^\W\d_]+|\d+|[^\w\s]|_")


@lru_cache(maxsize=100_000)
def named_identifiers(text: str) -> tuple[Slot, ...]:
    """The identifiers a text names (cached: unit texts and headings repeat across windows)."""
    return identifiers(extract_slots(text))


def _parts(form: str) -> tuple[str, ...]:
    return tuple(_PART_RE.findall(form))


def _shape(parts: tuple[str, ...]) -> tuple[str, ...]:
    return tuple("9" if p.isdigit() else "a" if p.isalpha() else p for p in parts)


def look_alike(left: str, right: str) -> bool:
    """Two different identifier forms of one pattern that differ only in numbers, or in one part."""
    lparts, rparts = _parts(left), _parts(right)
    if left == right or _shape(lparts) != _shape(rparts):
        return False
    differ = [i for i, (a, b) in enumerate(zip(lparts, rparts, strict=True)) if a != b]
    return len(differ) == 1 or all(lparts[i].isdigit() for i in differ)


def is_rival(asked: Slot, named: Slot) -> bool:
    """True when ``named`` is another identifier than ``asked`` but a look-alike of it."""
    asked_forms, named_forms = {asked.norm, *asked.alternatives}, {named.norm, *named.alternatives}
    if asked.kind != named.kind or asked_forms & named_forms:
        return False
    return any(look_alike(a, n) for a in asked_forms for n in named_forms)


def about_other(asked: Sequence[Slot], texts: Sequence[str]) -> bool:
    """True when the texts name a look-alike of one of the ``asked`` identifiers and none of those."""
    if not asked or any(slot_in_text(slot, text) for slot in asked for text in texts):
        return False
    return any(is_rival(slot, named) for text in texts for named in named_identifiers(text) for slot in asked)


def window_texts(item: Checked) -> list[str]:
    """What a window names: its document's title, its section path and its units' text."""
    doc = item.doc
    path = doc.sections[doc.units[item.window.first].section_id].path
    return [doc.title, *path, *(u.text for u in units_of(item.window, doc))]


def on_subject(question: Question, items: Sequence[Checked], policy: Policy) -> list[Checked]:
    """The windows that are not about a look-alike of the question's identifier.

    All of them when none is left: the refusal then names the identifier no evidence mentions.
    """
    asked = question.identifiers
    if not policy.rival_ids or not asked:
        return list(items)
    kept = [item for item in items if not about_other(asked, window_texts(item))]
    return kept or list(items)
