"""Does self-calibration tell which answer-or-refuse rule suits a knowledge base? (issue 21 §4)

    python benchmarks/measure_rule_choice.py SET_DIR [SET_DIR...] [--seeds 0,1] [--out-dir DIR]

For each evaluation set (FORMAT.md): ingest it as `evloop eval` does (vectors from the embedding cache),
measure its scale (self-calibration), then

- ask self-calibration's pseudo-questions (drawn with each seed; seed 0 is the draw calibration itself
  uses) with their document present (they should be answered) and held out (they should be refused),
  under the lexical rule (no scale) and under the judge (the scale): the share answered when present,
  refused when held out, their mean, and the AUC of each rule's score (the lead window's coverage, the
  judge's log-odds);
- answer every real question under each rule and score both with `score.py`.

Prints one JSON line per set; docs/judge-and-ingest.md holds the table. Costly: run one at a time.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from evidence_loop.agent.doors.cli.common import evaluation_embedder
from evidence_loop.agent.loop.calibrate import SAMPLES, ScaleKeeper, auc
from evidence_loop.agent.loop.controller import Controller
from evidence_loop.agent.tuning.evaluate import (
    Asker,
    answer_all,
    ingest_set,
    read_questions,
    score,
    temp_index,
    write_jsonl,
)
from evidence_loop.policies.config import Policy
from evidence_loop.policies.decision.pseudo import pseudo_questions
from evidence_loop.tools.search.snapshot import Snapshot
from evidence_loop.tools.store.calibration import CorpusScale
from evidence_loop.traces.records.steps import CheckedStep, TraceStep


class _Checked:
    def __init__(self) -> None:
        self.step: CheckedStep | None = None

    def record(self, step: TraceStep) -> None:
        if isinstance(step, CheckedStep):
            self.step = step


def _rates(rows: list[dict[str, Any]], key: str) -> list[float]:
    present = [r for r in rows if r["present"]]
    held = [r for r in rows if not r["present"]]
    answered = sum(r[key] for r in present) / len(present)
    refused = sum(not r[key] for r in held) / len(held)
    return [round(answered, 3), round(refused, 3), round((answered + refused) / 2, 3)]


def separation(
    snapshot: Snapshot, controller: Controller, scale: CorpusScale | None, seed: int
) -> dict[str, Any]:
    """Both rules on the pseudo-questions of ``seed``, each asked present and held out."""
    assert controller.embedder is not None
    drawn = pseudo_questions(snapshot.public_units(), SAMPLES, seed)
    vectors = controller.embedder.queries([q for _, q in drawn])
    rows: list[dict[str, Any]] = []
    for (doc_id, question), vector in zip(drawn, vectors, strict=True):
        for present in (True, False):
            view = snapshot if present else snapshot.hiding([doc_id])
            checked = _Checked()
            judged = controller.ask(view, question, [], recorder=checked, vector=vector, scale=scale)
            lexical = controller.ask(view, question, [], vector=vector, scale=None)
            step = checked.step
            rows.append(
                {
                    "present": present,
                    "lexical": lexical.status == "answered",
                    "judge": judged.status == "answered",
                    "coverage": (step.signals or {}).get("coverage", 0.0) if step else 0.0,
                    "logit": (step.judge or {}).get("logit", -99.0) if step else -99.0,
                }
            )
    labels = [r["present"] for r in rows]
    return {
        "lexical": _rates(rows, "lexical"),
        "judge": _rates(rows, "judge"),
        "auc_coverage": round(auc([r["coverage"] for r in rows], labels), 3),
        "auc_judge": round(auc([r["logit"] for r in rows], labels), 3),
    }


def measure(set_dir: Path, seeds: list[int], out_dir: Path) -> dict[str, Any]:
    embedder = evaluation_embedder(None)
    if embedder is None:
        raise SystemExit("needs an embedder (EVLOOP_EMBEDDER)")
    controller = Controller(Policy(), embedder=embedder)
    with temp_index() as tmp:
        store = ingest_set(set_dir, Path(tmp) / "index", embedder, meter=ScaleKeeper(controller))
        try:
            snapshot, scale = store.snapshot(), store.scale()
            result: dict[str, Any] = {"set": set_dir.name}
            for seed in seeds:
                result[f"seed{seed}"] = separation(snapshot, controller, scale, seed)
            questions = read_questions(set_dir / "questions.jsonl")
            for rule, given in (("judge", scale), ("lexical", None)):
                path = out_dir / f"{set_dir.name}-{rule}.jsonl"
                write_jsonl(path, answer_all(Asker(controller, snapshot, given), questions))
                scores = score(set_dir, path) or {}
                result[f"real_{rule}"] = {
                    k: scores.get(k) for k in ("correct_outcome", "answer_rate", "refusal_rate")
                }
        finally:
            store.close()
    return result


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("sets", type=Path, nargs="+")
    parser.add_argument("--seeds", default="0,1")
    parser.add_argument("--out-dir", type=Path, default=Path("out/rule-choice"))
    args = parser.parse_args(argv)
    seeds = [int(s) for s in args.seeds.split(",")]
    for set_dir in args.sets:
        print(json.dumps(measure(set_dir, seeds, args.out_dir)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
