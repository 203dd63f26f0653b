"""The front door exports what the public methods return, and the names renamed in 0.2 still import,
with a DeprecationWarning, for one release."""

from __future__ import annotations

import importlib
import typing
from typing import get_args, get_origin

import pytest
from pydantic import BaseModel

import evidence_loop
from evidence_loop.agent.service import Service

PUBLIC_METHODS = ("ask", "ingest", "trace", "shown", "verify", "replay", "documents")


def _named_types(annotation: object) -> set[type]:
    """The classes an annotation names (inside unions, lists and sequences)."""
    if isinstance(annotation, type):
        return {annotation}
    return (
        {found for arg in get_args(annotation) for found in _named_types(arg)}
        if get_origin(annotation)
        else set()
    )


def test_every_type_a_public_service_method_returns_is_exported() -> None:
    returned = {
        cls
        for method in PUBLIC_METHODS
        for cls in _named_types(typing.get_type_hints(getattr(Service, method))["return"])
        if cls.__module__.startswith("evidence_loop")
    }
    missing = sorted(
        cls.__name__ for cls in returned if getattr(evidence_loop, cls.__name__, None) is not cls
    )
    assert missing == []


def test_every_model_an_outcome_holds_is_exported() -> None:
    models: set[type] = set()
    todo: list[type[BaseModel]] = [evidence_loop.Outcome]
    while todo:
        model = todo.pop()
        models.add(model)
        for field in model.model_fields.values():
            for cls in _named_types(field.annotation):
                if issubclass(cls, BaseModel) and cls not in models:
                    todo.append(cls)
    missing = sorted(m.__name__ for m in models if getattr(evidence_loop, m.__name__, None) is not m)
    assert missing == []


def test_missing_kind_is_a_fixed_set_of_values() -> None:
    kinds = set(get_args(evidence_loop.MissingKind))
    assert {"uncovered_slot", "unresolved_reference", "missing_scope", "budget_exhausted"} <= kinds
    with pytest.raises(ValueError, match="kind"):
        evidence_loop.Missing(kind="something_else", detail="x")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("module", "old", "new"),
    [
        ("evidence_loop.policies.types", "Verdict", "ConflictVerdict"),
        ("evidence_loop.policies.decision.judge", "Verdict", "JudgeVerdict"),
        ("evidence_loop.policies.evidence.comparison", "compared", "sides_to_cover"),
        ("evidence_loop.tools.models.llm_config", "LLMConfig", "ConflictLLMConfig"),
        ("evidence_loop", "LLMConfig", "ConflictLLMConfig"),
    ],
)
def test_an_old_name_still_imports_with_a_deprecation_warning(module: str, old: str, new: str) -> None:
    loaded = importlib.import_module(module)
    with pytest.warns(DeprecationWarning, match=f"{old} is renamed {new}"):
        value = getattr(loaded, old)
    assert value is getattr(loaded, new)
