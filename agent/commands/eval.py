"""``evloop eval SET_DIR``: ingest an evaluation set into a temporary index, run it, print its scores."""

from __future__ import annotations

import argparse
from pathlib import Path

from agent.commands.common import Subparsers, add_command, progress_bar, want_progress
from agent.commands.session import add_policy_option, policy_from_args
from agent.controller import Controller
from agent.evaluate import answer_all, asker, ingest_set, read_questions, score, temp_index, write_jsonl
from agent.runtime import freeze_heap
from policies.config import MODES, Policy

DESCRIPTION = """\
Evaluate on a set folder in the FORMAT.md shape (corpus.jsonl + questions.jsonl): ingest the corpus
into a temporary index, answer every question, write the results, and print the scores computed by
the `score.py` that sits beside the set folders (answer/refusal/conflict rates, evidence hit rate,
token recall, mean context characters, offset honesty, latency).

Modes (the ablation): seed = the seed units only; window = a fixed ±2-unit neighbourhood;
parent = the whole parent section; adaptive = the full loop (completeness check, directional
sliding, wider retrieval). Several modes are run on the same index and printed side by side."""

EPILOG = """\
examples:
  evloop eval ../shared/eval/tara_zh
  evloop eval ../shared/eval/tara_zh --mode seed --mode window --mode parent --mode adaptive
  evloop eval ../shared/eval/emanual_en --out-dir /tmp/results"""

ROWS = (
    ("correct outcome", "correct_outcome"),
    ("answer rate", "answer_rate"),
    ("refusal rate", "refusal_rate"),
    ("conflict rate", "conflict_rate"),
    ("evidence hit rate", "evidence_hit_rate"),
    ("token recall", "token_recall"),
    ("mean context chars", "mean_context_chars"),
    ("offset honesty", "offset_honesty"),
    ("latency p50 ms", "latency_p50_ms"),
    ("latency p95 ms", "latency_p95_ms"),
)


def register(subparsers: Subparsers) -> None:
    parser = add_command(
        subparsers,
        "eval",
        summary="score the loop on an evaluation set",
        description=DESCRIPTION,
        epilog=EPILOG,
    )
    parser.add_argument(
        "set_dir", type=Path, metavar="SET_DIR", help="folder with corpus.jsonl and questions.jsonl"
    )
    parser.add_argument(
        "--mode",
        action="append",
        choices=MODES,
        dest="modes",
        help="mode to run (repeatable; default adaptive)",
    )
    parser.add_argument("--out-dir", type=Path, default=Path("out/eval"), help="where results files go")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_policy_option(parser)
    parser.set_defaults(run=run)


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.3f}" if value <= 1.0 else f"{value:.1f}"
    return "-" if value is None else str(value)


def run(args: argparse.Namespace) -> int:
    modes = args.modes or ["adaptive"]
    questions = read_questions(args.set_dir / "questions.jsonl")
    scores: dict[str, dict[str, object] | None] = {}
    with temp_index() as tmp:
        store = ingest_set(args.set_dir, Path(tmp) / "index")
        snapshot = store.snapshot()
        freeze_heap()  # the loaded set stays put: the collector need not walk it again
        for mode in modes:
            controller = Controller(policy_from_args(args, Policy(mode=mode)))
            out = args.out_dir / f"{args.set_dir.name}-{mode}.jsonl"
            enabled = want_progress(len(questions), args.no_progress)
            with progress_bar(len(questions), enabled=enabled) as advance:
                write_jsonl(out, answer_all(asker(controller, snapshot), questions, advance))
            scores[mode] = score(args.set_dir, out)
            print(f"{mode}: {len(questions)} questions -> {out}")
        store.close()
    if any(s is None for s in scores.values()):
        print("score.py not found beside the set folder; results written, not scored")
        return 0
    print(f"\nset {args.set_dir.name}")
    print("".ljust(22) + "".join(m.rjust(11) for m in modes))
    for label, key in ROWS:
        print(label.ljust(22) + "".join(_fmt((scores[m] or {}).get(key)).rjust(11) for m in modes))
    return 0
