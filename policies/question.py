"""What a question asks for: its slots, its content terms and its key phrases, computed once."""

from __future__ import annotations

from dataclasses import dataclass

from policies.relevance import content_terms
from policies.slots import extract_slots, key_phrases
from policies.types import Slot


@dataclass(frozen=True, slots=True)
class Question:
    """A question analysed once per run; every check reads it."""

    text: str
    slots: tuple[Slot, ...]
    terms: tuple[str, ...]
    phrases: tuple[str, ...]


def analyse(text: str) -> Question:
    """Slots, content terms and key phrases of a question."""
    return Question(text, extract_slots(text), content_terms(text), key_phrases(text))
