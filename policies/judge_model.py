"""The sufficiency judge's model: a logistic regression over signals on each corpus's own scale.

    JudgeModel            features, weights, bias, and the threshold for each answer rate it was fitted at
    DEFAULT_JUDGE         the shipped model (``policies/judge_default.json``, fitted by ``evloop calibrate``)

Each feature enters as a z-score against the corpus's held-out scale (``tools.store.calibration``), so
one model serves Chinese and English knowledge bases; the fit and its sets are recorded in the file.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

DEFAULT_FILE = Path(__file__).with_name("judge_default.json")


@dataclass(frozen=True, slots=True)
class JudgeModel:
    """logit = bias + sum(weight * z(feature)); answer when the logit reaches the operating threshold."""

    features: tuple[str, ...]
    weights: tuple[float, ...]
    bias: float
    # (answer rate on the fitting sets' answerable questions, logit threshold that gives it), ascending
    operating: tuple[tuple[float, float], ...]
    fitted_on: tuple[str, ...] = ()

    def logit(self, z: dict[str, float]) -> float:
        return self.bias + sum(w * z.get(f, 0.0) for f, w in zip(self.features, self.weights, strict=True))

    def threshold(self, answer_rate: float) -> float:
        """The logit threshold for a target answer rate, interpolated between the fitted points."""
        points = self.operating
        if answer_rate <= points[0][0]:
            return points[0][1]
        for (r0, t0), (r1, t1) in itertools.pairwise(points):
            if answer_rate <= r1:
                return t0 + (t1 - t0) * (answer_rate - r0) / (r1 - r0) if r1 > r0 else t1
        return points[-1][1]

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def digest(self) -> str:
        return hashlib.sha256(json.dumps(self.as_dict(), sort_keys=True).encode()).hexdigest()

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> JudgeModel:
        features = tuple(str(f) for f in data["features"])
        weights = tuple(float(w) for w in data["weights"])
        operating = tuple(sorted((float(r), float(t)) for r, t in data["operating"]))
        if len(features) != len(weights) or not operating:
            raise ValueError("a judge model needs one weight per feature and at least one operating point")
        if not all(math.isfinite(x) for x in (*weights, float(data["bias"]), *(t for _, t in operating))):
            raise ValueError("a judge model's numbers must be finite")
        return cls(
            features,
            weights,
            float(data["bias"]),
            operating,
            tuple(str(s) for s in data.get("fitted_on", ())),
        )


def load_judge(path: Path) -> JudgeModel:
    """A judge model from a policy file (its ``judge`` object, or the whole file)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return JudgeModel.from_dict(data.get("judge", data))


DEFAULT_JUDGE = load_judge(DEFAULT_FILE)
