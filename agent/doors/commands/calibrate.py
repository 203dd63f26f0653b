"""``evloop calibrate``: fit the sufficiency judge on labelled sets, or measure an index's own scale."""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from evidence_loop.agent.doors.cli.common import (
    Subparsers,
    add_command,
    add_embed_cache_option,
    add_index_option,
    configured_embedder,
    evaluation_embedder,
    resolve_location,
)
from evidence_loop.agent.doors.commands.calibrate_feedback import add_feedback_options, run_feedback
from evidence_loop.agent.doors.commands.progress import Progress
from evidence_loop.agent.doors.commands.session import add_policy_option, policy_from_args, scale_keeper
from evidence_loop.agent.loop.calibrate import (
    Row,
    ScaleKeeper,
    auc,
    fit_judge,
    labelled_rows,
)
from evidence_loop.agent.loop.controller import Controller
from evidence_loop.agent.tuning.evaluate import ingest_set, read_questions
from evidence_loop.policies.config import Policy
from evidence_loop.policies.judge_model import JudgeModel
from evidence_loop.tools.errors import InputError
from evidence_loop.tools.models.embedding import Embedder
from evidence_loop.tools.store.location import open_store

DESCRIPTION = """\
Calibrate the answer-or-refuse decision (the sufficiency judge, see docs/models.md).

With SET_DIR folders (each a corpus.jsonl, one document a line, and a questions.jsonl whose
questions say "expect": "answer" or "refuse", as `evloop eval` reads them), fit
the judge on their labels: each set is ingested into a temporary index, measures its own scale
(self-calibration), and every question's signals are read; a logistic regression over the scaled
signals, each set weighing alike, is written to --out with its threshold for each answer rate.
Load it with --policy-file FILE or EVLOOP_POLICY=FILE; a run's trace pins its hash.

With --feedback, fit the judge on the runs reviewers marked (evloop feedback list) instead:
the signals each reviewed run's trace recorded, nothing asked again. It prints the curve of the
fit's cross-validated answer rate against refusal rate (with 95% intervals) and correct outcomes
beside what the current policy did on the same runs, refuses to fit on too few reviews of either
kind, and says which point it chose and why: without --answer-rate, the current policy is kept
(nothing written) unless a fit decides more reviewed runs right by more than chance would. It
writes the policy only with --out (serve it with `evloop serve --policy-file FILE`).

With --self, measure the index's own scale now (no labels): pseudo-questions drawn from its
documents are asked with their document hidden. Ingest does this by itself when the corpus is new
or has grown or shrunk by a quarter; --self forces it. Needs an embedder (EVLOOP_EMBEDDER)."""

EPILOG = """\
examples:
  evloop calibrate evals/help-centre-zh evals/help-centre-en --out policy.json
  evloop eval evals/held-out --policy-file policy.json
  evloop calibrate --self --index .evloop
  evloop calibrate --feedback --since 2026-11-01 --index .evloop --out policy.json"""


def register(subparsers: Subparsers) -> None:
    parser = add_command(
        subparsers,
        "calibrate",
        summary="fit the answer-or-refuse judge, or measure an index's scale",
        description=DESCRIPTION,
        epilog=EPILOG,
    )
    parser.add_argument("set_dirs", type=Path, nargs="*", metavar="SET_DIR", help="labelled evaluation sets")
    parser.add_argument("--out", type=Path, metavar="FILE", default=None, help="where the fitted policy goes")
    parser.add_argument("--self", dest="self_", action="store_true", help="measure the index's own scale")
    parser.add_argument("--l2", type=float, default=1.0, help="ridge penalty of the fit (default: 1.0)")
    add_index_option(parser)
    add_embed_cache_option(parser)
    add_policy_option(parser)
    add_feedback_options(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.feedback:
        return run_feedback(args)
    embedder = configured_embedder() if args.self_ else evaluation_embedder(args.embed_cache)
    if embedder is None:
        raise InputError("calibration needs an embedder; EVLOOP_EMBEDDER=none turns the judge off")
    policy = policy_from_args(args)
    if args.self_:
        if args.set_dirs:
            raise InputError("--self measures an index; give SET_DIR folders or --self, not both")
        index = resolve_location(args)
        with Progress("calibrate") as progress, open_store(index, embedder=embedder) as store:
            keeper = scale_keeper(args, embedder, progress=progress.stage("measuring the scale", "question"))
            scale = store.measure_scale(keeper, force=True)
        if scale is None:
            raise InputError(f"{index} has too few sentences everyone may read to measure a scale")
        print(
            f"measured the scale of {index} from {scale.samples} pseudo-questions "
            f"(generation {scale.generation})"
        )
        return 0
    if not args.set_dirs or args.out is None:
        raise InputError("give one or more SET_DIR folders and --out FILE (or --self)")
    with Progress("calibrate") as progress:
        rows = {d.name: _set_rows(d, policy, embedder, progress) for d in args.set_dirs}
    model = fit_judge(rows, l2=args.l2)
    report = {name: _report(model, r, policy) for name, r in rows.items()}
    tmp = args.out.with_suffix(args.out.suffix + ".part")
    tmp.write_text(
        json.dumps({"judge": model.as_dict(), "report": report}, indent=1) + "\n", encoding="utf-8"
    )
    tmp.replace(args.out)
    print(f"fitted on {', '.join(rows)} -> {args.out}")
    print("set".ljust(22) + "questions".rjust(10) + "auc".rjust(8) + "answer".rjust(8) + "refusal".rjust(9))
    for name, line in report.items():
        print(
            name.ljust(22)
            + f"{line['questions']:>10}{line['auc']:>8.3f}{line['answer']:>8.3f}{line['refusal']:>9.3f}"
        )
    return 0


def _set_rows(set_dir: Path, policy: Policy, embedder: Embedder, progress: Progress) -> list[Row]:
    questions = read_questions(set_dir / "questions.jsonl")
    name = set_dir.name
    with tempfile.TemporaryDirectory(prefix="evloop-calibrate-") as tmp:
        controller = Controller(policy, embedder=embedder)
        keeper = ScaleKeeper(controller, progress.stage(f"{name}: measuring the scale", "question"))
        embedding = progress.stage(f"{name}: embedding", "unit")
        store = ingest_set(set_dir, Path(tmp) / "index", embedder, embedding, meter=keeper)
        try:
            scale = store.scale()
            if scale is None:
                raise InputError(f"{set_dir}: too few sentences to measure the corpus's scale")
            asking = progress.stage(f"{name}: asking", "question")
            return labelled_rows(store.snapshot(), controller, questions, scale, asking)
        finally:
            store.close()


def _report(model: JudgeModel, rows: list[Row], policy: Policy) -> dict[str, float | int]:
    """How the fitted judge separates one set, and what it answers at the policy's operating point."""
    threshold = model.threshold(policy.answer_rate) + policy.refusal_bias
    logits = [model.logit(z) for z, _ in rows]
    labels = [label for _, label in rows]
    answerable = [lg for lg, y in zip(logits, labels, strict=True) if y]
    refusable = [lg for lg, y in zip(logits, labels, strict=True) if not y]
    return {
        "questions": len(rows),
        "auc": round(auc(logits, labels), 4),
        "answer": round(sum(lg >= threshold for lg in answerable) / max(len(answerable), 1), 4),
        "refusal": round(sum(lg < threshold for lg in refusable) / max(len(refusable), 1), 4),
        "features": len(model.features),
    }
