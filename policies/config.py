"""Every threshold of the loop in one frozen, hashable policy.

The controller reads numbers only from here; a trace records the policy and its hash so a replay
runs under the same rules.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any

from policies.judge_model import DEFAULT_JUDGE, JudgeModel
from policies.presets import PRESETS, Mode, Preset

# Rules added after traces were first recorded, with the value that turns each off: a recorded
# policy without the field ran without the rule, and replays without it.
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
}


@dataclass(frozen=True, slots=True)
class Policy:
    """Thresholds and budgets. Defaults are the shipped policy."""

    mode: Mode = "adaptive"  # the loop's preset (policies.presets): the full loop or an ablation
    # recall (spelling, IDF and BM25 over what the caller may read: see tools.snapshot)
    caller_statistics: bool = True
    seed_k: int = 12
    wider_k: int = 24
    max_recalls: int = 2
    # hybrid recall when the index has unit vectors: the dense_k best units by BM25 and by cosine,
    # fused by reciprocal rank with this constant (tools.dense.rrf)
    dense_recall: bool = True
    dense_k: int = 50
    rrf_constant: int = 60
    # windows and budgets (characters)
    max_windows: int = 6
    lead_windows: int = 2  # the best windows keep their full growth
    runner_budget: int = 200  # window budget for the runners-up after them (0: no runners-up)
    window_budget: int = 4000
    outcome_budget: int = 4500
    max_slides: int = 16
    parent_free_chars: int = 4000
    fixed_radius: int = 2
    # expand first, rerank after: with a rerank endpoint configured (tools.rerank_config), the
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
    answer_type_penalty: float = 0.1  # a window that states no value of the kind the question asks for
    # decision: with vectors and a corpus scale the judge decides (policies.judge), else the coverage rule
    judge: JudgeModel | None = DEFAULT_JUDGE
    answer_rate: float = 0.97  # the operating point: this share of answerable questions answered when fitted
    refusal_bias: float = 0.0  # added to the judge's threshold (log-odds): > 0 refuses more
    min_coverage: float = 0.5
    window_keep_ratio: float = 0.8
    fill_ratio: float = 0.5  # a factoid question also reads windows this close to the best ...
    fill_chars: int = 500  # ... while its evidence is shorter than this (policies.selection.select)
    # conflict check: windows close to the best are read too, so both sides of a disagreement are seen
    conflict_pool_ratio: float = 0.3
    conflict_pool_max: int = 8
    slot_values: bool = True  # also compare the values two sources give for the question's identifier
    # evidence: a look-alike identifier ("QUOKKA000X" for "QUOKKA001X") is another subject
    # (policies.slot_scope), a sentence addressed to an AI system is no evidence (policies.directives)
    rival_ids: bool = True
    screen_directives: bool = True
    # answer
    max_answer_sentences: int = 3

    @property
    def preset(self) -> Preset:
        """What the policy's mode switches on (policies.presets)."""
        return PRESETS[self.mode]

    def as_dict(self) -> dict[str, object]:
        return asdict(self)

    def digest(self) -> str:
        """sha256 of the policy's canonical JSON: what a trace pins."""
        blob = json.dumps(self.as_dict(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()

    def with_overrides(self, pairs: dict[str, str]) -> Policy:
        """A copy with fields set from text (``window_budget=600``); unknown fields and bad values raise."""
        kinds = {f.name: type(getattr(self, f.name)) for f in fields(self) if f.name != "judge"}
        changes: dict[str, object] = {}
        for key, text in pairs.items():
            if key not in kinds:
                raise ValueError(f"unknown policy field {key!r}; known: {', '.join(sorted(kinds))}")
            kind = kinds[key]
            if kind is bool:
                changes[key] = text.strip().lower() in {"1", "true", "yes", "on"}
            else:
                changes[key] = kind(text)
        return replace(self, **changes)  # type: ignore[arg-type]

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> Policy:
        """Rebuild a recorded policy; unknown keys are rejected so a replay never runs on guesses.

        A field the record lacks because its rule came later (``ADDED_LATER``) is read as off.
        """
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown policy fields: {sorted(unknown)}")
        values: dict[str, Any] = {**ADDED_LATER, **data}
        if isinstance(values.get("judge"), dict):
            values["judge"] = JudgeModel.from_dict(values["judge"])
        return cls(**values)


POLICY_ENV = "EVLOOP_POLICY"


def load_policy_file(path: Path, base: Policy | None = None) -> Policy:
    """A policy file (``evloop calibrate --out``): its ``judge`` model and any ``policy`` fields.

    ValueError (with the file named) when it cannot be read or holds unknown fields.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        judge = JudgeModel.from_dict(data["judge"]) if "judge" in data else None
        fields_ = {str(k): str(v) for k, v in dict(data.get("policy", {})).items()}
        policy = (base or Policy()).with_overrides(fields_)
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"{path}: not a usable policy file ({exc})") from None
    return replace(policy, judge=judge) if judge is not None else policy
